package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
)

func TestBudgetReservations(t *testing.T) {
	b := NewBudget(100)
	steps := []struct {
		op      string // try, release
		n       int64
		ok      bool
		inUse   int64
		comment string
	}{
		{"try", 60, true, 60, "fits"},
		{"try", 50, false, 60, "does not fit"},
		{"try", 40, true, 100, "fills it exactly"},
		{"release", 60, true, 40, ""},
		{"try", 500, false, 40, "larger than the budget: clamped to 100, which does not fit yet"},
		{"release", 40, true, 0, ""},
		{"try", 500, true, 100, "larger than the budget takes all of it"},
		{"release", 500, true, 0, "released with the same n"},
		{"try", -5, true, 0, "negative counts as zero"},
	}
	for _, s := range steps {
		ok := true
		switch s.op {
		case "try":
			ok = b.TryAcquire(s.n)
		case "release":
			b.Release(s.n)
		}
		if ok != s.ok || b.InUse() != s.inUse {
			t.Fatalf("%s %d (%s): ok=%v in use %d, want ok=%v in use %d", s.op, s.n, s.comment, ok, b.InUse(), s.ok, s.inUse)
		}
	}
}

func TestBudgetAcquireWaitsAndCancels(t *testing.T) {
	b := NewBudget(100)
	if !b.TryAcquire(80) {
		t.Fatal("80 of 100 must fit")
	}
	got := make(chan error, 1)
	go func() { got <- b.Acquire(context.Background(), 50) }()
	eventually.True(t, "a waiter", func() bool { return b.Waiting() == 1 })
	// A small reservation that fits is not held behind the waiting one.
	if err := b.Acquire(context.Background(), 20); err != nil {
		t.Fatal(err)
	}
	b.Release(20)
	select {
	case err := <-got:
		t.Fatalf("50 granted while 80 of 100 are in use: %v", err)
	default:
	}
	b.Release(80)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if b.InUse() != 50 {
		t.Fatalf("in use %d, want 50", b.InUse())
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { got <- b.Acquire(ctx, 60) }()
	eventually.True(t, "a waiter", func() bool { return b.Waiting() == 1 })
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire: %v", err)
	}
	b.Release(50)
	if b.InUse() != 0 || b.Waiting() != 0 {
		t.Fatalf("in use %d, waiting %d after everything was released", b.InUse(), b.Waiting())
	}
}

// TestBudgetBackpressure: a connection whose frame does not fit in the
// server-wide budget is not read until room is freed, while a small request
// on another connection still fits and is answered; every byte is given
// back at the end.
func TestBudgetBackpressure(t *testing.T) {
	budget := NewBudget(64 << 10)
	_, addr := startServer(t, ServerConfig{Budget: budget}, newControl())
	big := func(id int32) []byte {
		return AppendRequest(nil, RequestHeader{APIKey: keyEcho, RequestID: id},
			mustMarshal(t, echoReq(strings.Repeat("x", 40<<10))))
	}
	// A sends the length and half of a 40 KiB frame: its whole length is
	// reserved.
	a := dialRaw(t, addr)
	fa := big(1)
	a.Write(fa[:len(fa)/2])
	eventually.True(t, "A's reservation", func() bool { return budget.InUse() >= 40<<10 })

	// B's 40 KiB frame does not fit: B waits without being read.
	b := dialRaw(t, addr)
	b.Write(big(2))
	eventually.True(t, "B to wait for room", func() bool { return budget.Waiting() == 1 })

	// C's small request fits in what is left.
	c := dialRaw(t, addr)
	c.Write(AppendRequest(nil, RequestHeader{APIKey: keyEcho, RequestID: 3}, mustMarshal(t, echoReq("small"))))
	if r := c.Read(); r.Type != ResponseSuccess || r.RequestID != 3 {
		t.Fatalf("small request: %v %d", r.Type, r.RequestID)
	}
	if budget.Waiting() != 1 {
		t.Fatalf("B should still wait, waiting = %d", budget.Waiting())
	}

	// A completes; its answer frees room for B.
	a.Write(fa[len(fa)/2:])
	if r := a.Read(); r.Type != ResponseSuccess || r.RequestID != 1 {
		t.Fatalf("A: %v %d", r.Type, r.RequestID)
	}
	if r := b.Read(); r.Type != ResponseSuccess || r.RequestID != 2 {
		t.Fatalf("B: %v %d", r.Type, r.RequestID)
	}
	eventually.True(t, "the budget to be given back", func() bool { return budget.InUse() == 0 })
}

