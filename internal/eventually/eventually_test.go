package eventually

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestTrueReturnsOnceTheConditionHolds: the wait ends at the first try
// that holds, not before.
func TestTrueReturnsOnceTheConditionHolds(t *testing.T) {
	tries := 0
	True(t, "the third try", func() bool { tries++; return tries == 3 })
	if tries != 3 {
		t.Fatalf("%d tries, want 3", tries)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records its message and ends
// the goroutine, as testing.T's does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestGivingUpReportsTheLastState: a wait past its deadline fails with
// what it waited for and the check's last error.
func TestGivingUpReportsTheLastState(t *testing.T) {
	rec := &fatalRecorder{TB: t}
	tries := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		poll(rec, "the queue to drain", func() error {
			tries++
			return fmt.Errorf("%d still queued", 10-tries)
		}, time.Now())
		t.Error("poll returned although its check never held")
	}()
	<-done
	if !strings.Contains(rec.msg, "the queue to drain") || !strings.Contains(rec.msg, "9 still queued") {
		t.Fatalf("failure message %q lacks what was awaited or the last state", rec.msg)
	}
}

// TestDeadlineHonoursTheTestDeadline: a test deadline sooner than Limit
// bounds the wait, with room to report.
func TestDeadlineHonoursTheTestDeadline(t *testing.T) {
	now := time.Now()
	got := deadline(deadlined{TB: t, at: now.Add(time.Minute)}, now)
	if want := now.Add(time.Minute - reportMargin); !got.Equal(want) {
		t.Fatalf("deadline %v, want %v", got.Sub(now), want.Sub(now))
	}
	if got := deadline(deadlined{TB: t, at: now.Add(time.Hour)}, now); !got.Equal(now.Add(Limit)) {
		t.Fatalf("deadline %v, want Limit", got.Sub(now))
	}
}

type deadlined struct {
	testing.TB
	at time.Time
}

func (d deadlined) Deadline() (time.Time, bool) { return d.at, true }

// TestNilWaitsForNil: Nil returns at the first check that succeeds.
func TestNilWaitsForNil(t *testing.T) {
	errBusy := errors.New("busy")
	n := 0
	Nil(t, "not busy", func() error {
		if n++; n < 2 {
			return errBusy
		}
		return nil
	})
	if n != 2 {
		t.Fatalf("%d checks, want 2", n)
	}
}
