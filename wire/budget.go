package wire

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
)

// DefaultRequestBudget is the default server-wide budget for request bytes
// in memory: 256 MiB, room for two requests of the default 100 MiB frame
// limit with some left for everyone else.
const DefaultRequestBudget int64 = 256 << 20

// Budget bounds the request bytes that all connections of one or more
// servers hold in memory at once, the idea of Kafka's
// queued.max.request.bytes. A server reserves a frame's whole length when
// it has read the 4-byte length field and before it reads the body; the
// reservation is returned when the request has been answered (for a request
// Forward.Try took, when its answer arrives). While a reservation does not
// fit, the connection waits without reading from its socket, so a client
// that sends faster than the server works is held back by TCP instead of
// being buffered.
//
// Reservations are granted in whatever order they fit: a small request is
// not held behind a large one that waits for room, so a client that claims
// large frames and sends them slowly cannot stop small requests while room
// is left. A frame larger than the whole budget reserves all of it.
type Budget struct {
	size int64
	// used is the bytes reserved. Reserving and returning room are atomic
	// operations on it: every request does both, on every connection, and
	// a lock shared by all of them was a point where the cores met.
	// waiting counts the reservations being queued or queued; only
	// while it is above zero, or when a drain may be due, does Release
	// take the lock.
	used    atomic.Int64
	waiting atomic.Int64
	// bigFrom is the size from which a reservation or NoteLarge counts as
	// large (SetOnDrained's threshold; none without it); bigSeen: one was
	// made since onDrained last ran.
	bigFrom atomic.Int64
	bigSeen atomic.Bool

	mu      sync.Mutex
	waiters map[*budgetWaiter]struct{}
	// onDrained runs when the reservations fall to zero after one of at
	// least bigFrom bytes; see SetOnDrained.
	onDrained      func()
	drainedRunning bool
}

// SetOnDrained makes f run, on a goroutine of its own and never twice at
// once, whenever the reservations fall to zero after one of at least
// threshold bytes was made since the last run. A server uses it to give
// memory back to the operating system after a large request rather than
// keep it until the next periodic garbage collection. Call it before the
// budget is used.
func (b *Budget) SetOnDrained(threshold int64, f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onDrained = f
	if f == nil {
		threshold = math.MaxInt64
	}
	b.bigFrom.Store(threshold)
}

// NoteLarge records that a request used about n bytes besides its
// reservation (a large response, say), so that SetOnDrained's function
// runs once the reservations fall to zero, as after a large reservation.
func (b *Budget) NoteLarge(n int64) {
	b.note(n)
}

// note records a reservation (or other use) of n bytes.
func (b *Budget) note(n int64) {
	if n >= b.bigFrom.Load() && !b.bigSeen.Load() {
		b.bigSeen.Store(true)
	}
}

type budgetWaiter struct {
	n     int64
	ready chan struct{}
}

// NewBudget returns a budget of size bytes. size must be positive.
func NewBudget(size int64) *Budget {
	if size <= 0 {
		panic("wire: budget size must be positive")
	}
	b := &Budget{size: size, waiters: map[*budgetWaiter]struct{}{}}
	b.bigFrom.Store(math.MaxInt64)
	return b
}

// Size is the budget's capacity in bytes.
func (b *Budget) Size() int64 { return b.size }

// InUse is the number of bytes reserved now.
func (b *Budget) InUse() int64 { return b.used.Load() }

// Waiting is the number of reservations waiting for room.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

func (b *Budget) clamp(n int64) int64 {
	return min(max(n, 0), b.size)
}

// take reserves n (clamped) bytes if they fit now.
func (b *Budget) take(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.size {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			b.note(n)
			return true
		}
	}
}

// TryAcquire reserves n bytes if they fit now and reports whether it did.
// The caller releases the same n.
func (b *Budget) TryAcquire(n int64) bool {
	return b.take(b.clamp(n))
}

// Acquire reserves n bytes, waiting until they fit or ctx is done. The
// caller releases the same n.
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	n = b.clamp(n)
	if b.take(n) {
		return nil
	}
	b.mu.Lock()
	// Counted before trying again: a Release that returns room after
	// this try sees the count and grants the waiter under the lock.
	b.waiting.Add(1)
	if b.take(n) {
		b.waiting.Add(-1)
		b.mu.Unlock()
		return nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	b.waiters[w] = struct{}{}
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		if _, waiting := b.waiters[w]; waiting {
			delete(b.waiters, w)
			b.waiting.Add(-1)
			b.mu.Unlock()
			return ctx.Err()
		}
		b.mu.Unlock()
		// Granted at the same time: give it back.
		b.Release(n)
		return ctx.Err()
	}
}

// Release returns n bytes reserved by Acquire or TryAcquire and wakes the
// waiters that now fit.
func (b *Budget) Release(n int64) {
	n = b.clamp(n)
	if n == 0 {
		return
	}
	u := b.used.Add(-n)
	if u < 0 {
		panic("wire: budget released more than it reserved")
	}
	if b.waiting.Load() == 0 && (u != 0 || !b.bigSeen.Load()) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for w := range b.waiters {
		if b.take(w.n) {
			delete(b.waiters, w)
			b.waiting.Add(-1)
			close(w.ready)
		}
	}
	if b.used.Load() == 0 && b.bigSeen.Load() && !b.drainedRunning && b.onDrained != nil {
		b.bigSeen.Store(false)
		b.drainedRunning = true
		f := b.onDrained
		go func() {
			for {
				f()
				b.mu.Lock()
				// A drain after a large reservation while f ran: run again,
				// or that drain would wait for the next release.
				if b.used.Load() == 0 && b.bigSeen.Load() {
					b.bigSeen.Store(false)
					b.mu.Unlock()
					continue
				}
				b.drainedRunning = false
				b.mu.Unlock()
				return
			}
		}()
	}
}
