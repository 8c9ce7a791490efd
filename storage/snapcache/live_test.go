package snapcache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// sibling is a second sidecar on f's ZooKeeper root and file store, with a
// session, a cache and a registry of its own.
func (f *fixture) sibling(t *testing.T, mod func(*Config)) *fixture {
	t.Helper()
	ctx := t.Context()
	zc, err := zk.Connect(ctx, zk.Config{Address: zkAddr, Root: f.zc.Root(), Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	store := &countingStore{Store: zkstore.New(zc)}
	cfg := Config{Watcher: zc, Snapshots: store, Files: f.files, ArmRetry: f.cache.armRetry}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	reg, err := producer.New(producer.Config{Snapshots: c.Snapshots(), Files: c.Files(),
		FastPaths: storage.FastPathsOf(c.Snapshots(), c.Files())})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{zc: zc, store: store, files: f.files, cache: c, registry: reg, raw: f.raw}
}

// registerTables registers a snapshot of n tables, table i at offset off+i.
func (f *fixture) registerTables(t *testing.T, id string, n int, off int64) {
	t.Helper()
	tables := make([]producer.TableInput, n)
	for i := range tables {
		o := off + int64(i)
		tables[i] = producer.TableInput{TableID: int64(i + 1), Buckets: []producer.BucketInput{{BucketID: 0, LogEndOffset: &o}}}
	}
	res, err := f.registry.Register(t.Context(), producer.RegisterInput{ProducerID: &id, Tables: tables})
	if err != nil || res != producer.Created {
		t.Fatalf("register %s: %v %v", id, res, err)
	}
}

// liveAccount checks every entry c holds against ZooKeeper and the file
// store, read directly: a cached snapshot is the live znode's state, a
// cached absence has no znode, a cached file is named by a live snapshot
// and holds what the store holds. It then checks that the cache's own
// accounting (Stats: entries, bytes, absences, files) is exactly what those
// live entries explain, and returns the stats.
func liveAccount(t *testing.T, f *fixture) Stats {
	t.Helper()
	ctx := t.Context()
	c := f.cache
	c.mu.Lock()
	var entries []*entry
	for el := c.lru.Front(); el != nil; el = el.Next() {
		entries = append(entries, el.Value.(*entry))
	}
	c.mu.Unlock()
	direct := zkstore.New(f.zc)
	named := map[string]string{} // path -> producer, of the live snapshots read below
	var wantBytes int64
	var absences, files int
	for _, e := range entries {
		if e.key.file {
			continue
		}
		snap, inc, found, err := direct.GetSnapshot(ctx, e.key.name)
		if err != nil {
			t.Fatal(err)
		}
		if found != e.found || (found && inc != e.inc) {
			t.Errorf("cached %s: found %v %+v; ZooKeeper has found %v %+v", e.key.name, e.found, e.inc, found, inc)
		}
		for _, ref := range snap.Tables {
			named[ref.OffsetsPath] = e.key.name
		}
		if !e.found {
			absences++
		}
		wantBytes += snapSize(e.key.name, snap)
	}
	for _, e := range entries {
		if !e.key.file {
			continue
		}
		files++
		owner, live := named[e.key.name]
		if e.owner == "" {
			t.Errorf("cached file %s has no owner", e.key.name)
			continue
		}
		if !live {
			// A file may be cached with no znode entry (this sidecar wrote
			// it, or its znode entry was evicted): its owner's snapshot
			// must still name it.
			snap, _, found, err := direct.GetSnapshot(ctx, e.owner)
			if err != nil {
				t.Fatal(err)
			}
			for _, ref := range snap.Tables {
				live = live || (found && ref.OffsetsPath == e.key.name)
			}
			owner = e.owner
		}
		if !live || owner != e.owner {
			t.Errorf("cached file %s (owner %s) is named by no live snapshot of its owner", e.key.name, e.owner)
			continue
		}
		stored, err := f.files.ReadOffsets(ctx, e.key.name)
		if err != nil {
			t.Errorf("cached file %s: %v", e.key.name, err)
			continue
		}
		wantBytes += fileSize(e.key.name, stored)
	}
	st := c.Stats()
	if st.Entries != len(entries) || st.Absences != absences || st.Files != files || st.Bytes != wantBytes {
		t.Errorf("cache accounts %d entries, %d absences, %d files, %d bytes; the live entries explain %d, %d, %d, %d",
			st.Entries, st.Absences, st.Files, st.Bytes, len(entries), absences, files, wantBytes)
	}
	return st
}

// TestCacheHoldsOnlyLiveAcrossSidecars: two sidecars share one ZooKeeper
// and one remote directory; thousands of times B registers a two-table
// snapshot, A reads it (and ids that never exist), B deletes it and A reads
// it again. A's cache then holds the snapshots still live, their files and
// no more absences than its bound: before, every deleted snapshot left its
// two files in A's cache until evicted.
func TestCacheHoldsOnlyLiveAcrossSidecars(t *testing.T) {
	const (
		workers     = 16
		cycles      = 2000 // in all
		keepEvery   = 100  // one cycle in keepEvery leaves its snapshot live
		maxAbsences = 64
	)
	a := newFixture(t, zkAddr, func(c *Config) { c.MaxAbsences = maxAbsences }, nil)
	b := a.sibling(t, nil)
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < cycles; i += workers {
				id := fmt.Sprint("cycle-", i)
				if err := cycle(ctx, a, b, id, i%keepEvery == 0); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	a.syncInner(t) // every notification of B's writes has reached A
	b.syncInner(t)
	live := cycles / keepEvery
	st := liveAccount(t, a)
	if st.Files != 2*live || st.Absences != maxAbsences || st.Entries != live+2*live+maxAbsences {
		t.Errorf("A holds %d files, %d absences, %d entries; want the %d live snapshots, their %d files and %d absences",
			st.Files, st.Absences, st.Entries, live, 2*live, maxAbsences)
	}
	if st.Evictions == 0 {
		t.Errorf("no absence evicted beyond the bound: %+v", st)
	}
	// B wrote every file and read none: it holds the live snapshots' files.
	if st := liveAccount(t, b); st.Files != 2*live {
		t.Errorf("B holds %d files, want the %d of its live snapshots", st.Files, 2*live)
	}
}

// cycle is one round of TestCacheHoldsOnlyLiveAcrossSidecars.
func cycle(ctx context.Context, a, b *fixture, id string, keep bool) error {
	offs := []int64{1, 2}
	tables := make([]producer.TableInput, len(offs))
	for i := range offs {
		tables[i] = producer.TableInput{TableID: int64(i + 1), Buckets: []producer.BucketInput{{BucketID: 0, LogEndOffset: &offs[i]}}}
	}
	if res, err := b.registry.Register(ctx, producer.RegisterInput{ProducerID: &id, Tables: tables}); err != nil || res != producer.Created {
		return fmt.Errorf("register %s on B: %v %v", id, res, err)
	}
	if err := a.store.Store.Sync(ctx); err != nil {
		return err
	}
	s, found, err := a.registry.Get(ctx, &id)
	if err != nil || !found || len(s.Tables) != 2 || s.Tables[1].Buckets[0].LogEndOffset != 2 {
		return fmt.Errorf("get %s on A: %+v %v %v", id, s, found, err)
	}
	ghost := "ghost-" + id
	if _, found, err := a.registry.Get(ctx, &ghost); err != nil || found {
		return fmt.Errorf("get %s on A: %v %v", ghost, found, err)
	}
	if keep {
		return nil
	}
	if err := b.registry.Delete(ctx, &id, nil); err != nil {
		return fmt.Errorf("delete %s on B: %v", id, err)
	}
	if err := a.store.Store.Sync(ctx); err != nil {
		return err
	}
	if _, found, err := a.registry.Get(ctx, &id); err != nil || found {
		return fmt.Errorf("get %s on A after B's delete: %v %v", id, found, err)
	}
	return nil
}

// TestCoordinatorWritesLeaveNoFiles: a writer that is no sidecar (a
// coordinator's algorithm, straight on ZooKeeper and the files) replaces
// and deletes snapshots this sidecar has read; the replaced snapshot's old
// file and the deleted snapshot's file leave the cache when the
// notification arrives.
func TestCoordinatorWritesLeaveNoFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		// change is the coordinator's write after A read the snapshot;
		// live is how many files A may hold afterwards.
		change func(t *testing.T, f *fixture, id string)
		live   int
	}{
		{"delete", func(t *testing.T, f *fixture, id string) { f.rawDelete(t, id) }, 0},
		{"replace", func(t *testing.T, f *fixture, id string) { f.rawWrite(t, id, 99) }, 0},
		{"delete and create again", func(t *testing.T, f *fixture, id string) {
			f.rawDelete(t, id)
			f.rawWrite(t, id, 7)
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, zkAddr, nil, nil)
			ctx := t.Context()
			const rounds = 200
			for i := range rounds {
				id := fmt.Sprint("coord-", i)
				f.rawWrite(t, id, int64(i))
				f.syncInner(t)
				if got := f.get(t, id); got != int64(i) {
					t.Fatalf("%s: %d, want %d", id, got, i)
				}
				snap, _, _, err := f.store.Store.GetSnapshot(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				old := snap.Tables[0].OffsetsPath
				if _, ok := f.cache.Files().(storage.CachedFiles).CachedOffsets(old); !ok {
					t.Fatalf("%s: the file just read is not cached", id)
				}
				tc.change(t, f, id)
				// The coordinator deletes the old file straight from storage.
				if err := f.files.DeleteOffsets(ctx, old); err != nil {
					t.Fatal(err)
				}
				f.syncInner(t)
				if _, ok := f.cache.Files().(storage.CachedFiles).CachedOffsets(old); ok {
					t.Fatalf("%s: %s: the old file is still cached", id, tc.name)
				}
			}
			if st := liveAccount(t, f); st.Files != tc.live {
				t.Fatalf("%d files cached after %d rounds, want %d", st.Files, rounds, tc.live)
			}
		})
	}
}

// TestAbsencesBoundedOnTheirOwn: absences beyond MaxAbsences go, least
// recently used first, and take no snapshot or file with them; a polled
// absence stays.
func TestAbsencesBoundedOnTheirOwn(t *testing.T) {
	const max = 8
	f := newFixture(t, zkAddr, func(c *Config) { c.MaxAbsences = max }, nil)
	for i := range 5 {
		f.registerTables(t, fmt.Sprint("kept-", i), 2, int64(i))
		f.get(t, fmt.Sprint("kept-", i))
	}
	const polled = "polled"
	before := f.store.gets.Load()
	for i := range 100 {
		if got := f.get(t, fmt.Sprint("never-", i)); got != -1 {
			t.Fatalf("never-%d: %d", i, got)
		}
		if got := f.get(t, polled); got != -1 {
			t.Fatalf("polled: %d", got)
		}
	}
	if n := f.store.gets.Load() - before; n != 101 {
		t.Fatalf("%d ZooKeeper reads, want 101 (the polled id once)", n)
	}
	st := liveAccount(t, f)
	if st.Absences != max || st.Files != 10 || st.Entries != 5+10+max || st.Evictions != 100+1-max {
		t.Fatalf("stats %+v: want %d absences beside 5 snapshots and their 10 files, %d evicted", st, max, 100+1-max)
	}
	before = f.store.gets.Load()
	for i := range 5 {
		f.get(t, fmt.Sprint("kept-", i))
	}
	if n := f.store.gets.Load() - before; n != 0 {
		t.Fatalf("%d reads of snapshots that absences must not have evicted", n)
	}
}

// TestLostWatchDropsFiles: a deletion made while the watch is not set is
// never notified, so losing the watch drops the file entries too, and
// nothing is cached until it is set again.
func TestLostWatchDropsFiles(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	f.registerTables(t, "w", 2, 1)
	f.get(t, "w")
	if st := f.cache.Stats(); st.Files != 2 {
		t.Fatalf("stats %+v, want 2 files", st)
	}
	f.cache.lose(true)
	if st := f.cache.Stats(); st.Files != 0 || st.Entries != 0 {
		t.Fatalf("stats %+v after the watch was lost, want nothing", st)
	}
	// Not watching: a write and a read keep nothing.
	f.registerTables(t, "w2", 2, 1)
	f.get(t, "w2")
	if st := f.cache.Stats(); st.Entries != 0 {
		t.Fatalf("stats %+v while not watching, want nothing", st)
	}
	f.cache.kickArm()
	waitWatching(t, f.cache)
	f.get(t, "w2")
	if st := liveAccount(t, f); st.Files != 2 {
		t.Fatalf("stats %+v once watching again, want 2 files", st)
	}
}

// waitWatching waits until the cache's watch is set (see
// internal/eventually: not a timing assertion).
func waitWatching(t *testing.T, c *Cache) {
	t.Helper()
	eventually.Nil(t, "the cache's watch", func() error {
		if s := c.Stats(); !s.Watching {
			return fmt.Errorf("watch not set yet: %+v", s)
		}
		return nil
	})
}

// rawExpired stores, through the other client, a one-table snapshot that
// expired an hour ago, as a coordinator may have left it.
func (f *fixture) rawExpired(t *testing.T, id string, off int64) string {
	t.Helper()
	ctx := t.Context()
	path, err := f.files.WriteOffsets(ctx, id, offsets.TableOffsets{TableID: 1, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: off}}})
	if err != nil {
		t.Fatal(err)
	}
	data := flussjson.EncodeSnapshot(offsets.Snapshot{ExpirationTime: time.Now().Add(-time.Hour).UnixMilli(), Tables: []offsets.FileRef{{TableID: 1, OffsetsPath: path}}})
	full := f.zc.FullPath(zkstore.ProducersPath + "/" + id)
	f.raw.Create(f.zc.Root(), nil, 0, gozk.WorldACL(gozk.PermAll))
	f.raw.Create(f.zc.FullPath(zkstore.ProducersPath), nil, 0, gozk.WorldACL(gozk.PermAll))
	if _, err := f.raw.Create(full, data, 0, gozk.WorldACL(gozk.PermAll)); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOwnWritesSettleTheirFiles: the files a register writes stay cached
