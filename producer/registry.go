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
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
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
		snapshots: cfg.Snapshots, files: cfg.Files,
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
	if _, linear := r.snapshots.(storage.LinearReads); linear && !r.holds(producerID) {
		return readindex.Settled(ErrNotHeld)
	}
	return r.reads.Next()
}

// holds reports whether the snapshot store's memory holds the producer's
// znode state.
func (r *Registry) holds(id string) bool {
	cs, ok := r.snapshots.(storage.CachedSnapshots)
	return ok && cs.HoldsSnapshot(id)
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

// Register stores a snapshot of the producer's offsets unless a live one
// exists. An expired snapshot is replaced in place.
//
// The rules that keep an answered CREATED readable (docs/semantics.md):
//   - a snapshot that is too large for the store is refused before any
//     file is written;
//   - once the first znode write is sent, the register runs to its end on
//     its own, bounded by SettleTimeout, whether or not the caller is still
//     there; the caller gets REQUEST_TIME_OUT if its context ends first;
//   - a write whose outcome is unknown is settled by reading after Sync;
//   - a file is deleted only when storage proved that no znode names it:
//     the znode write that would name it was never sent, or was answered
//     "not applied" with no earlier attempt left unknown. Otherwise it stays
//     for orphan cleanup, whose grace period protects it.
func (r *Registry) Register(ctx context.Context, in RegisterInput) (Result, error) {
	if err := ValidateID(in.ProducerID); err != nil {
		return 0, err
	}
	id := *in.ProducerID
	tables, ferr := normalize(id, in.Tables)
	if ferr != nil {
		return 0, ferr
	}
	tables, exact := coordinatorOrder(in.Tables, tables)
	if !exact {
		r.log.Debug("the znode's table order may differ from a coordinator's (Java tree bins)", "producer_id", id, "tables", len(tables))
	}
	ttl := r.defaultTTL.Milliseconds()
	if in.TTLMillis != nil {
		ttl = *in.TTLMillis
	}
	exp, ferr := expiration(id, r.nowMillis(), ttl)
	if ferr != nil {
		return 0, ferr
	}
	if err := r.checkSize(id, exp, tables); err != nil {
		return 0, err
	}

	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return 0, r.storeError("register", id, err)
	}
	return r.detached(ctx, "register", id, unlock, func(bg context.Context) (Result, error) {
		return r.register(ctx, bg, id, tables, ttl)
	})
}

// checkSize refuses a snapshot the store could not hold, before anything is
// written. Offsets paths are planned at their final length.
func (r *Registry) checkSize(id string, exp int64, tables []offsets.TableOffsets) error {
	planned := offsets.Snapshot{ExpirationTime: exp, Tables: make([]offsets.FileRef, len(tables))}
	for i, t := range tables {
		planned.Tables[i] = offsets.FileRef{TableID: t.TableID, OffsetsPath: r.files.PlannedPath(id, t.TableID)}
	}
	if err := r.snapshots.CheckSnapshot(id, planned); err != nil {
		if errors.Is(err, storeerr.ErrTooLarge) {
			return flusserr.Newf(flusserr.RecordTooLarge,
				"Failed to register producer offsets for producer %s: the snapshot of %d tables is too large for ZooKeeper: %v", id, len(tables), err)
		}
		return r.storeError("register", id, err)
	}
	return nil
}

// detached runs op on its own goroutine with a context that the caller's
// cancellation does not reach (bounded by SettleTimeout), holding the
// producer's lock until op ends. The caller waits for op or for its own
// context, whichever ends first; in the second case op goes on.
func (r *Registry) detached(ctx context.Context, opName, id string, unlock func(), op func(bg context.Context) (Result, error)) (Result, error) {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.settleTimeout)
	type outcome struct {
		res Result
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
		return 0, r.storeError(opName, id, storeerr.New(storeerr.ErrTimeout, true,
			fmt.Errorf("the request ended before the operation settled, which goes on; retry to learn its outcome: %w", ctx.Err())))
	}
}

