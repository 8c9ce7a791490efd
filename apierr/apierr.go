// Package apierr holds the classes of failure the producer offsets registry
// answers with, and the one mapping from a class to the Fluss error code
// and message a client gets (fluss.go).
//
// The registry returns classes, never codes: an *Error names its class
// (ErrInvalidProducerID, ErrInvalidOffsets, ErrBucketOutOfRange,
// ErrSnapshotTooLarge, ErrSnapshotBroken, ErrKeptChanging, or nil for a
// store failure, whose storeerr class the cause carries) and the facts a
// message needs (operation, producer id, path, counts) as fields. Asked
// for a *flusserr.Error with errors.As or flusserr.From, an *Error answers
// with its mapping, so every layer that hands errors to the wire gets the
// same code and text. The package does no I/O.
package apierr

import (
	"errors"
	"fmt"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
)

// Classes of the registry's own refusals and failures. Store failures keep
// the classes of package storeerr.
var (
	// ErrInvalidProducerID: the producer id breaks Fluss's name rules
	// (Detail says which). Fluss code 63.
	ErrInvalidProducerID = errors.New("invalid producer id")
	// ErrInvalidOffsets: the offsets of a register break an input rule
	// (Detail says which). Fluss code -1, as a coordinator answers.
	ErrInvalidOffsets = errors.New("invalid producer offsets")
	// ErrBucketOutOfRange: a bucket id above the maximum Fluss allows
	// (TableID, BucketID, MaxBucketID). Fluss code 49.
	ErrBucketOutOfRange = errors.New("bucket id out of range")
	// ErrSnapshotTooLarge: the planned znode of Tables tables is larger
	// than ZooKeeper accepts; nothing was written. Fluss code 13.
	ErrSnapshotTooLarge = errors.New("snapshot too large")
	// ErrSnapshotBroken: the znode names an offsets file (Path) that does
	// not exist. Fluss code -1.
	ErrSnapshotBroken = errors.New("snapshot broken")
	// ErrKeptChanging: every attempt lost a race with another writer.
	// Fluss code 26, retriable.
	ErrKeptChanging = errors.New("snapshot kept changing")
)

// Error is a failure of one registry operation.
type Error struct {
	// Class is one of the classes above, or nil for a store failure: then
	// the storeerr class of Err governs.
	Class error
	// Op is the operation: "register", "get" or "delete".
	Op string
	// ProducerID is the producer the operation was for ("null" for an
	// absent id, as Fluss prints it).
	ProducerID string
	// Detail is the rule an input broke (ErrInvalidProducerID,
	// ErrInvalidOffsets).
	Detail string
	// Path is the missing offsets file (ErrSnapshotBroken).
	Path string
	// Tables is how many tables the refused snapshot has
	// (ErrSnapshotTooLarge).
	Tables int
	// TableID, BucketID and MaxBucketID locate a bucket id out of range.
	TableID     int64
	BucketID    int32
	MaxBucketID int32
	// Err is the cause, or nil.
	Err error
}

// Error is the Fluss answer's text for the registry's classes and, for a
// store failure, "Failed to <op> producer offsets for producer <id>: " and
// the cause.
func (e *Error) Error() string {
	if e.Class == nil {
		return fmt.Sprintf("%s: %v", prefix(e.Op, e.ProducerID), e.Err)
	}
	return e.Fluss().Error()
}

// Unwrap returns the cause and the class, so errors.Is matches both.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Err != nil {
		out = append(out, e.Err)
	}
	if e.Class != nil {
		out = append(out, e.Class)
	}
	return out
}

// As answers a request for a *flusserr.Error with the error's Fluss answer
// (see Fluss).
func (e *Error) As(target any) bool {
	if p, ok := target.(**flusserr.Error); ok {
		*p = e.Fluss()
		return true
	}
	return false
}
