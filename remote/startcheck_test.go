package remote

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

type fakeProber struct {
	errs  []error // returned in turn; nil after the last
	calls int
}

func (f *fakeProber) Probe(context.Context) error {
	f.calls++
	if f.calls <= len(f.errs) {
		return f.errs[f.calls-1]
	}
	return nil
}

func TestCheckStorageRetriesTransientFailures(t *testing.T) {
	noSleep := func(context.Context, time.Duration) error { return nil }
	transient := errors.New("dial tcp 127.0.0.1:1: connection refused")
	for _, tt := range []struct {
		name      string
		errs      []error
		attempts  int
		wantCalls int
	}{
		{"works at once", nil, 5, 1},
		{"recovers on the third try", []error{transient, transient}, 5, 3},
		{"still failing: start anyway after the last try", []error{transient, transient, transient, transient}, 3, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := &fakeProber{errs: tt.errs}
			if err := checkAtStart(context.Background(), p, "s3://b/p", tt.attempts, noSleep, hclog.NewNullLogger()); err != nil {
				t.Fatal(err)
			}
			if p.calls != tt.wantCalls {
				t.Fatalf("%d probes, want %d", p.calls, tt.wantCalls)
			}
		})
	}
}
