package zk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// TestErrorClasses pins the storeerr class and outcome of each kind of
// ZooKeeper failure.
func TestErrorClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		op      string
		err     error
		class   error
		unknown bool
	}{
		{"create", gozk.ErrConnectionClosed, storeerr.ErrUnavailable, true},
		{"create", gozk.ErrSessionExpired, storeerr.ErrUnavailable, true},
		{"create", gozk.ErrNoServer, storeerr.ErrUnavailable, false},
		{"create", context.DeadlineExceeded, storeerr.ErrTimeout, true},
		{"create", context.Canceled, storeerr.ErrUnavailable, true},
		{"create", fmt.Errorf("%w: %w", errNotSent, context.Canceled), storeerr.ErrUnavailable, false},
		{"get", gozk.ErrConnectionClosed, storeerr.ErrUnavailable, false},
		{"set", gozk.ErrNoAuth, storeerr.ErrPermission, false},
		// go-zookeeper hands a failed socket write to the request.
		{"create", &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}, storeerr.ErrUnavailable, true},
		{"get", &net.OpError{Op: "write", Net: "tcp", Err: syscall.ECONNRESET}, storeerr.ErrUnavailable, false},
		{"set", os.ErrDeadlineExceeded, storeerr.ErrUnavailable, true},
		{"delete", io.EOF, storeerr.ErrUnavailable, true},
		{"create", gozk.ErrNodeExists, nil, false},
		{"delete", gozk.ErrBadVersion, nil, false},
	}
	for _, c := range cases {
		err := classify(c.op, "/p", c.err)
		if got := storeerr.Classify(err); got != c.class {
			t.Errorf("%s %v: class %v, want %v", c.op, c.err, got, c.class)
		}
		if got := storeerr.OutcomeUnknown(err); got != c.unknown {
			t.Errorf("%s %v: unknown %v, want %v", c.op, c.err, got, c.unknown)
		}
	}
}

// TestOneClass: an *OpError has one storeerr class; this package's names
// are views of it and keep their texts.
func TestOneClass(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err   error
		class error
		name  error
		text  string
	}{
		{gozk.ErrNoNode, storeerr.ErrNotFound, ErrNoNode, "zk get /p: znode does not exist: zk: node does not exist"},
		{gozk.ErrNodeExists, storeerr.ErrExists, ErrNodeExists, "zk get /p: znode already exists: zk: node already exists"},
		{gozk.ErrBadVersion, storeerr.ErrConflict, ErrBadVersion, "zk get /p: znode version mismatch: zk: version conflict"},
		{context.DeadlineExceeded, storeerr.ErrTimeout, ErrUnavailable, "zk get /p: ZooKeeper unavailable: context deadline exceeded"},
		{gozk.ErrConnectionClosed, storeerr.ErrUnavailable, ErrUnavailable, "zk get /p: ZooKeeper unavailable: zk: connection closed"},
		{gozk.ErrNoAuth, storeerr.ErrPermission, nil, "zk get /p: zk: not authenticated"},
	}
	for _, c := range cases {
		err := classify("get", "/p", c.err)
		var oe *OpError
		if !errors.As(err, &oe) || oe.Class != c.class {
			t.Errorf("%v: class %v, want %v", c.err, oe.Class, c.class)
		}
		if !errors.Is(err, c.class) || (c.name != nil && !errors.Is(err, c.name)) {
			t.Errorf("%v: does not match %v and %v", c.err, c.class, c.name)
		}
		if err.Error() != c.text {
			t.Errorf("%v: text %q, want %q", c.err, err.Error(), c.text)
		}
	}
	if err := classify("get", "/p", context.DeadlineExceeded); errors.Is(err, storeerr.ErrUnavailable) {
		t.Error("a timeout matches storeerr.ErrUnavailable: one class only")
	}
}