// through its own create (a multi of data changes) and its own replace of
// an expired snapshot, whose old file goes; another writer's later change
// or deletion of the snapshot removes them.
func TestOwnWritesSettleTheirFiles(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	cached := f.cache.Files().(storage.CachedFiles)
	paths := func(id string) []string {
		t.Helper()
		snap, _, found, err := f.store.Store.GetSnapshot(t.Context(), id)
		if err != nil || !found {
			t.Fatalf("%s: %v %v", id, found, err)
		}
		var ps []string
		for _, ref := range snap.Tables {
			ps = append(ps, ref.OffsetsPath)
		}
		return ps
	}
	held := func(ps []string) int {
		n := 0
		for _, p := range ps {
			if _, ok := cached.CachedOffsets(p); ok {
				n++
			}
		}
		return n
	}

	f.registerTables(t, "created", 2, 1)
	created := paths("created")
	f.syncInner(t)
	if n := held(created); n != 2 {
		t.Fatalf("%d of the 2 files of an own create cached", n)
	}
	f.rawWrite(t, "created", 5) // another writer replaces it
	f.syncInner(t)
	if n := held(created); n != 0 {
		t.Fatalf("%d files of a replaced snapshot still cached", n)
	}

	old := f.rawExpired(t, "expired", 3)
	f.syncInner(t)
	if got := f.get(t, "expired"); got != 3 {
		t.Fatalf("expired snapshot: %d", got)
	}
	if n := held([]string{old}); n != 1 {
		t.Fatal("the expired snapshot's file was not cached by the get")
	}
	f.registerTables(t, "expired", 2, 10) // an own replace
	replaced := paths("expired")
	f.syncInner(t)
	if n := held(replaced); n != 2 {
		t.Fatalf("%d of the 2 files of an own replace cached", n)
	}
	if n := held([]string{old}); n != 0 {
		t.Fatal("the replaced snapshot's old file is still cached")
	}
	f.rawDelete(t, "expired")
	f.syncInner(t)
	if n := held(replaced); n != 0 {
		t.Fatalf("%d files of a deleted snapshot still cached", n)
	}
	liveAccount(t, f)
}