// register is Register's work under the producer's lock. caller is the
// client's context: it may stop the register only before the first znode
// write is sent. bg carries everything from then on.
func (r *Registry) register(caller, bg context.Context, id string, tables []offsets.TableOffsets, ttl int64) (Result, error) {
	since := arrival(caller)
	for attempt := 0; attempt < attempts; attempt++ {
		if err := caller.Err(); err != nil {
			return 0, r.storeError("register", id, err)
		}
		// Look before writing files: a live snapshot means there is nothing
		// to write (Fluss writes and deletes files on every such call). The
		// first attempt takes the store's word that there is none, if it
		// has one; a later attempt, after a lost race, always reads, after
		// a sync. Absence needs no proof: the create is conditional. A live
		// snapshot answers ALREADY_EXISTS, so it is read again after a sync
		// unless the read already followed one.
		var (
			existing offsets.Snapshot
			inc      offsets.Incarnation
			found    bool
		)
		if attempt > 0 || !r.knownAbsent(id) {
			var err error
			existing, inc, found, err = r.readToDecide(caller, bg, id, since, attempt > 0,
				func(s offsets.Snapshot, found bool) bool { return found && !s.Expired(r.nowMillis()) })
			if err != nil {
				return 0, r.storeError("register", id, err)
			}
		}
		if found && !existing.Expired(r.nowMillis()) {
			return AlreadyExists, nil
		}
		refs, err := r.writeFiles(bg, id, tables)
		if err != nil {
			return 0, r.storeError("register", id, err)
		}
		// The last moment the caller can still stop the register: nothing
		// names the files yet.
		if err := caller.Err(); err != nil {
			r.deleteFiles(bg, id, refs)
			return 0, r.storeError("register", id, err)
		}
		// The expiration is taken after the files are written, so slow
		// storage does not shorten the TTL.
		exp, ferr := expiration(id, r.nowMillis(), ttl)
		if ferr != nil {
			r.deleteFiles(bg, id, refs)
			return 0, ferr
		}
		snap := offsets.Snapshot{ExpirationTime: exp, Tables: refs}
		var w write
		if found {
			w = r.replace(bg, id, inc, snap)
		} else {
			w = r.create(bg, id, snap)
		}
		switch {
		case w.applied:
			if found {
				// The replaced snapshot's files: its znode no longer names them.
				r.deleteFiles(bg, id, existing.Tables)
			}
			return Created, nil
		case !w.uncertain:
			r.deleteFiles(bg, id, refs) // proven: no znode names them
		default:
			r.log.Warn("register left its files for orphan cleanup: an attempt's outcome was unknown",
				"producer_id", id, "files", len(refs))
		}
		if w.err != nil {
			return 0, r.storeError("register", id, w.err)
		}
		// Another writer changed the snapshot meanwhile: look again.
	}
	// Every attempt lost a race. Answer ALREADY_EXISTS only when a live
	// snapshot really is there (Fluss answers it regardless).
	if err := r.current(bg, time.Now()); err != nil {
		return 0, r.storeError("register", id, err)
	}
	existing, _, found, err := r.snapshots.GetSnapshot(bg, id)
	if err != nil {
		return 0, r.storeError("register", id, err)
	}
	if found && !existing.Expired(r.nowMillis()) {
		return AlreadyExists, nil
	}
	return 0, r.storeError("register", id, storeerr.New(storeerr.ErrUnavailable, false,
		errors.New("the snapshot kept changing concurrently, retry")))
}

// knownAbsent asks the snapshot store's AbsenceHints, if it has them.
func (r *Registry) knownAbsent(id string) bool {
	h, ok := r.snapshots.(storage.AbsenceHints)
	return ok && h.KnownAbsent(id)
}

