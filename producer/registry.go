// Package producer is the producer offsets registry: it validates requests
// and runs the register, get, delete and cleanup algorithms over a snapshot
// store (ZooKeeper znodes) and a file store (remote offsets files), with the
// semantics of a Fluss coordinator and without its known races where they can
// be avoided (see docs/semantics.md).
package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/readindex"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// Result is the outcome of a register, with Fluss's wire values.
type Result int32

const (
	Created       Result = 0
	AlreadyExists Result = 1
)

func (r Result) String() string {
	switch r {
	case Created:
		return "CREATED"
	case AlreadyExists:
		return "ALREADY_EXISTS"
	}
	return fmt.Sprintf("Result(%d)", int32(r))
}

// Snapshot is what get returns for an existing producer.
type Snapshot struct {
	ProducerID     string
	ExpirationTime int64
	Tables         []offsets.TableOffsets
}

// Config holds a Registry's dependencies and settings.
type Config struct {
	Snapshots storage.SnapshotStore
	Files     storage.FileStore
	// FastPaths are the ways the registry may read Snapshots and Files
	// other than through their plain methods: a read that carries its own
	// sync (Linear), the znode states, absences and offsets files held in
	// memory (Cached, Absence, Files). They must read the same stores (an
	// assembly passes storage.FastPathsOf(Snapshots, Files)); a nil field
	// is a path not taken, and the zero value reads the stores every time.
	FastPaths storage.FastPaths
	// DefaultTTL is coordinator.producer-offsets.ttl (Fluss default 24h).
	DefaultTTL time.Duration
	// FileConcurrency bounds the offsets files one operation reads or
	// writes at once (default DefaultFileConcurrency).
	FileConcurrency int
	// SettleTimeout bounds the work a write does after its first znode
	// write was sent: settling an unknown outcome and removing replaced
	// files. That work goes on when the caller's context ends, so that a
	// client that goes away or a request that times out never leaves a
	// snapshot half done (default DefaultSettleTimeout).
	SettleTimeout time.Duration
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger hclog.Logger
	// Reads makes the snapshot store's reads current for a request: a read
	// after Reads.Wait(ctx, t) reflects every write acknowledged to anyone
	// before t. It must sync the session the snapshot store (and its
	// cache) reads through. Nil makes one over Snapshots.Sync.
	Reads *readindex.Barrier
	// SequentialGets answers GET from the stores as they are, without
	// waiting for Reads (sidecar.read-consistency: sequential): current for
	// this sidecar's own writes, not for other writers'. Register's and
	// delete's decisions wait for Reads in either mode.
	SequentialGets bool
}

// DefaultSettleTimeout is Config.SettleTimeout's default, a ZooKeeper
// session timeout's worth (Fluss's default is 60 s).
const DefaultSettleTimeout = 60 * time.Second

// Registry runs the producer offsets algorithms. It is safe for concurrent
// use; operations on one producer id are serialized within the process.
type Registry struct {
	snapshots     storage.SnapshotStore
	files         storage.FileStore
	fast          storage.FastPaths
	defaultTTL    time.Duration
	settleTimeout time.Duration
	now           func() time.Time
	log           hclog.Logger
	locks         keyedMutex
	background    opCounter // writes, which may outlive their callers
	reads         *readindex.Barrier
	linearGets    bool

	fileConcurrency int
}

// attempts bounds the optimistic loops, as Fluss does.
const attempts = 3

// New returns a Registry.
func New(cfg Config) (*Registry, error) {
	if cfg.Snapshots == nil || cfg.Files == nil {
		return nil, errors.New("producer: snapshot store and file store are required")
	}
	if cfg.DefaultTTL == 0 {
		cfg.DefaultTTL = 24 * time.Hour
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.FileConcurrency <= 0 {
		cfg.FileConcurrency = DefaultFileConcurrency
	}
	if cfg.SettleTimeout <= 0 {
		cfg.SettleTimeout = DefaultSettleTimeout
	}
	if cfg.Reads == nil {
		var err error
		cfg.Reads, err = readindex.New(readindex.Config{Sync: cfg.Snapshots.Sync, SyncTimeout: cfg.SettleTimeout})
		if err != nil {
			return nil, err
		}
	}
	return &Registry{
		snapshots: cfg.Snapshots, files: cfg.Files, fast: cfg.FastPaths,
		defaultTTL: cfg.DefaultTTL, settleTimeout: cfg.SettleTimeout, now: cfg.Now,
		log: cfg.Logger.Named("producer"), fileConcurrency: cfg.FileConcurrency,
		reads: cfg.Reads, linearGets: !cfg.SequentialGets,
	}, nil
}

// arrivalKey is the context key of WithArrival.
type arrivalKey struct{}

// WithArrival records when the request an operation serves arrived. A
// linearizable read needs a sync sent after that moment; one sent after an
// earlier moment would not do, but one sent after a later one would only
// cost more waiting, which is what happens without it (the operation's
// start counts as its arrival). The server sets it to the moment it read
// the request, so that a request that already waited for a sync (the GET
// path in sidecar) does not wait again.
func WithArrival(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, arrivalKey{}, t)
}

