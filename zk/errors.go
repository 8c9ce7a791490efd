package zk

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// Error classes. Every error a Client method returns for a failed ZooKeeper
// call is an *OpError with one storeerr class; errors.Is tells that class,
// the names below, and the underlying go-zookeeper or context error.
var (
	// ErrNoNode: the znode (or, for Create, a parent) does not exist. It is
	// of class storeerr.ErrNotFound.
	ErrNoNode = storeerr.Named(storeerr.ErrNotFound, "znode does not exist")
	// ErrNodeExists: Create found the znode already there. It is of class
	// storeerr.ErrExists.
	ErrNodeExists = storeerr.Named(storeerr.ErrExists, "znode already exists")
	// ErrBadVersion: the expected data version did not match. It is of
	// class storeerr.ErrConflict.
	ErrBadVersion = storeerr.Named(storeerr.ErrConflict, "znode version mismatch")
	// ErrUnavailable: ZooKeeper could not be reached in time: connection
	// lost or closed, no server reachable, session expired, the client is
	// closed, or the context ended first. It is this package's name for the
	// two transient classes: an *OpError of class storeerr.ErrUnavailable or
	// storeerr.ErrTimeout matches it. The outcome of a write that fails
	// this way may be unknown (see OpError.MaybeApplied).
	ErrUnavailable = errors.New("ZooKeeper unavailable")
)

// OpError describes a failed ZooKeeper call.
type OpError struct {
	Op   string // "get", "create", "delete", …
	Path string // full znode path, root included
	// Class is the failure's storeerr class: ErrNotFound, ErrExists,
	// ErrConflict, ErrTimeout, ErrUnavailable, ErrPermission, ErrTooLarge,
	// or nil for other failures (not empty, invalid path, …).
	Class error
	Err   error // the go-zookeeper or context error
}

func (e *OpError) Error() string {
	msg := "zk " + e.Op + " " + e.Path + ": "
	if n := e.name(); n != nil {
		msg += n.Error() + ": "
	}
	return msg + e.Err.Error()
}

// name is this package's sentinel for the class, or nil when it has none.
func (e *OpError) name() error {
	switch e.Class {
	case storeerr.ErrNotFound:
		return ErrNoNode
	case storeerr.ErrExists:
		return ErrNodeExists
	case storeerr.ErrConflict:
		return ErrBadVersion
	case storeerr.ErrUnavailable, storeerr.ErrTimeout:
		return ErrUnavailable
	}
	return nil
}

// Unwrap returns the cause, the class, its name here and, for a write that
// may have been applied, storeerr.ErrOutcomeUnknown, so errors.Is matches
// all of them.
func (e *OpError) Unwrap() []error {
	out := []error{e.Err}
	if e.Class != nil {
		out = append(out, e.Class)
	}
	if n := e.name(); n != nil {
		out = append(out, n)
	}
	if e.isWrite() && e.MaybeApplied() {
		out = append(out, storeerr.ErrOutcomeUnknown)
	}
	return out
}

func (e *OpError) isWrite() bool {
	switch e.Op {
	case "create", "set", "delete", "multi":
		return true
	}
	return false
}

// MaybeApplied reports whether a write that failed with this error may still
// have been (or later be) applied by the server: true when the request may
// have been sent before the connection failed or the context ended, false
// when it is known not to have been sent (no server reachable) or was
// answered by the server.
func (e *OpError) MaybeApplied() bool {
	if e.Class != storeerr.ErrUnavailable && e.Class != storeerr.ErrTimeout {
		return false
	}
	return !errors.Is(e.Err, gozk.ErrNoServer) && !errors.Is(e.Err, errNotSent)
}

// errRequiresSASL is the cause of a request refused because the server
// requires SASL authentication and the session has none: ZooKeeper answers
// SESSIONCLOSEDREQUIRESASLAUTH (-124) and closes the session.
var errRequiresSASL = errors.New("ZooKeeper requires SASL authentication and closed the session, " +
	"which has none: give the client a JAAS Client section (README \"Secured ZooKeeper\")")

// requiresSASL recognises the -124 answer. go-zookeeper has no error value
// for it, only the text of an unknown code.
func requiresSASL(err error) bool {
	return isGozkUnknownCode(err, codeSessionClosedSASL)
}

// classify wraps a go-zookeeper or context error; nil stays nil.
func classify(op, path string, err error) error {
	if err == nil {
		return nil
	}
	if requiresSASL(err) {
		err = errRequiresSASL
	}
	return &OpError{Op: op, Path: path, Class: classOf(err), Err: err}
}

// lostConnection reports a call that failed for want of a usable session:
// the connection was lost or closed, no server could be reached, the
// session expired or moved, the client was closed, or the caller gave up.
func lostConnection(err error) bool {
	for _, target := range []error{
		gozk.ErrConnectionClosed, gozk.ErrSessionExpired, gozk.ErrNoServer,
		gozk.ErrClosing, gozk.ErrSessionMoved, errClientClosed, context.Canceled,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return isNetError(err)
}

// classOf maps a go-zookeeper or context error to its storeerr class.
func classOf(err error) error {
	switch {
	case errors.Is(err, gozk.ErrNoNode):
		return storeerr.ErrNotFound
	case errors.Is(err, gozk.ErrNodeExists):
		return storeerr.ErrExists
	case errors.Is(err, gozk.ErrBadVersion):
		return storeerr.ErrConflict
	}
	if c := storeerr.ContextClass(err); c != nil {
		return c
	}
	switch {
	case lostConnection(err):
		return storeerr.ErrUnavailable
	case errors.Is(err, gozk.ErrNoAuth), errors.Is(err, gozk.ErrAuthFailed), errors.Is(err, gozk.ErrInvalidACL),
		errors.Is(err, errRequiresSASL):
		return storeerr.ErrPermission
	case errors.Is(err, errTooLarge):
		return storeerr.ErrTooLarge
	}
	return nil
}

// isNetError reports a failure of the connection itself, which go-zookeeper
// hands to the request whose send failed ("write: broken pipe" when the
// server went away): the request may have reached the server, in part or
// whole, so a write failing so has an unknown outcome.
func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// errTooLarge is the cause of a write refused because its data exceeds
// Client.MaxWriteBytes.
var errTooLarge = errors.New("znode data exceeds the ZooKeeper buffer limit")

// errNotSent wraps the cause of a call refused before its request was sent.
var errNotSent = errors.New("request not sent")

// errClientClosed is the cause of ErrUnavailable after Close.
var errClientClosed = errors.New("zk client closed")
