package zk

import (
	"context"
	"errors"

	gozk "github.com/go-zookeeper/zk"
)

// Error classes. Every error a Client or ProducerStore method returns for a
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
}

func (e *OpError) Error() string {
	msg := "zk " + e.Op + " " + e.Path + ": "
	if e.Class != nil {
		msg += e.Class.Error() + ": "
	}
	return msg + e.Err.Error()
}

// Unwrap returns the class and the cause, so errors.Is matches both.
func (e *OpError) Unwrap() []error {
	if e.Class == nil {
		return []error{e.Err}
	}
	return []error{e.Class, e.Err}
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
	return !errors.Is(e.Err, gozk.ErrNoServer)
}

// classify wraps a go-zookeeper or context error; nil stays nil.
func classify(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var class error
	switch {
	case errors.Is(err, gozk.ErrNoNode):
		class = ErrNoNode
	case errors.Is(err, gozk.ErrNodeExists):
		class = ErrNodeExists
	case errors.Is(err, gozk.ErrBadVersion):
		class = ErrBadVersion
	case errors.Is(err, gozk.ErrConnectionClosed),
		errors.Is(err, gozk.ErrSessionExpired),
		errors.Is(err, gozk.ErrNoServer),
		errors.Is(err, gozk.ErrClosing),
		errors.Is(err, gozk.ErrSessionMoved),
		errors.Is(err, errClientClosed),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, context.Canceled):
		class = ErrUnavailable
	}
	return &OpError{Op: op, Path: path, Class: class, Err: err}
}

// errClientClosed is the cause of ErrUnavailable after Close.
var errClientClosed = errors.New("zk client closed")
