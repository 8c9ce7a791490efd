package snapcache

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// waitIndexed waits until the cache has an index of producer ids (see
// internal/eventually: not a timing assertion).
func waitIndexed(t *testing.T, c *Cache) {
	t.Helper()
	eventually.Nil(t, "the index of producer ids", func() error {
		if s := c.Stats(); s.IndexedIDs < 0 {
			return fmt.Errorf("not indexed yet: %+v", s)
		}
		return nil
	})
}

func hints(c *Cache) storage.AbsenceHints { return c.Snapshots().(storage.AbsenceHints) }

func (f *fixture) rawDelete(t *testing.T, id string) {
	t.Helper()
	if err := f.raw.Delete(f.zc.FullPath(zkstore.ProducersPath+"/"+id), -1); err != nil {
		t.Fatal(err)
	}
}

// TestIndexFollowsEveryWriter: an id is known absent until this sidecar or
// another writer creates it, and again once another writer deletes it; a
// register of a new producer then writes without reading the znode first.
func TestIndexFollowsEveryWriter(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	waitIndexed(t, f.cache)
	h := hints(f.cache)
	if !h.KnownAbsent("new") {
		t.Fatal("an id never created is not known absent")
	}
	gets := f.store.gets.Load()
	f.register(t, "a", 1)
	if n := f.store.gets.Load() - gets; n != 0 {
		t.Fatalf("the register of a new producer read ZooKeeper %d times first", n)
	}
	if h.KnownAbsent("a") {
		t.Fatal("known absent right after this sidecar created it")
	}
	f.rawWrite(t, "b", 1)
	f.syncInner(t) // the creation's notification has arrived
	if h.KnownAbsent("b") {
		t.Fatal("known absent after another writer created it")
	}
	f.rawDelete(t, "b")
	f.syncInner(t)
	if !h.KnownAbsent("b") {
		t.Fatal("not known absent after another writer deleted it")
	}
	if f.get(t, "a") != 1 {
		t.Fatal("get a")
	}
	if st := f.cache.Stats(); st.KnownAbsent == 0 || st.IndexedIDs != 1 {
		t.Fatalf("stats %+v, want some known-absent answers and 1 id indexed", st)
	}
}

// TestIndexListsWhatIsThere: a cache started beside existing snapshots
// knows them; one with more ids than its entry bound keeps no index, nor
// does one whose listing fails.
func TestIndexListsWhatIsThere(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	f.rawWrite(t, "x", 1)
	f.rawWrite(t, "y", 1)
	ctx := t.Context()
	failing := &countingStore{Store: f.store.Store, listErr: errors.New("reply too large")}
	for _, tc := range []struct {
		maxEntries int
		store      *countingStore
		indexed    bool
	}{{10, f.store, true}, {1, f.store, false}, {10, failing, false}} {
		c, err := New(ctx, Config{Watcher: f.zc, Snapshots: tc.store, Files: f.files, MaxEntries: tc.maxEntries, ArmRetry: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if tc.indexed {
			waitIndexed(t, c)
			if h := hints(c); h.KnownAbsent("x") || h.KnownAbsent("y") || !h.KnownAbsent("z") {
				t.Fatalf("x %v y %v z %v: want false false true", h.KnownAbsent("x"), h.KnownAbsent("y"), h.KnownAbsent("z"))
			}
		} else {
			eventually.Nil(t, "the index turned off", func() error {
				c.mu.Lock()
				state := c.index.state
				c.mu.Unlock()
				if state != indexOff {
					return fmt.Errorf("index state %v, want too large", state)
				}
				return nil
			})
			if hints(c).KnownAbsent("z") {
				t.Fatal("known absent without an index")
			}
			if n := tc.store.lists.Load(); tc.store == failing && n != 1 {
				t.Fatalf("a failed listing was sent %d times on one connection, want once", n)
			}
		}
		c.Close()
	}
}

// TestCreationDuringListingIsNotKnownAbsent: a creation notified after the
// store answered the listing but before the cache installed it is missing
// from the listing; the id stays unknown, not absent, until a later
// notification settles it.
func TestCreationDuringListingIsNotKnownAbsent(t *testing.T) {
	entered, gate := make(chan struct{}, 4), make(chan struct{})
	f := newFixture(t, zkAddr, func(c *Config) {
		s := c.Snapshots.(*countingStore)
		s.listEntered, s.listGate = entered, gate
	}, nil)
	select {
	case <-entered:
	case <-t.Context().Done():
		t.Fatal("no listing")
	}
	f.rawWrite(t, "late", 1)
	f.syncInner(t) // notified while the listing is held
	close(gate)
	waitIndexed(t, f.cache)
	h := hints(f.cache)
	if h.KnownAbsent("late") {
		t.Fatal("an id created during the listing is known absent")
	}
	if !h.KnownAbsent("other") {
		t.Fatal("an id never created is not known absent")
	}
	f.rawDelete(t, "late")
	f.syncInner(t)
	if !h.KnownAbsent("late") {
		t.Fatal("a later deletion did not settle the id")
	}
}

// TestSyncKeepsAndLostConnectionDropsTheIndex: a Sync keeps the index (the
// notifications before its reply kept it current); a lost connection drops
// it, and it is listed again afterwards.
func TestSyncKeepsAndLostConnectionDropsTheIndex(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	waitIndexed(t, f.cache)
	lists := f.store.lists.Load()
	f.rawWrite(t, "during", 1)
	if err := f.cache.Snapshots().Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := f.store.lists.Load(); n != lists {
		t.Fatalf("Sync listed the ids again (%d listings, want %d)", n, lists)
	}
	h := hints(f.cache)
	if h.KnownAbsent("during") {
		t.Fatal("an id created before the Sync returned is known absent after it")
	}
	if !h.KnownAbsent("never") {
		t.Fatal("the index did not survive the Sync")
	}
	// A lost connection: see TestReconnectSetsWatchAgain for the cut; here
	// the cache's own handler is driven directly.
	f.cache.onEvent(zk.Event{Type: zk.EventSession, State: zk.StateDisconnected})
	if f.cache.Stats().IndexedIDs >= 0 || h.KnownAbsent("anything") {
		t.Fatal("the index outlived the connection")
	}
}
