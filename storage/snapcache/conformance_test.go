package snapcache_test

import (
	"context"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/storeharness"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
)

// cached is the cache's decorators over zkstore and remote behind the
// portable layer, as the sidecar stacks them; raw access, stalls and
// outages are the ZooKeeper harness's. The cache has no OrphanStore:
// orphan cleanup goes to remote.
type cached struct {
	*storeharness.ZooKeeper
	snaps storage.SnapshotStore
	files storage.FileStore
}

func newCached(t *testing.T) *cached {
	t.Helper()
	// The deadline only prevents a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := storeharness.NewZooKeeper(t, snapcache.ZooKeeperAddr())
	c, err := snapcache.New(ctx, snapcache.Config{Watcher: h.Client, Snapshots: h.Snapshots(), Files: h.Files()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &cached{ZooKeeper: h, snaps: c.Snapshots(), files: c.Files()}
}

func (h *cached) Snapshots() storage.SnapshotStore { return h.snaps }
func (h *cached) Files() storage.FileStore         { return h.files }
func (h *cached) Orphans() storage.OrphanStore     { return nil }

// Inner is what the cache wraps: the stores behind the layer.
func (h *cached) Inner() (storage.SnapshotStore, storage.FileStore) {
	return h.ZooKeeper.Snapshots(), h.ZooKeeper.Files()
}

// TestStoreConformance runs the conformance suite against the snapshot
// cache over zkstore and remote.
func TestStoreConformance(t *testing.T) {
	storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return newCached(t) })
}

var (
	_ storetest.Stalls  = (*cached)(nil)
	_ storetest.Outages = (*cached)(nil)
	_ storetest.Wrapper = (*cached)(nil)
)
