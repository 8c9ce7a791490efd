package hdfsblob

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"gocloud.dev/gcerrors"
)

// remoteErr is an exception a NameNode answered with, as the client
// reports it.
type remoteErr struct{ exception, message string }

func (e remoteErr) Error() string     { return "call failed (" + e.exception + ")" }
func (e remoteErr) Method() string    { return "create" }
func (e remoteErr) Desc() string      { return "ERROR_APPLICATION" }
func (e remoteErr) Exception() string { return e.exception }
func (e remoteErr) Message() string   { return e.message }

// TestClassify maps HDFS's exceptions and connection failures to the
// classes the remote store answers with.
func TestClassify(t *testing.T) {
	wrap := func(err error) error { return &os.PathError{Op: "create", Path: "/x", Err: err} }
	cases := []struct {
		name string
		err  error
		is   error
		code gcerrors.ErrorCode
	}{
		{"space quota", wrap(remoteErr{"org.apache.hadoop.hdfs.protocol.DSQuotaExceededException", "The DiskSpace quota of /x is exceeded\n\tat ..."}), syscall.EDQUOT, gcerrors.ResourceExhausted},
		{"namespace quota", remoteErr{"org.apache.hadoop.hdfs.protocol.NSQuotaExceededException", ""}, syscall.EDQUOT, gcerrors.ResourceExhausted},
		{"safe mode", wrap(remoteErr{"org.apache.hadoop.hdfs.server.namenode.SafeModeException", "Cannot create file /x. Name node is in safe mode."}), ErrUnavailable, gcerrors.Unknown},
		{"standby", remoteErr{"org.apache.hadoop.ipc.StandbyException", ""}, ErrUnavailable, gcerrors.Unknown},
		{"permission", wrap(remoteErr{"org.apache.hadoop.security.AccessControlException", "Permission denied"}), os.ErrPermission, gcerrors.PermissionDenied},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, ErrUnavailable, gcerrors.Unknown},
		{"no namenode", errors.New("no available namenodes: EOF"), ErrUnavailable, gcerrors.Unknown},
		{"missing", wrap(os.ErrNotExist), os.ErrNotExist, gcerrors.NotFound},
	}
	fs := &FS{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := classify(c.err)
			if !errors.Is(got, c.is) {
				t.Errorf("classify(%v) = %v, want it to match %v", c.err, got, c.is)
			}
			if code := fs.ErrorCode(got); code != c.code {
				t.Errorf("ErrorCode = %v, want %v", code, c.code)
			}
		})
	}
	if got := classify(fmt.Errorf("other: %w", errors.New("x"))); errors.Is(got, ErrUnavailable) || errors.Is(got, syscall.EDQUOT) {
		t.Errorf("an unknown failure was given a class: %v", got)
	}
}

// TestSplitPrefix names the directory a listing prefix reads.
func TestSplitPrefix(t *testing.T) {
	for _, c := range []struct{ prefix, dir, name string }{
		{"", "", ""},
		{"producers/", "producers", ""},
		{"producers/p1/", "producers/p1", ""},
		{"producers/p", "producers", "p"},
		{"x", "", "x"},
	} {
		if d, n := splitPrefix(c.prefix); d != c.dir || n != c.name {
			t.Errorf("splitPrefix(%q) = %q, %q; want %q, %q", c.prefix, d, n, c.dir, c.name)
		}
	}
}
