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

// Error classes. Every error a Client method returns for a
// failed ZooKeeper call is an *OpError; errors.Is tells its class and also
// matches the underlying go-zookeeper or context error.
var (
	// ErrNoNode: the znode (or, for Create, a parent) does not exist.
	ErrNoNode = errors.New("znode does not exist")
	// ErrNodeExists: Create found the znode already there.
	ErrNodeExists = errors.New("znode already exists")
	// ErrBadVersion: the expected data version did not match.
	ErrBadVersion = errors.New("znode version mismatch")
	// ErrUnavailable: ZooKeeper could not be reached in time: connection
	// lost or closed, no server reachable, session expired, the client is
	// closed, or the context ended first. The outcome of a write that fails
	// this way may be unknown (see OpError.MaybeApplied).
	ErrUnavailable = errors.New("ZooKeeper unavailable")
)

// OpError describes a failed ZooKeeper call.
type OpError struct {
	Op   string // "get", "create", "delete", …
	Path string // full znode path, root included
	// Class is one of ErrNoNode, ErrNodeExists, ErrBadVersion,
	// ErrUnavailable, or nil for other failures (ACL, not empty, …).
	Class error
	Err   error // the go-zookeeper or context error
	// Store is the storeerr class of the failure, or nil.
	Store error
}

func (e *OpError) Error() string {
	msg := "zk " + e.Op + " " + e.Path + ": "
	if e.Class != nil {
		msg += e.Class.Error() + ": "
	}
	return msg + e.Err.Error()
}

// Unwrap returns the class, the cause and the storeerr classes (including
// storeerr.ErrOutcomeUnknown for a write that may have been applied), so
// errors.Is matches all of them.
func (e *OpError) Unwrap() []error {
	out := []error{e.Err}
	if e.Class != nil {
		out = append(out, e.Class)
	}
	if e.Store != nil {
		out = append(out, e.Store)
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
	if e.Class != ErrUnavailable {
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
	var class error
	switch {
	case errors.Is(err, gozk.ErrNoNode):
		class = ErrNoNode
	case errors.Is(err, gozk.ErrNodeExists):
		class = ErrNodeExists
	case errors.Is(err, gozk.ErrBadVersion):
		class = ErrBadVersion
	case errors.Is(err, context.DeadlineExceeded), lostConnection(err):
		class = ErrUnavailable
	}
	return &OpError{Op: op, Path: path, Class: class, Err: err, Store: storeClass(err)}
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

// storeClass maps a go-zookeeper or context error to its storeerr class.
func storeClass(err error) error {
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
