package counted_test

import (
	"sync"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/storeharness"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/counted"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
)

// zkAddr is the ZooKeeper server the harnesses share; each uses its own
// root.
var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// ops counts the calls the counted stores report.
type ops struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *ops) StorageOp(store, op, class string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[store+" "+op]++
}

// base is a harness whose stores counted wraps, with its files as one
// store of both kinds.
type base interface {
	storetest.Harness
	storetest.Wrapper
	FilesAndOrphans() storage.FilesAndOrphans
}

// countedHarness is counted over another harness's stores; raw access is
// that harness's.
type countedHarness struct {
	base
	ops   *ops
	snaps storage.SnapshotStore
	files storage.FilesAndOrphans
}

func newCounted(h base) *countedHarness {
	o := &ops{n: map[string]int{}}
	snaps, files := counted.Wrap(h.Snapshots(), h.FilesAndOrphans(), o)
	return &countedHarness{base: h, ops: o, snaps: snaps, files: files}
}

func (h *countedHarness) Snapshots() storage.SnapshotStore { return h.snaps }
func (h *countedHarness) Files() storage.FileStore         { return h.files }
func (h *countedHarness) Orphans() storage.OrphanStore     { return h.files }

// Inner is what counted wraps.
func (h *countedHarness) Inner() (storage.SnapshotStore, storage.FileStore) {
	return h.base.Snapshots(), h.base.Files()
}

// countedZK is counted over zkstore and remote, which can stall and be cut
// off.
type countedZK struct {
	*countedHarness
	zk *storeharness.ZooKeeper
}

func (h countedZK) Stall(t *testing.T) storetest.Stall { return h.zk.Stall(t) }
func (h countedZK) Cut(t *testing.T) (restore func())  { return h.zk.Cut(t) }

// TestStoreConformance runs the conformance suite against counted over
// memstore and over zkstore and remote (whose linear reads it offers and
// counts), each behind the portable layer.
func TestStoreConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return newCounted(storeharness.NewMemory()) })
	})
	t.Run("zookeeper", func(t *testing.T) {
		storetest.RunConformance(t, func(t *testing.T) storetest.Harness {
			zk := storeharness.NewZooKeeper(t, zkAddr)
			return countedZK{newCounted(zk), zk}
		})
	})
}

// The counted stores count what reaches the stores beneath, linear reads
// included.
func TestCountsEachCall(t *testing.T) {
	zk := storeharness.NewZooKeeper(t, zkAddr)
	h := newCounted(zk)
	ctx := t.Context()
	lr, ok := h.Snapshots().(storage.LinearReads)
	if !ok {
		t.Fatal("counted over zkstore does not offer storage.LinearReads")
	}
	if _, _, _, err := lr.GetSnapshotLinear(ctx, "p", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := h.Snapshots().GetSnapshot(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Orphans().ListProducerDirs(ctx); err != nil {
		t.Fatal(err)
	}
	h.ops.mu.Lock()
	defer h.ops.mu.Unlock()
	for _, op := range []string{"zookeeper sync_get", "zookeeper get", "remote list"} {
		if h.ops.n[op] != 1 {
			t.Errorf("%s counted %d times, want 1 (all: %v)", op, h.ops.n[op], h.ops.n)
		}
	}
}

var (
	_ storetest.Stalls  = countedZK{}
	_ storetest.Outages = countedZK{}
	_ storetest.Wrapper = (*countedHarness)(nil)
)
