package readindex

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
)

// gatedSync is a Sync whose calls block until the test releases them, one
// by one, with the error to return. It records how many were called.
type gatedSync struct {
	calls   chan chan error // one per sync call, taken by release
	mu      sync.Mutex
	started int
}

func newGatedSync() *gatedSync { return &gatedSync{calls: make(chan chan error, 16)} }

func (g *gatedSync) sync(ctx context.Context) error {
	reply := make(chan error, 1)
	g.mu.Lock()
	g.started++
	g.mu.Unlock()
	g.calls <- reply
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release answers the oldest sync call with err, waiting for it to start.
func (g *gatedSync) release(t *testing.T, err error) {
	t.Helper()
	select {
	case reply := <-g.calls:
		reply <- err
	case <-time.After(10 * time.Second):
		t.Fatal("no sync was sent")
	}
}

func (g *gatedSync) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.started
}

func newBarrier(t *testing.T, g *gatedSync) *Barrier {
	t.Helper()
	b, err := New(Config{Sync: g.sync, MaxInFlight: 1})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func waitAsync(b *Barrier, since time.Time) <-chan error {
	out := make(chan error, 1)
	go func() { out <- b.Wait(context.Background(), since) }()
	return out
}

func isDone(ch <-chan error) bool {
	select {
	case err := <-ch:
		return err == nil
	default:
		return false
	}
}

// inBubble runs f in a synctest bubble and then lets the barrier's idle
// workers end, which a bubble requires before it closes: the bubble's
// clock passes workerIdle at once, nothing waits for real.
func inBubble(t *testing.T, f func(t *testing.T)) {
	synctest.Test(t, func(t *testing.T) {
		defer time.Sleep(workerIdle) // the bubble's clock, no real wait: idle workers end
		f(t)
	})
}

func TestNewRequiresSync(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without a sync function succeeded")
	}
}

// The property everything rests on: a read that arrives while a sync is in
// flight is not answered by that sync, only by one sent after it arrived.
// It runs in a synctest bubble: synctest.Wait returns once the late reader
// is blocked, that is once it has joined a round.
func TestReadArrivingDuringSyncWaitsForTheNext(t *testing.T) {
	t.Parallel()
	inBubble(t, func(t *testing.T) {
		g := newGatedSync()
		b := newBarrier(t, g)
		first := b.Next() // sends sync 1
		late := waitAsync(b, time.Now())
		synctest.Wait()
		if b.pendingForTest() == nil {
			t.Fatal("the late reader joined no round (it cannot be sync 1)")
		}
		g.release(t, nil) // sync 1 returns
		<-first.Done()
		if first.Err() != nil {
			t.Fatal(first.Err())
		}
		if isDone(late) {
			t.Fatal("a read that arrived while sync 1 was in flight was answered by it")
		}
		g.release(t, nil) // sync 2, sent after the late read arrived
		if err := <-late; err != nil {
			t.Fatal(err)
		}
		if n := g.count(); n != 2 {
			t.Fatalf("%d syncs sent, want 2", n)
		}
	})
}

// Reads arriving while one sync is in flight share the next one.
func TestWaitersShareOneSync(t *testing.T) {
	t.Parallel()
	g := newGatedSync()
	b := newBarrier(t, g)
	first := b.Next() // sync 1 in flight
	const readers = 200
	rounds := make([]*Round, readers)
	for i := range rounds {
		rounds[i] = b.Next()
		if rounds[i] == first {
			t.Fatal("a read arriving after sync 1 was sent joined it")
		}
		if rounds[i] != rounds[0] {
			t.Fatalf("reader %d waits for another round than reader 0", i)
		}
	}
	g.release(t, nil) // sync 1
	g.release(t, nil) // sync 2: every reader's
	for i, r := range rounds {
		<-r.Done()
		if r.Err() != nil {
			t.Fatalf("reader %d: %v", i, r.Err())
		}
	}
	if n := g.count(); n != 2 {
		t.Fatalf("%d syncs for %d readers, want 2", n, readers)
	}
	if s := b.Syncs(); s != 2 {
		t.Fatalf("Syncs() = %d, want 2", s)
	}
}

// A read that arrived before a successful sync was sent needs no new one.
func TestWaitAfterSuccessfulSyncReturnsAtOnce(t *testing.T) {
	t.Parallel()
	g := newGatedSync()
	b := newBarrier(t, g)
	arrived := time.Now()
	if b.Current(arrived) {
		t.Fatal("current before any sync")
	}
	r := b.Next()
	g.release(t, nil)
	<-r.Done()
	if !b.Current(arrived) {
		t.Fatal("not current after a sync sent after the read arrived")
	}
	if err := b.Wait(context.Background(), arrived); err != nil {
		t.Fatal(err)
	}
	if n := g.count(); n != 1 {
		t.Fatalf("%d syncs, want 1", n)
	}
	if b.Current(time.Now()) {
		t.Fatal("a read arriving now is current without a new sync")
	}
}

func TestFailedSyncFailsItsWaitersOnly(t *testing.T) {
	t.Parallel()
	g := newGatedSync()
	b := newBarrier(t, g)
	boom := errors.New("connection lost")
	w := waitAsync(b, time.Now())
	g.release(t, boom)
	if err := <-w; !errors.Is(err, boom) {
		t.Fatalf("Wait = %v, want %v", err, boom)
	}
	since := time.Now()
	if b.Current(since) {
		t.Fatal("a failed sync made reads current")
	}
	w = waitAsync(b, since)
	g.release(t, nil)
	if err := <-w; err != nil {
		t.Fatal(err)
	}
}

func TestWaitLeavesWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	g := newGatedSync()
	b := newBarrier(t, g)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan error, 1)
	go func() { out <- b.Wait(ctx, time.Now()) }()
	cancel()
	if err := <-out; !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want context.Canceled", err)
	}
	g.release(t, nil) // the sync itself still returns
}

// A sync that never returns is bounded by SyncTimeout. In a synctest
// bubble the timeout runs on the bubble's clock: exactly, without waiting.
func TestSyncTimeout(t *testing.T) {
	t.Parallel()
	inBubble(t, func(t *testing.T) {
		b, err := New(Config{
			Sync:        func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
			SyncTimeout: time.Millisecond,
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := b.Wait(context.Background(), time.Now()); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait = %v, want DeadlineExceeded", err)
		}
		if d := time.Since(start); d != time.Millisecond {
			t.Fatalf("Wait gave up after %v on the bubble's clock, want SyncTimeout (1ms)", d)
		}
	})
}

// pendingForTest returns the round new reads join, nil if none waits.
func (b *Barrier) pendingForTest() *Round {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next
}

// With MaxInFlight 2, a read arriving while one sync is in flight gets a
// sync of its own at once; the third waits for a free slot.
// It runs in a synctest bubble: synctest.Wait returns once the released
// sync's worker is blocked again, having sent what it sends.
func TestSyncsInFlightAreBounded(t *testing.T) {
	t.Parallel()
	inBubble(t, func(t *testing.T) {
		g := newGatedSync()
		b, err := New(Config{Sync: g.sync, MaxInFlight: 2})
		if err != nil {
			t.Fatal(err)
		}
		r1 := b.Next()
		r2 := b.Next()
		if r1 == r2 {
			t.Fatal("a read arriving after sync 1 was sent joined it")
		}
		r3 := b.Next()
		if r3 == r2 || b.pendingForTest() != r3 {
			t.Fatal("a third read did not wait for the next free slot")
		}
		if r4 := b.Next(); r4 != r3 {
			t.Fatal("reads waiting for a slot do not share the next sync")
		}
		g.release(t, nil) // sync 1 or 2 returns: a slot frees, sync 3 goes out
		synctest.Wait()
		if b.pendingForTest() != nil {
			t.Fatal("the waiting round was not sent when a slot freed")
		}
		g.release(t, nil)
		g.release(t, nil)
		for i, r := range []*Round{r1, r2, r3} {
			<-r.Done()
			if r.Err() != nil {
				t.Fatalf("round %d: %v", i+1, r.Err())
			}
		}
		if n := g.count(); n != 3 {
			t.Fatalf("%d syncs, want 3", n)
		}
	})
}

// TestAfterDoneRunsOnceTheRoundSettled: a function given before the sync
// returns runs once, after Done is closed and with Err set; one given after
// runs at once. A Settled round is over from the start.
func TestAfterDoneRunsOnceTheRoundSettled(t *testing.T) {
	t.Parallel()
	g := newGatedSync()
	b := newBarrier(t, g)
	r := b.Next()
	failed := errors.New("sync failed")
	ran := make(chan error, 2)
	check := func() {
		select {
		case <-r.Done():
			ran <- r.Err()
		default:
			ran <- errors.New("ran before Done was closed")
		}
	}
	r.AfterDone(check)
	select {
	case err := <-ran:
		t.Fatalf("ran before the sync returned: %v", err)
	default:
	}
	g.release(t, failed)
	if err := <-ran; err != failed {
		t.Fatalf("first function saw %v, want the round's error", err)
	}
	r.AfterDone(check)
	select {
	case err := <-ran:
		if err != failed {
			t.Fatalf("second function saw %v", err)
		}
	default:
		t.Fatal("a function given after the round settled did not run at once")
	}
	select {
	case err := <-ran:
		t.Fatalf("a function ran twice: %v", err)
	default:
	}
	s := Settled(failed)
	done := false
	s.AfterDone(func() { done = s.Err() == failed })
	if !done {
		t.Fatal("a Settled round did not run its function at once with its error")
	}
}

// goroutineID is the number runtime.Stack gives the calling goroutine.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// Rounds one after another are sent by the same few goroutines, not one
// new goroutine each (whose stack grew again on every round), and a worker
// without rounds ends.
func TestRoundsReuseTheirWorkers(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	senders := map[string]int{}
	newBarrier := func(idleFor time.Duration) *Barrier {
		b, err := New(Config{Sync: func(context.Context) error {
			mu.Lock()
			senders[goroutineID()]++
			mu.Unlock()
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		b.idleFor = idleFor
		return b
	}
	ctx := context.Background()
	const rounds = 50
	b := newBarrier(time.Hour) // no worker ends during the rounds
	for range rounds {
		if err := b.Wait(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	n := len(senders)
	mu.Unlock()
	// One worker sends a round while another may still be answering the
	// round before: two at most, with one sync in flight.
	if n > 2 {
		t.Fatalf("%d rounds were sent by %d goroutines, want at most 2: %v", rounds, n, senders)
	}

	b = newBarrier(time.Millisecond)
	for range 5 {
		if err := b.Wait(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	eventually.True(t, "every idle worker ended", func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.workers == 0 && b.idle == 0
	})
}