func arrival(ctx context.Context) time.Time {
	if t, ok := ctx.Value(arrivalKey{}).(time.Time); ok {
		return t
	}
	return time.Now()
}

// ErrNotHeld fails the round ReadWait returns for a producer whose znode
// the stores' memory does not hold.
var ErrNotHeld = errors.New("the snapshot is not in memory: read it with a sync")

// ReadWait returns what a GET of producerID arriving now waits for before
// it may be answered from the stores' memory: nil when GETs do not wait
// (SequentialGets); the next shared sync round when the memory holds the
// producer's znode (a GET answered after that round succeeded is
// linearizable, docs/cache.md); else a round already failed with
// ErrNotHeld, so that the GET goes to Get, which reads ZooKeeper with a
// sync sent along, in one round trip rather than two.
func (r *Registry) ReadWait(producerID string) *readindex.Round {
	if !r.linearGets {
		return nil
	}
	if r.fast.Linear != nil && !r.holds(producerID) {
		return readindex.Settled(ErrNotHeld)
	}
	return r.reads.Next()
}

// holds reports whether the snapshot store's memory holds the producer's
// znode state.
func (r *Registry) holds(id string) bool {
	return r.fast.Cached != nil && r.fast.Cached.HoldsSnapshot(id)
}

// Syncs returns the number of shared syncs sent so far (tests watch it;
// /metrics counts them with every ZooKeeper call, op="sync").
func (r *Registry) Syncs() uint64 { return r.reads.Syncs() }

// readToDecide reads the producer's znode for a write's decision. After a
// lost race (fresh) it reads after a new sync. Otherwise it reads as the
// store has it and, when final says that state would be answered without a
// conditional write (ALREADY_EXISTS, nothing to delete), reads again after
// a sync sent after since: such an answer must come from authoritative
// state, while any other rests on the conditional write that follows.
// Waiting is bounded by caller, the read by bg.
func (r *Registry) readToDecide(caller, bg context.Context, id string, since time.Time, fresh bool, final func(s offsets.Snapshot, found bool) bool) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	if fresh {
		if err := r.current(caller, time.Now()); err != nil {
			return offsets.Snapshot{}, offsets.Incarnation{}, false, err
		}
	}
	s, inc, found, err := r.snapshots.GetSnapshot(bg, id)
	if err != nil || fresh || !final(s, found) {
		return s, inc, found, err
	}
	if err := r.current(caller, since); err != nil {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, err
	}
	return r.snapshots.GetSnapshot(bg, id)
}

// current waits until the stores' reads reflect every write acknowledged
// before since.
func (r *Registry) current(ctx context.Context, since time.Time) error {
	if err := r.reads.Wait(ctx, since); err != nil {
		if ctx.Err() != nil {
			return storeerr.New(storeerr.ErrTimeout, false, err)
		}
		return err
	}
	return nil
}

func (r *Registry) nowMillis() int64 { return r.now().UnixMilli() }

// Wait blocks until every write that outlived its caller has settled, or
// ctx ends. Shutdown calls it before closing the stores.
func (r *Registry) Wait(ctx context.Context) error { return r.background.Wait(ctx) }

// detached runs op on its own goroutine with a context that the caller's
// cancellation does not reach (bounded by SettleTimeout), holding the
// producer's lock until op ends. The caller waits for op or for its own
// context, whichever ends first; in the second case op goes on.
func detached[T any](r *Registry, ctx context.Context, opName, id string, unlock func(), op func(bg context.Context) (T, error)) (T, error) {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.settleTimeout)
	type outcome struct {
		res T
		err error
	}
	done := make(chan outcome, 1)
	r.background.Add()
	go func() {
		defer r.background.Done()
		defer cancel()
		defer unlock()
		res, err := op(bg)
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-ctx.Done():
		select {
		case o := <-done:
			return o.res, o.err
		default:
		}
		r.log.Warn("caller left before the operation settled; it goes on", "op", opName, "producer_id", id, "error", ctx.Err())
		var zero T
		return zero, r.storeError(opName, id, storeerr.New(storeerr.ErrTimeout, true,
			fmt.Errorf("the request ended before the operation settled, which goes on; retry to learn its outcome: %w", ctx.Err())))
	}
}
