package producer_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/faultstore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// faultEnv is a registry over memstore wrapped by faultstore.
type faultEnv struct {
	mem   *memstore.Store
	fault *faultstore.Store
	reg   *producer.Registry
	clock *fakeClock
}

func newFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	clock := &fakeClock{now: time.UnixMilli(1735538268000)}
	mem := memstore.New(memstore.Options{Now: clock.Now})
	fault := faultstore.New(mem, mem)
	// Behind the portable layer, as the assembly puts every backend: memstore
	// leaves ended contexts and names to it.
	snaps, files := storage.CheckedSnapshots(fault), storage.CheckedFiles(fault)
	reg, err := producer.New(producer.Config{
		Snapshots: snaps, Files: files, FastPaths: storage.FastPathsOf(snaps, files),
		Now: clock.Now, SettleTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &faultEnv{mem: mem, fault: fault, reg: reg, clock: clock}
}

func oneTable(id string, off int64, ttl *int64) producer.RegisterInput {
	return producer.RegisterInput{ProducerID: str(id), TTLMillis: ttl, Tables: []producer.TableInput{
		{TableID: 7, Buckets: []producer.BucketInput{bucket(0, off)}},
	}}
}

// fault is one way a store operation can go wrong.
type fault struct {
	name string
	// install arms the fault on op; release, if not nil, must be called
	// after the operation under test returned (it lets a stalled call go
	// on).
	install func(s *faultstore.Store, op faultstore.Op) (release func())
	// permanent faults must not be retried.
	permanent bool
	stalls    bool
}

var faults = []fault{
	{name: "fails, unavailable", install: func(s *faultstore.Store, op faultstore.Op) func() {
		s.FailNext(op, faultstore.ErrUnavailable)
		return nil
	}},
	{name: "fails, permission denied", permanent: true, install: func(s *faultstore.Store, op faultstore.Op) func() {
		s.FailNext(op, faultstore.ErrPermission)
		return nil
	}},
	{name: "fails, disk full", permanent: true, install: func(s *faultstore.Store, op faultstore.Op) func() {
		s.FailNext(op, faultstore.ErrNoSpace)
		return nil
	}},
	{name: "connection lost before applying", install: func(s *faultstore.Store, op faultstore.Op) func() {
		s.FailNext(op, faultstore.ErrLost)
		return nil
	}},
	{name: "applied, then connection lost", install: func(s *faultstore.Store, op faultstore.Op) func() {
		s.ApplyThenFailNext(op, faultstore.ErrLost)
		return nil
	}},
	{name: "stalls past the request timeout, applied late", stalls: true, install: func(s *faultstore.Store, op faultstore.Op) func() {
		gate := make(chan struct{})
		s.Control(op, func(faultstore.Call) (faultstore.Action, bool) {
			return faultstore.Action{Stall: gate, Apply: true}, true
		})
		return func() { close(gate) }
	}},
}

// scenario is one registry operation over a prepared store.
type scenario struct {
	name string
	// prepare stores what the scenario starts from.
	prepare func(t *testing.T, e *faultEnv)
	// run performs the operation; created reports a CREATED answer.
	run func(ctx context.Context, e *faultEnv) (created bool, err error)
	// check asserts the scenario's invariants after faults are cleared.
	check func(t *testing.T, e *faultEnv, created bool, err error)
}

const faultID = "job"

var (
	oldOffset int64 = 11
	newOffset int64 = 22
	expired         = int64(-1000)
)

// state returns the id's readable offset, or -1 when there is no snapshot;
// a snapshot that cannot be read fails the test (the invariant every
// scenario shares: no znode names a missing file).
func state(t *testing.T, e *faultEnv) int64 {
	t.Helper()
	s, found, err := e.reg.Get(context.Background(), str(faultID))
	if err != nil {
		t.Fatalf("the snapshot cannot be read: %v", err)
	}
	if !found {
		return -1
	}
	if len(s.Tables) != 1 || len(s.Tables[0].Buckets) != 1 {
		t.Fatalf("snapshot %+v", s)
	}
	return s.Tables[0].Buckets[0].LogEndOffset
}

func prepareWith(ttl *int64) func(t *testing.T, e *faultEnv) {
	return func(t *testing.T, e *faultEnv) {
		t.Helper()
		if res, err := e.reg.Register(context.Background(), oneTable(faultID, oldOffset, ttl)); err != nil || res != producer.Created {
			t.Fatalf("prepare: %v %v", res, err)
		}
	}
}

func registerRun(ctx context.Context, e *faultEnv) (bool, error) {
	res, err := e.reg.Register(ctx, oneTable(faultID, newOffset, nil))
	return err == nil && res == producer.Created, err
}

// registerCheck: CREATED means the new offsets are readable; any other
// answer leaves either the old state or, for an unknown outcome, the new
// snapshot, readable either way.
func registerCheck(before int64) func(t *testing.T, e *faultEnv, created bool, err error) {
	return func(t *testing.T, e *faultEnv, created bool, err error) {
		t.Helper()
		got := state(t, e)
		switch {
		case created && got != newOffset:
			t.Fatalf("answered CREATED, but the stored offset is %d", got)
		case !created && err == nil && got != before:
			t.Fatalf("answered ALREADY_EXISTS, but the stored offset is %d (was %d)", got, before)
		case err != nil && got != before && got != newOffset:
			t.Fatalf("failed (%v), stored offset is %d", err, got)
		case err != nil && got == newOffset && !storeerr.OutcomeUnknown(err):
			t.Fatalf("failed for certain (%v), but the new snapshot is stored", err)
		}
	}
}

var scenarios = []scenario{
	{
		name:  "register new",
		run:   registerRun,
		check: registerCheck(-1),
	},
	{
		name:    "register over expired",
		prepare: prepareWith(&expired),
		run:     registerRun,
		check:   registerCheck(oldOffset),
	},
	{
		name:    "register over live",
		prepare: prepareWith(nil),
		run:     registerRun,
		check: func(t *testing.T, e *faultEnv, created bool, err error) {
			if created {
				t.Fatal("CREATED over a live snapshot")
			}
			if got := state(t, e); got != oldOffset {
				t.Fatalf("stored offset %d, want the old %d", got, oldOffset)
			}
		},
	},
	{
		name:    "delete",
		prepare: prepareWith(nil),
		run: func(ctx context.Context, e *faultEnv) (bool, error) {
			return false, e.reg.Delete(ctx, str(faultID), nil)
		},
		check: func(t *testing.T, e *faultEnv, _ bool, err error) {
			got := state(t, e)
			if err == nil && got != -1 {
				t.Fatalf("delete answered OK, the snapshot is still there")
			}
			if err != nil && got != -1 && got != oldOffset {
				t.Fatalf("stored offset %d", got)
			}
		},
	},
	{
		name:    "cleanup",
		prepare: prepareWith(&expired),
		run: func(ctx context.Context, e *faultEnv) (bool, error) {
			_, err := e.reg.CleanupExpired(ctx)
			return false, err
		},
		check: func(t *testing.T, e *faultEnv, _ bool, _ error) {
			if got := state(t, e); got != -1 && got != oldOffset {
				t.Fatalf("stored offset %d", got)
			}
		},
	},
	{
		name:    "get",
		prepare: prepareWith(nil),
		run: func(ctx context.Context, e *faultEnv) (bool, error) {
			s, found, err := e.reg.Get(ctx, str(faultID))
			if err == nil && (!found || s.Tables[0].Buckets[0].LogEndOffset != oldOffset) {
				return false, fmt.Errorf("%w: found %v, %+v", errWrongAnswer, found, s)
			}
			return false, nil // a failed get is allowed; a wrong answer is not
		},
		check: func(t *testing.T, e *faultEnv, _ bool, err error) {
			if err != nil {
				t.Fatal(err)
			}
			if got := state(t, e); got != oldOffset {
				t.Fatalf("stored offset %d", got)
			}
		},
	},
}

var errWrongAnswer = errors.New("wrong answer")

// TestFaultsEveryStep drives every scenario through every fault at every
// store operation, and asserts that what was answered holds: a CREATED
// snapshot is readable, no znode names a missing file, a failure leaves a
// readable state, and permanent failures are not retried.
func TestFaultsEveryStep(t *testing.T) {
	for _, sc := range scenarios {
		for _, op := range faultstore.Ops {
			for _, f := range faults {
				if op == faultstore.Check && f.stalls {
					continue // a size check does no I/O: nothing to stall
				}
				t.Run(fmt.Sprintf("%s/%s/%s", sc.name, op, f.name), func(t *testing.T) {
					e := newFaultEnv(t)
					if sc.prepare != nil {
						sc.prepare(t, e)
					}
					before := e.fault.Calls(op)
					release := f.install(e.fault, op)
					ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
					created, err := sc.run(ctx, e)
					cancel()
					armed := e.fault.Calls(op) > before
					if release != nil {
						release()
					}
					e.fault.Wait()
					if werr := e.reg.Wait(context.Background()); werr != nil {
						t.Fatal(werr)
					}
					e.fault.Reset()
					if f.permanent && armed && op != faultstore.Get && op != faultstore.Read {
						// Reads may run again to settle; a refused write never is.
						if n := e.fault.Calls(op) - before; n != 1 {
							t.Errorf("%s failed permanently and was tried %d times", op, n)
						}
					}
					if f.permanent && armed && err != nil && storeerr.Transient(err) {
						t.Errorf("a permanent failure was reported as transient: %v", err)
					}
					sc.check(t, e, created, err)
					checkNoDanglingRefs(t, e)
				})
			}
		}
	}
}

// checkNoDanglingRefs asserts that every stored snapshot's files exist.
func checkNoDanglingRefs(t *testing.T, e *faultEnv) {
	t.Helper()
	ctx := context.Background()
	ids, _ := e.mem.ListProducerIDs(ctx)
	for _, id := range ids {
		s, _, _, err := e.mem.GetSnapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, ref := range s.Tables {
			if !e.mem.HasFile(ref.OffsetsPath) {
				t.Fatalf("znode %s names a missing file %s", id, ref.OffsetsPath)
			}
		}
	}
}

// TestFaultsFilesKeptOnlyWhenUnknown: a register that fails for certain
// before its znode write leaves no file; one whose znode write has an
// unknown outcome keeps its file, which the znode may name.
func TestFaultsFilesKeptOnlyWhenUnknown(t *testing.T) {
	for _, c := range []struct {
		name      string
		err       error
		wantFiles int
	}{
		{"definite failure", faultstore.ErrUnavailable, 0},
		{"unknown outcome, then unavailable", faultstore.ErrLost, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFaultEnv(t)
			e.fault.FailNext(faultstore.Create, c.err)
			if c.err == faultstore.ErrLost {
				// Settling cannot read either: the outcome stays unknown.
				e.fault.Control(faultstore.Sync, func(faultstore.Call) (faultstore.Action, bool) {
					return faultstore.Action{Err: faultstore.ErrPermission, Keep: true}, true
				})
			}
			_, err := e.reg.Register(context.Background(), oneTable(faultID, newOffset, nil))
			if err == nil {
				t.Fatal("register succeeded")
			}
			if got := len(e.mem.Files()); got != c.wantFiles {
				t.Fatalf("%d files left, want %d (err %v)", got, c.wantFiles, err)
			}
			if c.wantFiles > 0 && !storeerr.OutcomeUnknown(err) {
				t.Fatalf("error does not say the outcome is unknown: %v", err)
			}
		})
	}
}

