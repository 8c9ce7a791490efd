// Package storeerr names the classes of storage failure that the producer
// offsets registry must tell apart, whatever store raised them (ZooKeeper,
// remote storage, the in-memory store, a fault-injecting store):
//
//   - whether a write that failed may nevertheless have been applied
//     (ErrOutcomeUnknown), which decides whether its files may be removed;
//   - whether retrying can help (ErrUnavailable, ErrTimeout, ErrNoSpace) or
//     not (ErrPermission, ErrTooLarge, ErrCorrupt), which decides the Fluss
//     error code a client gets and whether the sidecar retries at all;
//   - what a store answered when the answer is "no" rather than a failure
//     (ErrNotFound, ErrExists, ErrConflict, ErrOutsidePath): the ZooKeeper
//     client's NoNode, NodeExists and BadVersion and the file stores'
//     missing file and refused path are these classes.
//
// Stores attach classes by wrapping (errors.Is matches them); Classify finds
// the failure class that governs an error. A store that wants its own name
// and text for a class (zk.ErrNoNode, storage.ErrNotFound) makes it with
// Named. The package does no I/O.
package storeerr

import (
	"context"
	"errors"
	"fmt"
)

// Classes. A store error matches at most one of the first ten;
// ErrOutcomeUnknown can accompany any of them.
var (
	// ErrUnavailable: the store could not be reached or lost the session
	// (connection loss, session expiry, throttling, a 5xx answer). Transient:
	// a later attempt can succeed.
	ErrUnavailable = errors.New("storage unavailable")
	// ErrTimeout: the operation ran out of time. Transient.
	ErrTimeout = errors.New("storage operation timed out")
	// ErrNoSpace: the store is full (no space left, quota exceeded). It can
	// succeed later, once space is freed, but not within one request, so
	// the sidecar does not retry it.
	ErrNoSpace = errors.New("storage is full")
	// ErrPermission: the store refused access (permission denied, read-only
	// file system, a ZooKeeper ACL). Permanent until an operator acts.
	ErrPermission = errors.New("storage refused access")
	// ErrTooLarge: the data exceeds what the store accepts (a znode larger
	// than ZooKeeper's jute.maxbuffer). Permanent for this request.
	ErrTooLarge = errors.New("too large for storage")
	// ErrCorrupt: stored data cannot be decoded (a znode or offsets file
	// that is not valid Fluss JSON). Permanent until repaired.
	ErrCorrupt = errors.New("stored data is corrupt")

	// ErrNotFound: what was asked for does not exist (a znode, an offsets
	// file).
	ErrNotFound = errors.New("not found")
	// ErrExists: a create found what it would create already there.
	ErrExists = errors.New("already exists")
	// ErrConflict: a conditional write found another version than the one
	// it was conditioned on.
	ErrConflict = errors.New("version conflict")
	// ErrOutsidePath: the store refuses a path outside its own tree.
	ErrOutsidePath = errors.New("path outside the store")

	// ErrOutcomeUnknown marks a failed write that may still have been, or
	// may later be, applied: the request was sent and no answer came
	// (connection lost, context ended). Its caller must settle the outcome
	// by reading, and must not undo anything the write may depend on.
	ErrOutcomeUnknown = errors.New("outcome unknown")
)

// Class is a class: one of the sentinel errors above, or nil for a failure
// that has no class (a bug, an unexpected answer).
type Class = error

// Named returns a sentinel of class with its own text: errors.Is matches it
// and class. Stores use it to keep the names and texts their callers and
// logs know (zk.ErrNoNode is Named(ErrNotFound, "znode does not exist")).
func Named(class Class, text string) error { return &named{class: class, text: text} }

type named struct {
	class error
	text  string
}

func (n *named) Error() string { return n.text }
func (n *named) Unwrap() error { return n.class }

var classes = []error{ErrTimeout, ErrUnavailable, ErrNoSpace, ErrPermission, ErrTooLarge, ErrCorrupt}

// Classify returns the failure class of err: the first of ErrTimeout,
// ErrUnavailable, ErrNoSpace, ErrPermission, ErrTooLarge, ErrCorrupt that
// err matches, or nil. The answer classes (ErrNotFound, ErrExists,
// ErrConflict, ErrOutsidePath) are not failures of the store and are
// matched with errors.Is.
func Classify(err error) Class {
	if err == nil {
		return nil
	}
	for _, c := range classes {
		if errors.Is(err, c) {
			return c
		}
	}
	return nil
}

// Transient reports whether an immediate retry of the failed operation can
// succeed: ErrUnavailable and ErrTimeout. A full store is not transient in
// this sense.
func Transient(err error) bool {
	c := Classify(err)
	return c == ErrUnavailable || c == ErrTimeout
}

// ContextClass returns the class of a call given up because its context
// ended, as the ZooKeeper client classifies it: ErrTimeout when err matches
// context.DeadlineExceeded, ErrUnavailable when it matches
// context.Canceled, nil otherwise. Every store reports an ended context
// with this class, whether it noticed before sending anything or while
// waiting for an answer.
func ContextClass(err error) Class {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ErrTimeout
	case errors.Is(err, context.Canceled):
		return ErrUnavailable
	}
	return nil
}

// OutcomeUnknown reports whether err says that a write may have been
// applied despite failing.
func OutcomeUnknown(err error) bool { return errors.Is(err, ErrOutcomeUnknown) }

// Error is a failure with classes attached. Stores use it when the
// underlying error carries no class of its own.
type Error struct {
	// Class is one of the class sentinels, or nil.
	Class error
	// Unknown is true when the outcome of a write is unknown.
	Unknown bool
	Err     error
}

// New wraps err with class (which may be nil) and, when unknown is true,
// ErrOutcomeUnknown. A nil err stays nil.
func New(class error, unknown bool, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Class: class, Unknown: unknown, Err: err}
}

func (e *Error) Error() string {
	if e.Unknown {
		return fmt.Sprintf("%v (%s)", e.Err, ErrOutcomeUnknown)
	}
	return e.Err.Error()
}

// Unwrap returns the cause and the classes, so errors.Is matches all.
func (e *Error) Unwrap() []error {
	out := []error{e.Err}
	if e.Class != nil {
		out = append(out, e.Class)
	}
	if e.Unknown {
		out = append(out, ErrOutcomeUnknown)
	}
	return out
}
