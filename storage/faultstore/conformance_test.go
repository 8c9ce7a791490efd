package faultstore_test

import (
	"sync"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/storeharness"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/faultstore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
)

// zkAddr is the ZooKeeper server the harnesses share; each uses its own
// root.
var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// inner is a harness faultstore can wrap: its stores, and raw access.
type inner interface {
	storetest.Harness
	storetest.Wrapper
}

// faultHarness is faultstore's views over another harness's stores; raw
// access goes to that harness. faultstore has no OrphanStore.
type faultHarness struct {
	inner
	fs *faultstore.Store
}

func newFault(h inner) *faultHarness {
	return &faultHarness{inner: h, fs: faultstore.New(h.Snapshots(), h.Files())}
}

func (h *faultHarness) Snapshots() storage.SnapshotStore { return h.fs.Snapshots() }
func (h *faultHarness) Files() storage.FileStore         { return h.fs.Files() }
func (h *faultHarness) Orphans() storage.OrphanStore     { return nil }

// Inner is what faultstore wraps.
func (h *faultHarness) Inner() (storage.SnapshotStore, storage.FileStore) {
	return h.inner.Snapshots(), h.inner.Files()
}

// snapshotOps are faultstore's snapshot operations that take a context.
var snapshotOps = []faultstore.Op{faultstore.Create, faultstore.Get, faultstore.Replace, faultstore.DeleteZ, faultstore.Sync, faultstore.List}

// Stall stalls every snapshot operation until Resume, which then applies
// the ones held, as a server does with requests it received.
func (h *faultHarness) Stall(t *testing.T) storetest.Stall {
	gate, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	for _, op := range snapshotOps {
		h.fs.Control(op, func(faultstore.Call) (faultstore.Action, bool) {
			once.Do(func() { close(held) })
			return faultstore.Action{Stall: gate, Keep: true}, true
		})
	}
	s := storeharness.NewStall(held, func() {
		h.fs.Reset()
		close(gate)
	})
	t.Cleanup(s.Resume)
	return s
}

// Cut fails every snapshot operation until restore: reads as unavailable,
// writes as a connection lost once the request was applied.
func (h *faultHarness) Cut(t *testing.T) (restore func()) {
	for _, op := range snapshotOps {
		a := faultstore.Action{Err: faultstore.ErrUnavailable, Keep: true}
		if op.IsWrite() {
			a = faultstore.Action{Apply: true, Err: faultstore.ErrLost, Keep: true}
		}
		h.fs.Control(op, func(faultstore.Call) (faultstore.Action, bool) { return a, true })
	}
	var once sync.Once
	restore = func() { once.Do(h.fs.Reset) }
	t.Cleanup(restore)
	return restore
}

// TestStoreConformance runs the conformance suite against faultstore
// passing every call through:
//
//   - memory: over memstore, the store the fault tests of the registry
//     (producer) and embedded mode run on; its stall and outage come from
//     faultstore's own controls, which memstore alone cannot have;
//   - zookeeper: over zkstore and remote, whose linear reads faultstore's
//     views offer in turn.
func TestStoreConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return newFault(storeharness.NewMemory()) })
	})
	t.Run("zookeeper", func(t *testing.T) {
		storetest.RunConformance(t, func(t *testing.T) storetest.Harness {
			return newFault(storeharness.NewZooKeeper(t, zkAddr))
		})
	})
}

var (
	_ storetest.Stalls  = (*faultHarness)(nil)
	_ storetest.Outages = (*faultHarness)(nil)
	_ storetest.Wrapper = (*faultHarness)(nil)
)