// gatedFiles holds every ReadOffsets until gate is closed, once entered
// has been told.
type gatedFiles struct {
	storage.FileStore
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedFiles) ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error) {
	if g.gate != nil {
		g.entered <- struct{}{}
		<-g.gate
	}
	return g.FileStore.ReadOffsets(ctx, path)
}

// TestFileReadAfterDeletionIsNotKept: a GET read the znode, then the
// snapshot is deleted while the GET reads its file; the file's reply comes
// after the notification, and is not kept, since no cached snapshot names
// it any more.
func TestFileReadAfterDeletionIsNotKept(t *testing.T) {
	var gf *gatedFiles
	f := newFixture(t, zkAddr, func(c *Config) {
		gf = &gatedFiles{FileStore: c.Files, entered: make(chan struct{})}
		c.Files = gf
	}, nil)
	const id = "racing"
	f.rawWrite(t, id, 4)
	f.syncInner(t)
	gf.gate = make(chan struct{})
	got := make(chan int64, 1)
	go func() {
		s, found, err := f.registry.Get(t.Context(), ptr(id))
		if err != nil || !found {
			got <- -2
			return
		}
		got <- s.Tables[0].Buckets[0].LogEndOffset
	}()
	<-gf.entered // the znode is cached, the file is being read
	if !f.cache.Snapshots().(storage.CachedSnapshots).HoldsSnapshot(id) {
		t.Fatal("the znode is not cached")
	}
	f.rawDelete(t, id)
	f.syncInner(t)
	close(gf.gate)
	if off := <-got; off != 4 {
		t.Fatalf("the get answered %d, want 4 (the file still exists)", off)
	}
	gf.gate = nil
	if st := liveAccount(t, f); st.Files != 0 {
		t.Fatalf("%d files kept of a snapshot deleted before their read returned", st.Files)
	}
}

