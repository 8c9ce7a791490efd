//go:build linux

package app_test

import (
	"syscall"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/app"
)

// TestRaiseFileLimit: on Linux the limit is read and, afterwards, the soft
// limit is the hard one (Go's runtime may have raised it already).
func TestRaiseFileLimit(t *testing.T) {
	f := app.RaiseFileLimit()
	if !f.Known || f.Err != nil {
		t.Fatalf("RaiseFileLimit = %+v", f)
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		t.Fatal(err)
	}
	if r.Cur != r.Max || f.Current != r.Cur || f.Hard != r.Max {
		t.Fatalf("after the raise: rlimit %+v, reported %+v; want soft = hard = Current", r, f)
	}
}
