package zk

import (
	"context"
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