// writeFiles writes one file per table, in the order of tables (a
// coordinator's, see coordinatorOrder). If one write fails, the files
// already written are removed: nothing names them yet.
func (r *Registry) writeFiles(ctx context.Context, id string, tables []offsets.TableOffsets) ([]offsets.FileRef, error) {
	refs := make([]offsets.FileRef, len(tables))
	err := forEach(ctx, len(tables), r.fileConcurrency, func(ctx context.Context, i int) error {
		path, err := r.files.WriteOffsets(ctx, id, tables[i])
		refs[i] = offsets.FileRef{TableID: tables[i].TableID, OffsetsPath: path}
		return err
	})
	if err != nil {
		r.deleteFiles(context.WithoutCancel(ctx), id, written(refs))
		return nil, err
	}
	return refs, nil
}

// Get returns the producer's snapshot; found is false when there is none.
// Expired snapshots that cleanup has not removed yet are returned, as in
// Fluss. The znode is read once and its files are read by the paths it
// names, so expiration and offsets always come from the same snapshot.
func (r *Registry) Get(ctx context.Context, producerID *string) (Snapshot, bool, error) {
	if err := ValidateID(producerID); err != nil {
		return Snapshot{}, false, err
	}
	id := *producerID
	since := arrival(ctx)
	// synced: the reads from here on need no sync of their own.
	synced := !r.linearGets || r.reads.Current(since)
	for attempt := 0; attempt < attempts; attempt++ {
		var (
			s     offsets.Snapshot
			inc   offsets.Incarnation
			found bool
			err   error
		)
		lr, linear := r.snapshots.(storage.LinearReads)
		switch {
		case synced:
			s, inc, found, err = r.snapshots.GetSnapshot(ctx, id)
		case linear:
			s, inc, found, err = lr.GetSnapshotLinear(ctx, id, func(ctx context.Context) error { return r.current(ctx, since) })
			synced = true
		default:
			if err := r.current(ctx, since); err != nil {
				return Snapshot{}, false, r.storeError("get", id, err)
			}
			synced = true
			s, inc, found, err = r.snapshots.GetSnapshot(ctx, id)
		}
		if err != nil {
			return Snapshot{}, false, r.storeError("get", id, err)
		}
		if !found {
			return Snapshot{}, false, nil
		}
		tables, missing, err := r.readFiles(ctx, s.Tables)
		if err != nil {
			return Snapshot{}, false, r.storeError("get", id, err)
		}
		if missing == "" {
			return Snapshot{ProducerID: id, ExpirationTime: s.ExpirationTime, Tables: tables}, true, nil
		}
		// A file is gone. If the snapshot was deleted or replaced meanwhile
		// (by anyone: the znode read above may be older than the files'
		// removal), answer for what is there now, read after a sync; if it
		// is unchanged it is broken.
		if err := r.current(ctx, time.Now()); err != nil {
			return Snapshot{}, false, r.storeError("get", id, err)
		}
		_, now, stillThere, err := r.snapshots.GetSnapshot(ctx, id)
		if err != nil {
			return Snapshot{}, false, r.storeError("get", id, err)
		}
		if !stillThere {
			return Snapshot{}, false, nil
		}
		if now == inc {
			return Snapshot{}, false, flusserr.Newf(flusserr.UnknownServerError,
				"Failed to get producer offsets for producer %s: offsets file not found: %s", id, missing)
		}
	}
	return Snapshot{}, false, flusserr.Newf(flusserr.StorageException,
		"Failed to get producer offsets for producer %s: the snapshot kept changing concurrently, retry", id)
}

