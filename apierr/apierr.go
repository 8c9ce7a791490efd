// Package apierr holds the classes of failure the sidecar answers with, and
// the one mapping from a class to the Fluss error code and message a client
// gets (fluss.go).
//
// The registry returns classes, never codes: an *Error names its class
// (ErrInvalidProducerID, ErrInvalidOffsets, ErrBucketOutOfRange,
// ErrSnapshotTooLarge, ErrSnapshotBroken, ErrKeptChanging, or nil for a
// store failure, whose storeerr class the cause carries) and the facts a
// message needs (operation, producer id, path, counts) as fields. The
// layers around it name their refusals the same way: authentication
// (ErrNotAuthenticated, ErrProtocolMismatch), authorization
// (ErrNotAuthorized, ErrUnknownTable) and proxy mode (ErrUpstreamGone,
// ErrProxyFailed), and so does the protocol layer, package wire
// (ErrMalformed, ErrUnreadableFrame, ErrNotServed, ErrServedElsewhere,
// ErrVersionUnsupported). A control of the embedded test server answers
// with a code its caller chose (ErrInjected). Asked
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

	// ErrNotAuthenticated: a login failed or a request came before one
	// (Detail is Fluss's text for the case). Fluss code 46.
	ErrNotAuthenticated = errors.New("not authenticated")
	// ErrProtocolMismatch: the client asked for an authentication
	// protocol the listener does not speak (ServerProtocol,
	// ClientProtocol). Fluss code 46.
	ErrProtocolMismatch = errors.New("authentication protocol mismatch")
	// ErrNotAuthorized: the ACLs deny Principal the Operation on Resource.
	// Fluss code 48.
	ErrNotAuthorized = errors.New("not authorized")
	// ErrUnknownTable: Server does not know table TableID. Fluss code 21.
	ErrUnknownTable = errors.New("unknown table")
	// ErrUpstreamGone: proxy mode lost, or never had, the connection to the
	// coordinator a request needs (Detail says how). Fluss code 1,
	// retriable.
	ErrUpstreamGone = errors.New("upstream connection gone")
	// ErrProxyFailed: proxy mode could not pass the coordinator's answer
	// on (Detail says why). Fluss code -1.
	ErrProxyFailed = errors.New("proxy failed")

	// ErrMalformed: a frame or a request body whose bytes cannot be read
	// as what they claim to be (Detail says where). Fluss code 3.
	ErrMalformed = errors.New("malformed request")
	// ErrUnreadableFrame: a frame that cannot be read at all, such as one
	// whose length is negative or over the limit (Detail says how). Fluss
	// code -1.
	ErrUnreadableFrame = errors.New("unreadable frame")
	// ErrNotServed: no server type serves api key APIKey (at APIVersion).
	// Fluss code 2.
	ErrNotServed = errors.New("api key not served")
	// ErrServedElsewhere: another server type serves the key (Detail names
	// the key and where it is served). Fluss code 2.
	ErrServedElsewhere = errors.New("api key served elsewhere")
	// ErrVersionUnsupported: API is served, but not at APIVersion (the
	// range served is MinVersion to MaxVersion). Fluss code 2.
	ErrVersionUnsupported = errors.New("api version not supported")
	// ErrNotLeader: a coordinator that does not lead its cluster refused
	// the request before running it (Detail is its text): what a standby
	// coordinator answers, and the one answer that proves a request was
	// not executed. Fluss code 65.
	ErrNotLeader = errors.New("not the coordinator leader")
	// ErrInjected: a test server was told to answer with Code and Detail.
	ErrInjected = errors.New("injected failure")
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
	// ServerProtocol and ClientProtocol are the two sides of
	// ErrProtocolMismatch.
	ServerProtocol, ClientProtocol string
	// Principal, Operation and Resource are a denial's parties, as Fluss
	// prints them (ErrNotAuthorized).
	Principal, Operation, Resource string
	// Server names this server (ErrUnknownTable).
	Server string
	// TableID (ErrUnknownTable, ErrBucketOutOfRange), BucketID and
	// MaxBucketID locate what a request named.
	TableID     int64
	BucketID    int32
	MaxBucketID int32
	// API (as Fluss prints it, with its key), APIKey and APIVersion name
	// what a request asked for; MinVersion and MaxVersion are the range
	// served (ErrNotServed, ErrVersionUnsupported).
	API                    string
	APIKey                 int32
	APIVersion             int16
	MinVersion, MaxVersion int16
	// Code is the code an ErrInjected failure answers with.
	Code flusserr.Code
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