// TestBudgetWaitAtClose: a request whose connection waits for room when
// the shutdown begins is still answered once room is freed; its wait ends
// at the drain timeout at the latest, which then cuts it.
func TestBudgetWaitAtClose(t *testing.T) {
	for _, tt := range []struct {
		name    string
		drain   time.Duration
		release bool
	}{
		{"room freed during the drain", testTimeout, true},
		{"no room before the drain timeout", 50 * time.Millisecond, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			budget := NewBudget(1 << 10)
			srv, addr := startServer(t, ServerConfig{Budget: budget, DrainTimeout: tt.drain}, newControl())
			if !budget.TryAcquire(1 << 10) {
				t.Fatal("could not fill the budget")
			}
			rc := dialRaw(t, addr)
			rc.Write(AppendRequest(nil, RequestHeader{APIKey: keyEcho, RequestID: 1}, mustMarshal(t, echoReq("x"))))
			eventually.True(t, "the connection to wait for room", func() bool { return budget.Waiting() == 1 })
			closed := make(chan error, 1)
			go func() { closed <- srv.Close() }()
			if tt.release {
				budget.Release(1 << 10)
				if r := rc.Read(); r.Type != ResponseSuccess || r.RequestID != 1 {
					t.Fatalf("held request: %v %d", r.Type, r.RequestID)
				}
			}
			rc.ExpectClosed("the server closes it")
			err := <-closed
			if tt.release && err != nil {
				t.Fatalf("Close: %v", err)
			}
			if !tt.release && !errors.Is(err, ErrDrainTimeout) {
				t.Fatalf("Close: %v, want ErrDrainTimeout", err)
			}
			// Past the drain timeout Close cuts the connection and returns
			// without waiting for its goroutines (a handler may ignore its
			// context); the cut connection's reservation leaves on its own.
			eventually.True(t, "the cut connection to stop waiting for room", func() bool { return budget.Waiting() == 0 })
			if !tt.release {
				budget.Release(1 << 10)
			}
			if budget.InUse() != 0 {
				t.Fatalf("in use %d", budget.InUse())
			}
		})
	}
}

// TestReadFrameGrowsWithData: a length claim alone does not allocate the
// claimed size; memory follows the bytes that arrive.
func TestReadFrameGrowsWithData(t *testing.T) {
	for _, claim := range []int32{4 << 10, 1 << 20, 50 << 20} {
		var in bytes.Buffer
		binary.Write(&in, binary.BigEndian, claim)
		in.WriteString("only ten b")
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ReadFrame(&in, 0)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("claim %d: %v", claim, err)
		}
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("claim %d bytes with 10 sent: %d bytes allocated", claim, allocated)
		if allocated > 2*initialReadChunkSize {
			t.Fatalf("claim %d with 10 bytes sent allocated %d bytes, want at most %d", claim, allocated, 2*initialReadChunkSize)
		}
	}
}

func TestBudgetOnDrained(t *testing.T) {
	b := NewBudget(100)
	runs := make(chan struct{}, 10)
	b.SetOnDrained(50, func() { runs <- struct{}{} })
	// Small reservations never trigger it.
	b.TryAcquire(10)
	b.Release(10)
	// A large one does, once everything is released.
	b.TryAcquire(60)
	b.TryAcquire(10)
	b.Release(60)
	select {
	case <-runs:
		t.Fatal("ran while 10 bytes were still reserved")
	default:
	}
	b.Release(10)
	select {
	case <-runs:
	case <-time.After(testTimeout):
		t.Fatal("did not run after a large reservation drained")
	}
	// A large response noted counts like a large reservation.
	b.TryAcquire(1)
	b.NoteLarge(1 << 20)
	b.Release(1)
	select {
	case <-runs:
	case <-time.After(testTimeout):
		t.Fatal("did not run after a large response")
	}
	b.TryAcquire(10)
	b.Release(10)
	// A wait, as the test asserts that nothing happens for a while: the
	// callback runs on a goroutine of its own, so a wrong run would come
	// after Release has returned.
	select {
	case <-runs:
		t.Fatal("ran again without a large request")
	case <-time.After(10 * time.Millisecond):
	}
}

// TestMaxRunningPerConn: a connection runs at most MaxRunningPerConn
// handlers at once, the rest of its requests wait their turn, and another
// connection is not held up by them.
func TestMaxRunningPerConn(t *testing.T) {
	ctl := newControl()
	_, addr := startServer(t, ServerConfig{MaxRunningPerConn: 1}, ctl)
	rc := dialRaw(t, addr)
	body := mustMarshal(t, echoReq("x"))
	var frames []byte
	frames = AppendRequest(frames, RequestHeader{APIKey: keySlow, RequestID: 1}, body)
	frames = AppendRequest(frames, RequestHeader{APIKey: keySlow, RequestID: 2}, body)
	rc.Write(frames)
	<-ctl.slowStarted
	// Another connection is served while the first one's slot is taken.
	other := dialRaw(t, addr)
	other.Write(AppendRequest(nil, RequestHeader{APIKey: keyEcho, RequestID: 9}, body))
	if r := other.Read(); r.RequestID != 9 || r.Type != ResponseSuccess {
		t.Fatalf("other connection: %v %d", r.Type, r.RequestID)
	}
	select {
	case <-ctl.slowStarted:
		t.Fatal("second request started while the first still ran")
	default:
	}
	ctl.release <- struct{}{}
	first := rc.Read().RequestID
	<-ctl.slowStarted
	ctl.release <- struct{}{}
	second := rc.Read().RequestID
	if first+second != 3 || first == second {
		t.Fatalf("answers %d and %d, want 1 and 2", first, second)
	}
}