// GetCached is Get answered from the stores' memory alone, at once: ok is
// false, and Get must answer, when the id is invalid or the stores do not
// hold the snapshot (or its absence) and every file it names. It appends
// the tables to tables[:0], so that a caller can reuse one slice; the
// tables' Buckets are shared and must not be modified. It is as current as
// Get: the caches it reads are the ones Get reads first.
//
// token names the cached znode state the answer comes from (see
// storage.CachedSnapshots): the answer for a producer id is the same as long as
// CachedToken returns the same token, since offsets files never change.
func (r *Registry) GetCached(producerID string, tables []offsets.TableOffsets) (snap Snapshot, token uint64, found, ok bool) {
	cs, ok1 := r.snapshots.(storage.CachedSnapshots)
	cf, ok2 := r.files.(storage.CachedFiles)
	if !ok1 || !ok2 || ValidateID(&producerID) != nil {
		return Snapshot{}, 0, false, false
	}
	s, token, found, ok := cs.CachedSnapshot(producerID)
	if !ok || !found {
		return Snapshot{}, token, false, ok
	}
	tables = tables[:0]
	for _, ref := range s.Tables {
		t, ok := cf.CachedOffsets(ref.OffsetsPath)
		if !ok {
			return Snapshot{}, 0, false, false
		}
		tables = append(tables, t)
	}
	return Snapshot{ProducerID: producerID, ExpirationTime: s.ExpirationTime, Tables: tables}, token, true, true
}

// CachedToken is the first step of GetCached alone: whether the stores'
// memory holds the producer's znode state, and its token. A caller that
// kept what it derived from a GetCached answer under that answer's token
// may use it again while CachedToken returns the same token.
func (r *Registry) CachedToken(producerID string) (token uint64, found, ok bool) {
	cs, isCached := r.snapshots.(storage.CachedSnapshots)
	if !isCached || ValidateID(&producerID) != nil {
		return 0, false, false
	}
	_, token, found, ok = cs.CachedSnapshot(producerID)
	return token, found, ok
}

// readFiles reads every file of a snapshot. missing names the first file that
// does not exist; err is any other failure.
// The files are read in parallel (at most fileConcurrency at once); tables
// keep the order of refs.
func (r *Registry) readFiles(ctx context.Context, refs []offsets.FileRef) (tables []offsets.TableOffsets, missing string, err error) {
	tables = make([]offsets.TableOffsets, len(refs))
	if cached, ok := r.files.(storage.CachedFiles); ok {
		// The common case of a recovery GET storm: every file in memory.
		// Reading them inline spares a goroutine and a context per file.
		all := true
		for i, ref := range refs {
			if tables[i], all = cached.CachedOffsets(ref.OffsetsPath); !all {
				break
			}
		}
		if all {
			return tables, "", nil
		}
	}
	var missingOnce sync.Once
	err = forEach(ctx, len(refs), r.fileConcurrency, func(ctx context.Context, i int) error {
		t, err := r.files.ReadOffsets(ctx, refs[i].OffsetsPath)
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				missingOnce.Do(func() { missing = refs[i].OffsetsPath })
				return errFileMissing
			}
			return fmt.Errorf("read offsets file %s: %w", refs[i].OffsetsPath, err)
		}
		tables[i] = t
		return nil
	})
	if missing != "" {
		return nil, missing, nil
	}
	if err != nil {
		return nil, "", err
	}
	return tables, "", nil
}

// errFileMissing stops a parallel read at the first missing file.
var errFileMissing = errors.New("offsets file missing")

// written keeps the refs whose file was written.
func written(refs []offsets.FileRef) []offsets.FileRef {
	out := make([]offsets.FileRef, 0, len(refs))
	for _, ref := range refs {
		if ref.OffsetsPath != "" {
			out = append(out, ref)
		}
	}
	return out
}

// DeleteCheck lets the caller veto a delete after seeing which tables the
// stored snapshot covers (authorization uses it). It sees the znode's table
// ids; no remote file is read for it.
type DeleteCheck func(tableIDs []int64) error

// Delete removes the producer's snapshot: the znode first, then its files.
// Deleting a missing snapshot succeeds. The znode is removed only if it is
// the one that check approved. Once the delete is sent it runs to its end
// even if the caller leaves (see Register).
func (r *Registry) Delete(ctx context.Context, producerID *string, check DeleteCheck) error {
	if err := ValidateID(producerID); err != nil {
		return err
	}
	id := *producerID
	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return r.storeError("delete", id, err)
	}
	_, err = r.detached(ctx, "delete", id, unlock, func(bg context.Context) (Result, error) {
		return 0, r.delete(ctx, bg, id, check)
	})
	return err
}