// TestStaleVersionedDeleteMissesNewSnapshots plays weakness W3 with a
// coordinator's algorithm (delete by the version read, then create) against
// the registry: the coordinator reads an expired snapshot, the registry
// replaces it, and the coordinator's stale versioned delete must not remove
// what the registry answered CREATED for.
func TestStaleVersionedDeleteMissesNewSnapshots(t *testing.T) {
	ctx := context.Background()
	e := newFaultEnv(t)
	prepareWith(&expired)(t, e)
	_, staleInc, _, err := e.mem.GetSnapshot(ctx, faultID) // the coordinator's read
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.reg.Register(ctx, oneTable(faultID, newOffset, nil)); err != nil || res != producer.Created {
		t.Fatal(res, err)
	}
	// A coordinator deletes by the data version it read (czxid unchecked).
	_, cur, _, _ := e.mem.GetSnapshot(ctx, faultID)
	if cur.Version == staleInc.Version {
		t.Fatalf("replace kept the data version %d: a stale versioned delete would hit it", cur.Version)
	}
	if ok, _ := e.mem.DeleteSnapshotIf(ctx, faultID, offsets.Incarnation{Czxid: cur.Czxid, Version: staleInc.Version}); ok {
		t.Fatal("the stale versioned delete removed the new snapshot")
	}
	if got := state(t, e); got != newOffset {
		t.Fatalf("stored offset %d", got)
	}
	if e.fault.Calls(faultstore.Replace) != 1 {
		t.Fatalf("replace calls %d", e.fault.Calls(faultstore.Replace))
	}
}
