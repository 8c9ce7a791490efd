package wire

import (
	"context"
	"sync"
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

	mu      sync.Mutex
	used    int64
	waiters map[*budgetWaiter]struct{}

	// onDrained runs when the reservations fall to zero after one of at
	// least drainedThreshold bytes; see SetOnDrained.
	onDrained        func()
	drainedThreshold int64
	bigSeen          bool
	drainedRunning   bool
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
	b.onDrained, b.drainedThreshold = f, threshold
}

// NoteLarge records that a request used about n bytes besides its
// reservation (a large response, say), so that SetOnDrained's function
// runs once the reservations fall to zero, as after a large reservation.
func (b *Budget) NoteLarge(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noteLocked(n)
}

// noteLocked records a reservation of n bytes.
func (b *Budget) noteLocked(n int64) {
	if b.onDrained != nil && n >= b.drainedThreshold {
		b.bigSeen = true
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
	return &Budget{size: size, waiters: map[*budgetWaiter]struct{}{}}
}

// Size is the budget's capacity in bytes.
func (b *Budget) Size() int64 { return b.size }

// InUse is the number of bytes reserved now.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Waiting is the number of reservations waiting for room.
func (b *Budget) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.waiters)
}

func (b *Budget) clamp(n int64) int64 {
	return min(max(n, 0), b.size)
}

// TryAcquire reserves n bytes if they fit now and reports whether it did.
// The caller releases the same n.
func (b *Budget) TryAcquire(n int64) bool {
	n = b.clamp(n)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.size {
		return false
	}
	b.used += n
	b.noteLocked(n)
	return true
}

// Acquire reserves n bytes, waiting until they fit or ctx is done. The
// caller releases the same n.
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	n = b.clamp(n)
	b.mu.Lock()
	if b.used+n <= b.size {
		b.used += n
		b.noteLocked(n)
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
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.used < 0 {
		panic("wire: budget released more than it reserved")
	}
	for w := range b.waiters {
		if b.used+w.n <= b.size {
			b.used += w.n
			b.noteLocked(w.n)
			delete(b.waiters, w)
			close(w.ready)
		}
	}
	if b.used == 0 && b.bigSeen && !b.drainedRunning {
		b.bigSeen, b.drainedRunning = false, true
		f := b.onDrained
		go func() {
			for {
				f()
				b.mu.Lock()
				// A drain after a large reservation while f ran: run again,
				// or that drain would wait for the next release.
				if b.used == 0 && b.bigSeen {
					b.bigSeen = false
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
