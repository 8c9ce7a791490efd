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
)

// SnapshotStore keeps one snapshot znode per producer. zk.ProducerStore
// implements it.
type SnapshotStore interface {
	// CreateSnapshot creates the producer's znode if none exists; created is
	// false when one already existed.
	CreateSnapshot(ctx context.Context, producerID string, s offsets.Snapshot) (created bool, err error)
	// GetSnapshot reads the producer's znode; found is false when absent.
	GetSnapshot(ctx context.Context, producerID string) (s offsets.Snapshot, inc offsets.Incarnation, found bool, err error)
	// DeleteSnapshotIf deletes the znode only if it is still the incarnation
	// read earlier; deleted is true also when no znode is left.
	DeleteSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation) (deleted bool, err error)
	// ListProducerIDs lists every producer with a znode.
	ListProducerIDs(ctx context.Context) ([]string, error)
}

// FileStore keeps the offsets files. remote.Store implements it.
type FileStore interface {
	// WriteOffsets writes a new file and returns its fully qualified path.
	WriteOffsets(ctx context.Context, producerID string, t offsets.TableOffsets) (string, error)
	// ReadOffsets reads a file by the path stored in a znode; a missing file
	// is reported with an error for which IsNotFound is true.
	ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error)
	// DeleteOffsets deletes a file; a missing file is not an error.
	DeleteOffsets(ctx context.Context, path string) error
}

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
	Snapshots SnapshotStore
	Files     FileStore
	// IsNotFound tells a missing offsets file from other read errors.
	IsNotFound func(error) bool
	// DefaultTTL is coordinator.producer-offsets.ttl (Fluss default 24h).
	DefaultTTL time.Duration
	// FileConcurrency bounds the offsets files one operation reads or
	// writes at once (default DefaultFileConcurrency).
	FileConcurrency int
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger hclog.Logger
}

// Registry runs the producer offsets algorithms. It is safe for concurrent
// use; operations on one producer id are serialized within the process.
type Registry struct {
	snapshots  SnapshotStore
	files      FileStore
	isNotFound func(error) bool
	defaultTTL time.Duration
	now        func() time.Time
	log        hclog.Logger
	locks      keyedMutex

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
	if cfg.IsNotFound == nil {
		cfg.IsNotFound = func(error) bool { return false }
	}
	return &Registry{
		snapshots: cfg.Snapshots, files: cfg.Files, isNotFound: cfg.IsNotFound,
		defaultTTL: cfg.DefaultTTL, now: cfg.Now, log: cfg.Logger.Named("producer"),
		fileConcurrency: cfg.FileConcurrency,
	}, nil
}

func (r *Registry) nowMillis() int64 { return r.now().UnixMilli() }

// Register stores a snapshot of the producer's offsets unless a live one
// exists. An expired snapshot is replaced.
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
	if _, ferr := expiration(id, r.nowMillis(), ttl); ferr != nil {
		return 0, ferr
	}

	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return 0, r.storeError("register", id, err)
	}
	defer unlock()
	for attempt := 0; attempt < attempts; attempt++ {
		now := r.nowMillis()
		// Look before writing files: a live snapshot means there is nothing
		// to write (Fluss writes and deletes files on every such call).
		existing, inc, found, err := r.snapshots.GetSnapshot(ctx, id)
		if err != nil {
			return 0, r.storeError("register", id, err)
		}
		if found {
			if !existing.Expired(now) {
				return AlreadyExists, nil
			}
			deleted, err := r.snapshots.DeleteSnapshotIf(ctx, id, inc)
			if err != nil {
				return 0, r.storeError("register", id, err)
			}
			if !deleted {
				continue // replaced under us: look again
			}
			r.deleteFiles(ctx, id, existing.Tables)
		}
		created, err := r.store(ctx, id, tables, ttl)
		if err != nil {
			return 0, r.storeError("register", id, err)
		}
		if created {
			return Created, nil
		}
	}
	// Every attempt lost a race. Answer ALREADY_EXISTS only when a live
	// snapshot really is there (Fluss answers it regardless).
	existing, _, found, err := r.snapshots.GetSnapshot(ctx, id)
	if err != nil {
		return 0, r.storeError("register", id, err)
	}
	if found && !existing.Expired(r.nowMillis()) {
		return AlreadyExists, nil
	}
	return 0, flusserr.Newf(flusserr.StorageException,
		"Failed to register producer offsets for producer %s: the snapshot kept changing concurrently, retry", id)
}

// store writes one file per table and then creates the znode that names
// them, in the order of tables (a coordinator's, see coordinatorOrder). The
// expiration is taken after the files are written, so slow storage does not
// shorten the TTL. If the znode already exists the files are removed.
func (r *Registry) store(ctx context.Context, id string, tables []offsets.TableOffsets, ttlMillis int64) (bool, error) {
	refs := make([]offsets.FileRef, len(tables))
	err := forEach(ctx, len(tables), r.fileConcurrency, func(ctx context.Context, i int) error {
		path, err := r.files.WriteOffsets(ctx, id, tables[i])
		refs[i] = offsets.FileRef{TableID: tables[i].TableID, OffsetsPath: path}
		return err
	})
	if err != nil {
		r.deleteFiles(ctx, id, written(refs))
		return false, err
	}
	exp, ferr := expiration(id, r.nowMillis(), ttlMillis)
	if ferr != nil {
		r.deleteFiles(ctx, id, refs)
		return false, ferr
	}
	created, err := r.snapshots.CreateSnapshot(ctx, id, offsets.Snapshot{ExpirationTime: exp, Tables: refs})
	if err != nil || !created {
		// On an error the znode's fate is unknown only if the store could not
		// tell; zk.ProducerStore resolves ambiguous creates itself, so an
		// error here means no znode of ours names these files.
		r.deleteFiles(ctx, id, refs)
		return false, err
	}
	return true, nil
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
	for attempt := 0; attempt < attempts; attempt++ {
		s, inc, found, err := r.snapshots.GetSnapshot(ctx, id)
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
		// A file is gone. If the snapshot was deleted or replaced meanwhile,
		// answer for what is there now; if it is unchanged it is broken.
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

// readFiles reads every file of a snapshot. missing names the first file that
// does not exist; err is any other failure.
// The files are read in parallel (at most fileConcurrency at once); tables
// keep the order of refs.
func (r *Registry) readFiles(ctx context.Context, refs []offsets.FileRef) (tables []offsets.TableOffsets, missing string, err error) {
	tables = make([]offsets.TableOffsets, len(refs))
	var missingOnce sync.Once
	err = forEach(ctx, len(refs), r.fileConcurrency, func(ctx context.Context, i int) error {
		t, err := r.files.ReadOffsets(ctx, refs[i].OffsetsPath)
		if err != nil {
			if r.isNotFound(err) {
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
// the one that check approved.
func (r *Registry) Delete(ctx context.Context, producerID *string, check DeleteCheck) error {
	if err := ValidateID(producerID); err != nil {
		return err
	}
	id := *producerID
	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return r.storeError("delete", id, err)
	}
	defer unlock()
	for attempt := 0; attempt < attempts; attempt++ {
		s, inc, found, err := r.snapshots.GetSnapshot(ctx, id)
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
		deleted, err := r.snapshots.DeleteSnapshotIf(ctx, id, inc)
		if err != nil {
			return r.storeError("delete", id, err)
		}
		if deleted {
			r.deleteFiles(ctx, id, s.Tables)
			return nil
		}
	}
	return flusserr.Newf(flusserr.StorageException,
		"Failed to delete producer offsets for producer %s: the snapshot kept changing concurrently, retry", id)
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
	deleted, err := r.snapshots.DeleteSnapshotIf(ctx, id, inc)
	if err != nil || !deleted {
		return false, err
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