// unknownCreates applies every create and then reports its outcome as
// unknown, as a create whose reply was lost does.
type unknownCreates struct {
	storage.SnapshotStore
}

func (u unknownCreates) CreateSnapshot(ctx context.Context, id string, s offsets.Snapshot) (bool, error) {
	if _, err := u.SnapshotStore.CreateSnapshot(ctx, id, s); err != nil {
		return false, err
	}
	return false, storeerr.New(storeerr.ErrUnavailable, true, errors.New("the reply was lost"))
}

// TestUnknownCreateLeavesNoStaleFiles: the files of a register whose create
// was applied but reported unknown stay pending; another writer's change of
// the snapshot, with no write of this sidecar in flight, removes them.
func TestUnknownCreateLeavesNoStaleFiles(t *testing.T) {
	f := newFixture(t, zkAddr, func(c *Config) { c.Snapshots = unknownCreates{c.Snapshots} }, nil)
	ctx := t.Context()
	off := int64(3)
	id := "lost-reply"
	_, err := f.registry.Register(ctx, producer.RegisterInput{
		ProducerID: &id,
		Tables:     []producer.TableInput{{TableID: 1, Buckets: []producer.BucketInput{{BucketID: 0, LogEndOffset: &off}}}},
	})
	t.Logf("register with a lost reply: %v", err) // settled or not, the files were written
	f.syncInner(t)
	if st := f.cache.Stats(); st.Files != 1 {
		t.Fatalf("stats %+v: want the written file cached, pending", st)
	}
	f.rawWrite(t, id, 8) // another writer replaces it
	f.syncInner(t)
	if st := liveAccount(t, f); st.Files != 0 {
		t.Fatalf("%d files of a replaced snapshot still cached", st.Files)
	}
}