func (r *Registry) delete(caller, bg context.Context, id string, check DeleteCheck) error {
	since := arrival(caller)
	for attempt := 0; attempt < attempts; attempt++ {
		if err := caller.Err(); err != nil {
			return r.storeError("delete", id, err)
		}
		// A snapshot found is deleted by a conditional write, whose outcome
		// is authoritative; "nothing to delete" is answered only from a
		// read after a sync. A later attempt, after a lost race, syncs
		// first.
		s, inc, found, err := r.readToDecide(caller, bg, id, since, attempt > 0,
			func(_ offsets.Snapshot, found bool) bool { return !found })
		if err != nil {
			return r.storeError("delete", id, err)
		}
		if !found {
			return nil
		}
		if check != nil {
			ids := make([]int64, len(s.Tables))
			for i, t := range s.Tables {
				ids[i] = t.TableID
			}
			if err := check(ids); err != nil {
				return err
			}
		}
		w := r.deleteIf(bg, id, inc)
		if w.applied {
			r.deleteFiles(bg, id, s.Tables)
			return nil
		}
		if w.err != nil {
			return r.storeError("delete", id, w.err)
		}
	}
	return r.storeError("delete", id, storeerr.New(storeerr.ErrUnavailable, false,
		errors.New("the snapshot kept changing concurrently, retry")))
}

// CleanupExpired deletes every snapshot expired at the start of the run and
// returns how many it deleted. An error on one producer is logged and does
// not stop the others.
func (r *Registry) CleanupExpired(ctx context.Context) (int, error) {
	now := r.nowMillis()
	ids, err := r.snapshots.ListProducerIDs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		deleted, err := r.cleanupOne(ctx, id, now)
		if err != nil {
			r.log.Warn("expired snapshot cleanup failed", "producer_id", id, "error", err)
			continue
		}
		if deleted {
			n++
		}
	}
	return n, nil
}

func (r *Registry) cleanupOne(ctx context.Context, id string, now int64) (bool, error) {
	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return false, err
	}
	defer unlock()
	s, inc, found, err := r.snapshots.GetSnapshot(ctx, id)
	if err != nil || !found || !s.Expired(now) {
		return false, err
	}
	w := r.deleteIf(ctx, id, inc)
	if !w.applied {
		return false, w.err
	}
	r.deleteFiles(ctx, id, s.Tables)
	r.log.Debug("deleted expired snapshot", "producer_id", id, "expiration_time", s.ExpirationTime)
	return true, nil
}

// deleteFiles removes files best effort: a file left behind is an orphan
// that cleanup removes later, never a correctness problem.
func (r *Registry) deleteFiles(ctx context.Context, id string, refs []offsets.FileRef) {
	_ = forEach(ctx, len(refs), r.fileConcurrency, func(ctx context.Context, i int) error {
		if err := r.files.DeleteOffsets(ctx, refs[i].OffsetsPath); err != nil {
			r.log.Warn("could not delete offsets file", "producer_id", id, "path", refs[i].OffsetsPath, "error", err)
		}
		return nil // one failure must not stop the other deletes
	})
}

// storeError passes API errors through and wraps every other failure with
// the operation, keeping the cause for the caller to classify.
func (r *Registry) storeError(op, id string, err error) error {
	if fe, ok := flusserr.From(err); ok {
		return fe
	}
	r.log.Error("producer offsets operation failed", "op", op, "producer_id", id, "error", err)
	return &StoreError{Op: op, ProducerID: id, Err: err}
}

// StoreError is a storage failure during an operation. The sidecar maps its
// cause to a Fluss error code.
type StoreError struct {
	Op         string
	ProducerID string
	Err        error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("Failed to %s producer offsets for producer %s: %v", e.Op, e.ProducerID, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }
