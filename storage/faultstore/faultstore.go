// Package faultstore wraps a snapshot store and a file store (ZooKeeper and
// remote storage, or memstore) and lets a test intercept any operation, in
// the manner of franz-go kfake's ControlKey: make it fail, fail with an
// unknown outcome, apply it and then report a failure, or stall it until
// released. The registry runs on it unchanged, so every step of register,
// get, delete and cleanup can be driven through every fault.
package faultstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// Op names an operation of the wrapped stores.
type Op string

// Snapshot store operations, then file store operations.
const (
	Check   Op = "check"
	Create  Op = "create"
	Get     Op = "get"
	Replace Op = "replace"
	DeleteZ Op = "delete-znode"
	Sync    Op = "sync"
	List    Op = "list"
	Write   Op = "write-file"
	Read    Op = "read-file"
	Remove  Op = "remove-file"
)

// Ops lists every operation, for table tests.
var Ops = []Op{Check, Create, Get, Replace, DeleteZ, Sync, List, Write, Read, Remove}

// IsWrite reports whether op changes stored state.
func (op Op) IsWrite() bool {
	switch op {
	case Create, Replace, DeleteZ, Write, Remove:
		return true
	}
	return false
}

// Call is one operation reaching the store.
type Call struct {
	Op         Op
	ProducerID string // snapshot operations and Write
	Path       string // Read and Remove
	N          int    // 1 for the first call of this Op, 2 for the second, …
}

// Action tells the store what to do with an intercepted call.
type Action struct {
	// Stall, if not nil, holds the call until it is closed. If the caller's
	// context ends first, the caller gets an error (with an unknown outcome
	// for a write) and the call goes on in the background, so a write is
	// applied late when Apply is set, as a request that reached the server
	// is.
	Stall <-chan struct{}
	// Apply runs the operation on the wrapped store before Err is returned.
	Apply bool
	// Err is returned to the caller; nil returns the wrapped store's result.
	Err error
	// Keep leaves the control in place for later calls.
	Keep bool
}

// Control inspects a call; ok false lets it through untouched.
type Control func(c Call) (a Action, ok bool)

// Store wraps a SnapshotStore and a FileStore. Its zero value is not
// usable; call New.
//
// A *Store offers none of the optional interfaces of package storage, so
// that a registry on it takes the plain paths every fault reaches.
// Snapshots and Files are views of it that offer the ones the wrapped
// stores offer.
type Store struct {
	snaps storage.SnapshotStore
	files storage.FileStore

	mu       sync.Mutex
	controls []controlEntry
	counts   map[Op]int
	nextID   int
	stalled  map[chan struct{}]struct{} // one per stalled call, closed when it finishes
}

type controlEntry struct {
	id int
	op Op
	fn Control
}

// New wraps snaps and files.
func New(snaps storage.SnapshotStore, files storage.FileStore) *Store {
	return &Store{snaps: snaps, files: files, counts: map[Op]int{}, stalled: map[chan struct{}]struct{}{}}
}

// Control installs fn for calls of op; it is consulted in installation
// order and removed after it handles a call, unless its Action says Keep.
func (s *Store) Control(op Op, fn Control) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.controls = append(s.controls, controlEntry{id: s.nextID, op: op, fn: fn})
}

// Reset removes every control.
func (s *Store) Reset() {
	s.mu.Lock()
	s.controls = nil
	s.mu.Unlock()
}

// Calls returns how many calls of op reached the store.
func (s *Store) Calls(op Op) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[op]
}

// Wait blocks until every stalled call has finished.
func (s *Store) Wait() { _ = s.waitStalled(context.Background()) }

// waitStalled waits for the calls stalled when it was called to finish,
// or for ctx to end.
func (s *Store) waitStalled(ctx context.Context) error {
	s.mu.Lock()
	chans := make([]chan struct{}, 0, len(s.stalled))
	for ch := range s.stalled {
		chans = append(chans, ch)
	}
	s.mu.Unlock()
	for _, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// FailNext makes the next call of op fail with err, unapplied.
func (s *Store) FailNext(op Op, err error) {
	s.Control(op, func(Call) (Action, bool) { return Action{Err: err}, true })
}

// ApplyThenFailNext applies the next call of op and then reports err.
func (s *Store) ApplyThenFailNext(op Op, err error) {
	s.Control(op, func(Call) (Action, bool) { return Action{Apply: true, Err: err}, true })
}

// Errors tests use: a lost connection (the outcome of a write is unknown),
// and a definite failure of each class.
var (
	ErrLost        = storeerr.New(storeerr.ErrUnavailable, true, errors.New("faultstore: connection lost"))
	ErrUnavailable = storeerr.New(storeerr.ErrUnavailable, false, errors.New("faultstore: unavailable"))
	ErrPermission  = storeerr.New(storeerr.ErrPermission, false, errors.New("faultstore: permission denied"))
	ErrNoSpace     = storeerr.New(storeerr.ErrNoSpace, false, errors.New("faultstore: no space left on device"))
	ErrCorrupt     = storeerr.New(storeerr.ErrCorrupt, false, errors.New("faultstore: corrupt"))
)

// intercept runs the control machinery for one call. apply performs the
// wrapped operation and records its result; intercept returns the error
// the caller gets and whether apply's result stands.
func (s *Store) intercept(ctx context.Context, c Call, apply func(context.Context) error) error {
	s.mu.Lock()
	s.counts[c.Op]++
	c.N = s.counts[c.Op]
	var act Action
	handled := false
	for i, e := range s.controls {
		if e.op != c.Op {
			continue
		}
		if a, ok := e.fn(c); ok {
			act, handled = a, true
			if !a.Keep {
				s.controls = append(s.controls[:i:i], s.controls[i+1:]...)
			}
			break
		}
	}
	s.mu.Unlock()
	if !handled {
		return apply(ctx)
	}
	if act.Stall != nil {
		return s.stall(ctx, c, act, apply)
	}
	if act.Apply {
		if err := apply(context.WithoutCancel(ctx)); err != nil {
			return err
		}
	}
	if act.Err != nil {
		return act.Err
	}
	if !act.Apply {
		return apply(ctx)
	}
	return nil
}

func (s *Store) stall(ctx context.Context, c Call, act Action, apply func(context.Context) error) error {
	done := make(chan error, 1)
	finished := make(chan struct{})
	s.mu.Lock()
	s.stalled[finished] = struct{}{}
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.stalled, finished)
			s.mu.Unlock()
			close(finished)
		}()
		<-act.Stall
		var err error
		if act.Apply || act.Err == nil {
			err = apply(context.WithoutCancel(ctx))
		}
		if act.Err != nil {
			err = act.Err
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// Classed as a store classes a request given up while its server
		// stalls; a write may still be applied.
		return storeerr.New(storeerr.ContextClass(ctx.Err()), c.Op.IsWrite(), fmt.Errorf("faultstore: %s stalled: %w", c.Op, ctx.Err()))
	}
}

// CheckSnapshot implements the snapshot store.
func (s *Store) CheckSnapshot(id string, snap offsets.Snapshot) error {
	return s.intercept(context.Background(), Call{Op: Check, ProducerID: id}, func(context.Context) error {
		return s.snaps.CheckSnapshot(id, snap)
	})
}

// CreateSnapshot implements the snapshot store.
func (s *Store) CreateSnapshot(ctx context.Context, id string, snap offsets.Snapshot) (bool, error) {
	var created bool
	err := s.intercept(ctx, Call{Op: Create, ProducerID: id}, func(ctx context.Context) (err error) {
		created, err = s.snaps.CreateSnapshot(ctx, id, snap)
		return err
	})
	return created && err == nil, err
}

// GetSnapshot implements the snapshot store.
func (s *Store) GetSnapshot(ctx context.Context, id string) (snap offsets.Snapshot, inc offsets.Incarnation, found bool, err error) {
	err = s.intercept(ctx, Call{Op: Get, ProducerID: id}, func(ctx context.Context) (err error) {
		snap, inc, found, err = s.snaps.GetSnapshot(ctx, id)
		return err
	})
	if err != nil {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, err
	}
	return snap, inc, found, nil
}

// ReplaceSnapshotIf implements the snapshot store.
func (s *Store) ReplaceSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation, snap offsets.Snapshot) (bool, error) {
	var ok bool
	err := s.intercept(ctx, Call{Op: Replace, ProducerID: id}, func(ctx context.Context) (err error) {
		ok, err = s.snaps.ReplaceSnapshotIf(ctx, id, inc, snap)
		return err
	})
	return ok && err == nil, err
}

// DeleteSnapshotIf implements the snapshot store.
func (s *Store) DeleteSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation) (bool, error) {
	var ok bool
	err := s.intercept(ctx, Call{Op: DeleteZ, ProducerID: id}, func(ctx context.Context) (err error) {
		ok, err = s.snaps.DeleteSnapshotIf(ctx, id, inc)
		return err
	})
	return ok && err == nil, err
}

// Sync implements the snapshot store. As ZooKeeper orders a session's
// requests, it first waits for every call stalled before it to finish (not
// for itself, when the sync is the call stalled).
func (s *Store) Sync(ctx context.Context) error {
	if err := s.waitStalled(ctx); err != nil {
		return storeerr.New(storeerr.ContextClass(err), false, fmt.Errorf("faultstore: sync: %w", err))
	}
	return s.intercept(ctx, Call{Op: Sync}, func(ctx context.Context) error {
		return s.snaps.Sync(ctx)
	})
}

// ListProducerIDs implements the snapshot store.
func (s *Store) ListProducerIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := s.intercept(ctx, Call{Op: List}, func(ctx context.Context) (err error) {
		ids, err = s.snaps.ListProducerIDs(ctx)
		return err
	})
	return ids, err
}

// PlannedPath implements the file store.
func (s *Store) PlannedPath(id string, tableID int64) string { return s.files.PlannedPath(id, tableID) }

// WriteOffsets implements the file store.
func (s *Store) WriteOffsets(ctx context.Context, id string, t offsets.TableOffsets) (string, error) {
	var path string
	err := s.intercept(ctx, Call{Op: Write, ProducerID: id}, func(ctx context.Context) (err error) {
		path, err = s.files.WriteOffsets(ctx, id, t)
		return err
	})
	if err != nil {
		return "", err
	}
	return path, nil
}

// ReadOffsets implements the file store.
func (s *Store) ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error) {
	var t offsets.TableOffsets
	err := s.intercept(ctx, Call{Op: Read, Path: path}, func(ctx context.Context) (err error) {
		t, err = s.files.ReadOffsets(ctx, path)
		return err
	})
	return t, err
}

// DeleteOffsets implements the file store.
func (s *Store) DeleteOffsets(ctx context.Context, path string) error {
	return s.intercept(ctx, Call{Op: Remove, Path: path}, func(ctx context.Context) error {
		return s.files.DeleteOffsets(ctx, path)
	})
}

// Snapshots returns the store as a SnapshotStore that offers the optional
// interfaces the wrapped snapshot store offers: a linear read is
// intercepted as a Get; the answers from memory (CachedSnapshots,
// AbsenceHints) do no I/O and pass through.
func (s *Store) Snapshots() storage.SnapshotStore {
	x := storage.SnapshotExtrasOf(s.snaps)
	if x.Linear != nil {
		x.Linear = linear{s, x.Linear}
	}
	return storage.WithSnapshotExtras(s, x)
}

// Files returns the store as a FileStore that offers CachedFiles when the
// wrapped file store does; its answers from memory pass through.
func (s *Store) Files() storage.FileStore {
	cached, _ := s.files.(storage.CachedFiles)
	return storage.WithFileExtras(s, cached)
}

type linear struct {
	s     *Store
	inner storage.LinearReads
}

// GetSnapshotLinear is intercepted as a Get.
func (l linear) GetSnapshotLinear(ctx context.Context, id string, wait func(context.Context) error) (snap offsets.Snapshot, inc offsets.Incarnation, found bool, err error) {
	err = l.s.intercept(ctx, Call{Op: Get, ProducerID: id}, func(ctx context.Context) (err error) {
		snap, inc, found, err = l.inner.GetSnapshotLinear(ctx, id, wait)
		return err
	})
	if err != nil {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, err
	}
	return snap, inc, found, nil
}
