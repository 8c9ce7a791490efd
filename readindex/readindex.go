// Package readindex makes reads through one ZooKeeper session linearizable
// while sharing the cost: a read waits for a sync that was sent after it
// arrived, and every read that arrives while the syncs in flight are at
// their bound waits for the next one, so thousands of reads share one sync
// (the idea of Raft's ReadIndex, as etcd serves linearizable reads).
//
// When a sync's reply comes back, the server the session reads from has
// applied every write committed before the sync reached the leader, and it
// has already delivered the session's notifications for those writes (a
// session's replies and notifications arrive in the order the server sent
// them). A cache kept current by those notifications, or a read sent on the
// session after the reply, is then current for every write acknowledged to
// anyone before the read arrived. docs/cache.md gives the argument and its
// limits.
package readindex

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Defaults for Config.
const (
	DefaultSyncTimeout = 10 * time.Second
	// DefaultMaxInFlight is one sync in flight: a read arriving while it is
	// waits for the next. More in flight shorten that wait from about one
	// and a half round trips towards one, but each sync costs ZooKeeper
	// CPU, and on a 2-CPU host shared with the load they made every round
	// trip slower (docs/performance.md).
	DefaultMaxInFlight = 1
)

// Config holds a Barrier's dependencies.
type Config struct {
	// Sync asks the session's server to catch up with the leader and
	// returns once it has. It must go through the session whose reads (and
	// whose notifications) the barrier vouches for.
	Sync func(ctx context.Context) error
	// SyncTimeout bounds one sync (default DefaultSyncTimeout). A waiter
	// leaves earlier when its own context ends.
	SyncTimeout time.Duration
	// Now is the clock; time.Now when nil. Its readings must carry a
	// monotonic component, as time.Now's do.
	Now func() time.Time
	// MaxInFlight bounds the syncs sent and not yet returned (default
	// DefaultMaxInFlight); reads arriving while that many are in flight
	// share the next one.
	MaxInFlight int
}

// Barrier batches reads behind shared syncs. It is safe for concurrent use.
type Barrier struct {
	sync        func(ctx context.Context) error
	timeout     time.Duration
	now         func() time.Time
	maxInFlight int

	// rounds hands a round to send to a waiting worker (see sendLocked);
	// idle counts the workers waiting for one that no round was handed to
	// yet, workers all of them (both guarded by mu). A worker ends after
	// idleFor without a round.
	rounds  chan *Round
	idle    int
	workers int
	idleFor time.Duration

	mu       sync.Mutex
	inFlight int    // syncs sent that have not returned
	next     *Round // the round the reads arriving now wait for, nil if none waits yet
	// lastOK is when the latest successful sync was sent: every read that
	// arrived before it may be answered.
	lastOK time.Time
	syncs  uint64 // syncs sent
}

// New returns a Barrier.
func New(cfg Config) (*Barrier, error) {
	if cfg.Sync == nil {
		return nil, errors.New("readindex: a sync function is required")
	}
	if cfg.SyncTimeout <= 0 {
		cfg.SyncTimeout = DefaultSyncTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = DefaultMaxInFlight
	}
	return &Barrier{sync: cfg.Sync, timeout: cfg.SyncTimeout, now: cfg.Now, maxInFlight: cfg.MaxInFlight,
		rounds: make(chan *Round, cfg.MaxInFlight), idleFor: workerIdle}, nil
}

// Round is one shared sync. Done is closed when it returned; Err then
// tells whether it succeeded.
type Round struct {
	done chan struct{}
	sent time.Time // written before the sync is sent, read after done
	err  error     // written before done is closed

	mu    sync.Mutex
	over  bool     // done is closed; guarded by mu
	after []func() // AfterDone's functions not yet run; guarded by mu
}

// Done is closed once the round's sync has returned.
func (r *Round) Done() <-chan struct{} { return r.done }

// Err is nil if the round's sync succeeded; it is valid once Done is
// closed.
func (r *Round) Err() error { return r.err }

// AfterDone runs fn once Done is closed: on the goroutine that closes it,
// or at once on the caller's if it already is. It spares a waiter that
// would only wake to act on the outcome a goroutine and its wake-up (the
// wire server answers a round's parked GETs this way). fn must not block.
func (r *Round) AfterDone(fn func()) {
	r.mu.Lock()
	if !r.over {
		r.after = append(r.after, fn)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	fn()
}

// settle records err, closes done and runs AfterDone's functions.
func (r *Round) settle(err error) {
	r.err = err
	r.mu.Lock()
	close(r.done)
	r.over = true
	after := r.after
	r.after = nil
	r.mu.Unlock()
	for _, fn := range after {
		fn()
	}
}

// Settled returns a round that is already over with err, for a caller
// that must hand out a Round but knows the outcome (a read that will not
// wait for a shared sync).
func Settled(err error) *Round {
	r := &Round{done: make(chan struct{})}
	r.settle(err)
	return r
}

// Next returns the round a read arriving now must wait for: one whose sync
// is sent after this call. It never returns a round already sent.
func (b *Barrier) Next() *Round {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.nextLocked()
}

func (b *Barrier) nextLocked() *Round {
	if b.next == nil {
		b.next = &Round{done: make(chan struct{})}
	}
	r := b.next
	if b.inFlight < b.maxInFlight {
		b.sendLocked()
	}
	return r
}

// sendLocked sends the waiting round's sync.
func (b *Barrier) sendLocked() {
	r := b.next
	b.next = nil
	b.inFlight++
	b.syncs++
	// Taken before the sync is sent, after every waiter of r arrived: a
	// waiter joins a round only while it is b.next.
	r.sent = b.now()
	if b.idle > 0 {
		b.idle--
		b.rounds <- r // never blocks: at most maxInFlight rounds are sent
		return
	}
	b.workers++
	go b.work(r)
}

// workerIdle is how long a worker waits for the next round before it
// ends (Barrier.idleFor).
const workerIdle = 5 * time.Second

// work sends r's sync and then the rounds handed to it, until none came
// for idleFor. A worker outlives its round because a new goroutine per
// round started on a small stack and grew it on every round (the sync's
// calls are deep): that copying was a twentieth of the sidecar's CPU in a
// 16-connection GET storm.
func (b *Barrier) work(r *Round) {
	var t *time.Timer
	for {
		b.run(r)
		b.mu.Lock()
		b.idle++
		idleFor := b.idleFor
		b.mu.Unlock()
		if t == nil {
			t = time.NewTimer(idleFor)
			defer t.Stop()
		} else {
			t.Reset(idleFor)
		}
		select {
		case r = <-b.rounds:
			continue
		case <-t.C:
		}
		b.mu.Lock()
		if b.idle > 0 {
			// More workers wait than rounds were handed out: this one
			// is not needed for any of them.
			b.idle--
			b.workers--
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		r = <-b.rounds // a round was handed out for this worker
	}
}

func (b *Barrier) run(r *Round) {
	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	err := b.sync(ctx)
	cancel()
	b.mu.Lock()
	if err == nil && r.sent.After(b.lastOK) {
		b.lastOK = r.sent
	}
	b.inFlight--
	if b.next != nil && b.inFlight < b.maxInFlight {
		b.sendLocked()
	}
	b.mu.Unlock()
	r.settle(err)
}

// Wait returns once a sync sent after since has succeeded: at once if one
// already has. since is when the read arrived (any earlier time is safe,
// only slower). It returns the round's error if that sync failed, and
// ctx's error if ctx ends first.
func (b *Barrier) Wait(ctx context.Context, since time.Time) error {
	b.mu.Lock()
	if b.lastOK.After(since) {
		b.mu.Unlock()
		return nil
	}
	r := b.nextLocked()
	b.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Current reports, without waiting, whether a sync sent after since has
// already succeeded.
func (b *Barrier) Current(since time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastOK.After(since)
}

// Syncs returns the number of syncs sent so far.
func (b *Barrier) Syncs() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.syncs
}
