package snapcache

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// fixture is one sidecar's stores: a ZooKeeper client, the producer store
// over it (counting reads), a local file store, the cache and a registry
// over the cache.
type fixture struct {
	zc       *zk.Client
	store    *countingStore
	files    *remotestore.Store
	cache    *Cache
	registry *producer.Registry
	raw      *gozk.Conn // another client, straight to the server
}

type countingStore struct {
	*zkstore.Store
	gets atomic.Int64
	// gate, when set, holds every GetSnapshot until it is closed
	gate chan struct{}
	// entered receives one value per GetSnapshot that reached the store
	entered chan struct{}
	// listEntered, when set, receives one value per listing once the store
	// answered it; listGate, when set, then holds the listing until closed
	listEntered, listGate chan struct{}
	lists                 atomic.Int64 // listings answered
	listErr               error        // when set, every listing fails with it
}

func (s *countingStore) ListProducerIDs(ctx context.Context) ([]string, error) {
	ids, err := s.Store.ListProducerIDs(ctx)
	if s.listErr != nil {
		ids, err = nil, s.listErr
	}
	s.lists.Add(1)
	if s.listEntered != nil {
		s.listEntered <- struct{}{}
	}
	if s.listGate != nil {
		<-s.listGate
	}
	return ids, err
}

func (s *countingStore) GetSnapshot(ctx context.Context, id string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	s.enter()
	return s.Store.GetSnapshot(ctx, id)
}

// GetSnapshotLinear is a read too, counted and gated alike.
func (s *countingStore) GetSnapshotLinear(ctx context.Context, id string, wait func(context.Context) error) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	s.enter()
	return s.Store.GetSnapshotLinear(ctx, id, wait)
}

func (s *countingStore) enter() {
	s.gets.Add(1)
	if s.entered != nil {
		s.entered <- struct{}{}
	}
	if s.gate != nil {
		<-s.gate
	}
}

func newFixture(t *testing.T, addr string, mod func(*Config), zkmod func(*zk.Config)) *fixture {
	t.Helper()
	zktest.SkipIfShort(t)
	ctx := t.Context()
	root := zktest.UniqueRoot()
	zcfg := zk.Config{Address: addr, Root: root, Logger: hclog.NewNullLogger()}
	if zkmod != nil {
		zkmod(&zcfg)
	}
	zc, err := zk.Connect(ctx, zcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	files, err := remotestore.Open(ctx, "file://"+t.TempDir(), remotestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	store := &countingStore{Store: zkstore.New(zc)}
	cfg := Config{Watcher: zc, Snapshots: store, Files: files, ArmRetry: 50 * time.Millisecond}
	if mod != nil {
		mod(&cfg)
	}
	cache, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	reg, err := producer.New(producer.Config{
		Snapshots: cache.Snapshots(), Files: cache.Files(),
		FastPaths: storage.FastPathsOf(cache.Snapshots(), cache.Files()),
	})
	if err != nil {
		t.Fatal(err)
	}
	raw := zktest.RawConn(t, zkAddr)
	return &fixture{zc: zc, store: store, files: files, cache: cache, registry: reg, raw: raw}
}

func (f *fixture) register(t *testing.T, id string, off int64) {
	t.Helper()
	res, err := f.registry.Register(t.Context(), producer.RegisterInput{
		ProducerID: &id,
		Tables:     []producer.TableInput{{TableID: 1, Buckets: []producer.BucketInput{{BucketID: 0, LogEndOffset: &off}}}},
	})
	if err != nil || res != producer.Created {
		t.Fatalf("register %s: %v %v", id, res, err)
	}
}

// get returns the producer's first bucket offset, or -1 when there is no
// snapshot.
func (f *fixture) get(t *testing.T, id string) int64 {
	t.Helper()
	s, found, err := f.registry.Get(t.Context(), &id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	if !found {
		return -1
	}
	return s.Tables[0].Buckets[0].LogEndOffset
}

// rawWrite stores, through the other client, a snapshot of one table at
// offset off, with its file written straight to the file store: what a
// coordinator or another sidecar does.
func (f *fixture) rawWrite(t *testing.T, id string, off int64) {
	t.Helper()
	ctx := t.Context()
	path, err := f.files.WriteOffsets(ctx, id, offsets.TableOffsets{TableID: 1, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: off}}})
	if err != nil {
		t.Fatal(err)
	}
	data := flussjson.EncodeSnapshot(offsets.Snapshot{ExpirationTime: time.Now().Add(time.Hour).UnixMilli(), Tables: []offsets.FileRef{{TableID: 1, OffsetsPath: path}}})
	full := f.zc.FullPath(zkstore.ProducersPath + "/" + id)
	if _, err := f.raw.Set(full, data, -1); errors.Is(err, gozk.ErrNoNode) {
		_, err = f.raw.Create(full, data, 0, gozk.WorldACL(gozk.PermAll))
		if errors.Is(err, gozk.ErrNoNode) {
			f.raw.Create(f.zc.Root(), nil, 0, gozk.WorldACL(gozk.PermAll))
			f.raw.Create(f.zc.FullPath(zkstore.ProducersPath), nil, 0, gozk.WorldACL(gozk.PermAll))
			_, err = f.raw.Create(full, data, 0, gozk.WorldACL(gozk.PermAll))
		}
		if err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
}

// syncInner makes this client's session catch up with the other client's
// writes through the store under the cache, as the read barrier does:
// the notifications for those writes are delivered before it returns.
func (f *fixture) syncInner(t *testing.T) {
	t.Helper()
	if err := f.store.Store.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestGetServedFromMemoryUntilAnotherClientWrites(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	if !f.cache.Stats().Watching {
		t.Fatal("not watching after New")
	}
	const id = "p1"
	// Absent: cached too, since recovering clients poll an id before it exists.
	for range 3 {
		if got := f.get(t, id); got != -1 {
			t.Fatalf("get before register: %d", got)
		}
	}
	if n := f.store.gets.Load(); n != 1 {
		t.Fatalf("absent znode read %d times, want 1", n)
	}
	// Another client creates it: the notification makes it visible.
	f.rawWrite(t, id, 10)
	f.syncInner(t)
	if got := f.get(t, id); got != 10 {
		t.Fatalf("after another client's create: %d, want 10", got)
	}
	before := f.store.gets.Load()
	for range 5 {
		if got := f.get(t, id); got != 10 {
			t.Fatalf("cached get: %d", got)
		}
	}
	if n := f.store.gets.Load() - before; n != 0 {
		t.Fatalf("%d ZooKeeper reads for cached gets, want 0", n)
	}
	// Another client changes it.
	f.rawWrite(t, id, 20)
	f.syncInner(t)
	if got := f.get(t, id); got != 20 {
		t.Fatalf("after another client's change: %d, want 20", got)
	}
	// Another client deletes it.
	if err := f.raw.Delete(f.zc.FullPath(zkstore.ProducersPath+"/"+id), -1); err != nil {
		t.Fatal(err)
	}
	f.syncInner(t)
	if got := f.get(t, id); got != -1 {
		t.Fatalf("after another client's delete: %d, want absent", got)
	}
	st := f.cache.Stats()
	if st.Hits == 0 || st.Misses == 0 || st.Invalidations < 3 {
		t.Fatalf("stats %+v", st)
	}
}

// TestOwnWritesVisibleAtOnce: register, replace (expired snapshot) and
// delete through the registry are seen by the next get without waiting for
// any notification.
// TestFastPathsAreGivenNotDiscovered: the registry answers from the
// cache's memory only through the fast paths its config names; over the
// same cache without them it takes the plain path, and answers the same.
func TestFastPathsAreGivenNotDiscovered(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	f.register(t, "p1", 7)
	f.get(t, "p1")
	if _, _, found, ok := f.registry.GetCached("p1", nil); !ok || !found {
		t.Fatalf("with the fast paths: GetCached ok=%v found=%v, want an answer from memory", ok, found)
	}
	plain, err := producer.New(producer.Config{Snapshots: f.cache.Snapshots(), Files: f.cache.Files()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := plain.GetCached("p1", nil); ok {
		t.Fatal("without fast paths: GetCached answered from the cache's memory")
	}
	id := "p1"
	if s, found, err := plain.Get(t.Context(), &id); err != nil || !found || s.Tables[0].Buckets[0].LogEndOffset != 7 {
		t.Fatalf("plain get: %+v found=%v err=%v, want offset 7", s, found, err)
	}
}

func TestOwnWritesVisibleAtOnce(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	const id = "own"
	if got := f.get(t, id); got != -1 {
		t.Fatal(got)
	}
	f.register(t, id, 5)
	if got := f.get(t, id); got != 5 {
		t.Fatalf("after register: %d", got)
	}
	if err := f.registry.Delete(t.Context(), ptr(id), nil); err != nil {
		t.Fatal(err)
	}
	if got := f.get(t, id); got != -1 {
		t.Fatalf("after delete: %d", got)
	}
	f.register(t, id, 6)
	if got := f.get(t, id); got != 6 {
		t.Fatalf("after second register: %d", got)
	}
}

func waitEntered(ctx context.Context, t *testing.T, s *countingStore) {
	t.Helper()
	select {
	case <-s.entered:
	case <-ctx.Done():
		close(s.gate)
		t.Fatal("no read reached ZooKeeper")
	}
}

func ptr(s string) *string { return &s }

// TestSecondSidecarWriteVisible: two sidecars on one root, each with its
// own session and cache; what one registers or deletes the other sees.
func TestSecondSidecarWriteVisible(t *testing.T) {
	a := newFixture(t, zkAddr, nil, nil)
	// b shares a's root and files.
	ctx := t.Context()
	zb, err := zk.Connect(ctx, zk.Config{Address: zkAddr, Root: a.zc.Root(), Logger: hclog.NewNullLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zb.Close)
	cb, err := New(ctx, Config{Watcher: zb, Snapshots: zkstore.New(zb), Files: a.files})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cb.Close)
	rb, err := producer.New(producer.Config{Snapshots: cb.Snapshots(), Files: cb.Files(),
		FastPaths: storage.FastPathsOf(cb.Snapshots(), cb.Files())})
	if err != nil {
		t.Fatal(err)
	}
	b := &fixture{zc: zb, cache: cb, registry: rb}

	const id = "shared"
	if a.get(t, id) != -1 || b.get(t, id) != -1 {
		t.Fatal("present before register")
	}
	b.register(t, id, 7)
	a.syncInner(t)
	if got := a.get(t, id); got != 7 {
		t.Fatalf("a after b's register: %d", got)
	}
	if err := b.registry.Delete(ctx, ptr(id), nil); err != nil {
		t.Fatal(err)
	}
	a.syncInner(t)
	if got := a.get(t, id); got != -1 {
		t.Fatalf("a after b's delete: %d", got)
	}
}

// TestConcurrentGetsShareOneRead: readers that arrive while a read of the
// same id is in flight wait for it instead of sending their own.
func TestConcurrentGetsShareOneRead(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	const id = "storm"
	f.rawWrite(t, id, 3)
	f.syncInner(t)
	f.store.gate = make(chan struct{})
	f.store.entered = make(chan struct{}, 100)
	const readers = 20
	var wg sync.WaitGroup
	results := make(chan int64, readers)
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, found, err := f.registry.Get(context.Background(), ptr(id))
			if err != nil || !found {
				results <- -2
				return
			}
			results <- s.Tables[0].Buckets[0].LogEndOffset
		}()
	}
	ctx := t.Context()
	waitEntered(ctx, t, f.store)
	eventually.Nil(t, "the readers joining the read in flight", func() error {
		if st := f.cache.Stats(); st.Shared < readers-1 {
			return fmt.Errorf("not all joined: %+v", st)
		}
		return nil
	})
	close(f.store.gate)
	wg.Wait()
	close(results)
	for r := range results {
		if r != 3 {
			t.Fatalf("reader got %d", r)
		}
	}
	if n := f.store.gets.Load(); n != 1 {
		t.Fatalf("%d ZooKeeper reads for %d concurrent gets, want 1", n, readers)
	}
}

// TestNotificationDuringReadIsNotCached: a read in flight when the znode's
// notification arrives is neither cached nor shared with readers that come
// after the notification.
func TestNotificationDuringReadIsNotCached(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	const id = "racy"
	f.rawWrite(t, id, 1)
	f.syncInner(t)
	f.store.gate = make(chan struct{})
	f.store.entered = make(chan struct{}, 10)
	first := make(chan int64, 1)
	go func() {
		s, _, _, err := f.cache.Snapshots().GetSnapshot(context.Background(), id)
		if err != nil {
			first <- -2
			return
		}
		first <- s.ExpirationTime
	}()
	waitEntered(t.Context(), t, f.store)
	// The notification, as go-zookeeper delivers it.
	f.cache.onEvent(zk.Event{Type: zk.EventNodeDataChanged, Path: f.zc.FullPath(zkstore.ProducersPath + "/" + id)})
	// A reader after it sends its own read rather than joining.
	second := make(chan error, 1)
	go func() {
		_, _, _, err := f.cache.Snapshots().GetSnapshot(context.Background(), id)
		second <- err
	}()
	waitEntered(t.Context(), t, f.store)
	close(f.store.gate)
	<-first
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if n := f.store.gets.Load(); n != 2 {
		t.Fatalf("%d reads, want 2 (the reader after the notification must not join)", n)
	}
	f.store.gate, f.store.entered = nil, nil
	// The second read started after the notification: it was cached.
	f.get(t, id)
	if n := f.store.gets.Load(); n != 2 {
		t.Fatalf("%d reads after a cached get, want 2", n)
	}
}

// TestBoundsEvict: the least recently used entries go when either bound is
// reached, and an evicted znode is read again.
func TestBoundsEvict(t *testing.T) {
	t.Run("entries", func(t *testing.T) {
		f := newFixture(t, zkAddr, func(c *Config) { c.MaxEntries = 4 }, nil)
		for i := range 6 {
			f.register(t, fmt.Sprint("e", i), int64(i))
		}
		for i := range 6 {
			if got := f.get(t, fmt.Sprint("e", i)); got != int64(i) {
				t.Fatalf("e%d: %d", i, got)
			}
		}
		st := f.cache.Stats()
		if st.Entries > 4 || st.Evictions == 0 {
			t.Fatalf("stats %+v", st)
		}
		before := f.store.gets.Load()
		f.get(t, "e0") // evicted long ago
		if f.store.gets.Load() == before {
			t.Fatal("evicted znode served from memory")
		}
	})
	t.Run("bytes", func(t *testing.T) {
		const limit = 2000
		f := newFixture(t, zkAddr, func(c *Config) { c.MaxBytes = limit }, nil)
		for i := range 10 {
			f.register(t, fmt.Sprint("b", i), int64(i))
			f.get(t, fmt.Sprint("b", i))
		}
		st := f.cache.Stats()
		if st.Bytes > limit || st.Evictions == 0 || st.Entries == 0 {
			t.Fatalf("stats %+v", st)
		}
	})
}

// TestSessionExpiryDropsCache: the client is cut off until the server
// expires its session; a change made meanwhile, of which no notification
// can reach it, is seen once the new session is up.
func TestSessionExpiryDropsCache(t *testing.T) {
	srv := zktest.StartT(t)
	cut := zktest.NewCutter(t, srv.Addr)
	f := newFixture(t, cut.Addr(), nil, func(c *zk.Config) { c.SessionTimeout = 2 * time.Second })
	// The other client talks to the same private server.
	f.raw = zktest.RawConn(t, srv.Addr)
	ctx := t.Context()
	const id = "exp"
	f.register(t, id, 1)
	for range 2 {
		if f.get(t, id) != 1 {
			t.Fatal("get")
		}
	}
	if f.cache.Stats().Entries == 0 {
		t.Fatal("nothing cached")
	}
	// An ephemeral znode of the client tells an observer when the session
	// expired.
	if _, err := f.zc.Create(ctx, "/alive", nil, zk.Ephemeral); err != nil {
		t.Fatal(err)
	}
	_, _, gone, err := f.raw.ExistsW(f.zc.FullPath("/alive"))
	if err != nil {
		t.Fatal(err)
	}
	session := f.zc.SessionID()
	cut.Cut()
	select {
	case <-gone:
	case <-ctx.Done():
		t.Fatal("session never expired")
	}
	f.rawWrite(t, id, 2) // no notification can reach the cut-off client
	cut.Restore()
	eventually.Nil(t, "a new session with the watch set", func() error {
		if st := f.cache.Stats(); !st.Watching || f.zc.SessionID() == session {
			return fmt.Errorf("not yet: %+v", st)
		}
		return nil
	})
	if got := f.get(t, id); got != 2 {
		t.Fatalf("after expiry: %d, want 2", got)
	}
	if st := f.cache.Stats(); st.Drops == 0 {
		t.Fatalf("stats %+v", st)
	}
	// Notifications flow again on the new session.
	f.rawWrite(t, id, 3)
	f.syncInner(t)
	if got := f.get(t, id); got != 3 {
		t.Fatalf("on the new session: %d, want 3", got)
	}
}

// TestReconnectSetsWatchAgain: a dropped connection within one session
// loses the persistent watch on the server; the cache drops its znodes and
// sets the watch again on the new connection.
func TestReconnectSetsWatchAgain(t *testing.T) {
	srv := zktest.StartT(t)
	cut := zktest.NewCutter(t, srv.Addr)
	f := newFixture(t, cut.Addr(), nil, func(c *zk.Config) { c.SessionTimeout = 30 * time.Second })
	f.raw = zktest.RawConn(t, srv.Addr)
	const id = "rc"
	f.register(t, id, 1)
	f.get(t, id)
	session := f.zc.SessionID()
	drops := f.cache.Stats().Drops
	cut.Cut()
	eventually.True(t, "the cache seeing the disconnection", func() bool { return f.cache.Stats().Drops != drops })
	f.rawWrite(t, id, 2)
	f.rawWrite(t, "rc-new", 1) // created while cut off: only a new listing knows it
	cut.Restore()
	eventually.True(t, "the watch set again", func() bool { return f.cache.Stats().Watching })
	if f.zc.SessionID() != session {
		t.Logf("session changed (the server expired it); the test still holds")
	}
	if got := f.get(t, id); got != 2 {
		t.Fatalf("after reconnect: %d, want 2", got)
	}
	waitIndexed(t, f.cache)
	if hints(f.cache).KnownAbsent("rc-new") {
		t.Fatal("an id created while the connection was down is known absent")
	}
	f.rawWrite(t, id, 3)
	f.syncInner(t)
	if got := f.get(t, id); got != 3 {
		t.Fatalf("after reconnect, another change: %d, want 3", got)
	}
}

// TestFilesCachedByPath: an offsets file that a cached snapshot names is
// read once, a file no cached snapshot names is not kept, and a delete
// through the cache forgets a file.
func TestFilesCachedByPath(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	ctx := t.Context()
	fs := f.cache.Files()
	stray, err := f.files.WriteOffsets(ctx, "fp", offsets.TableOffsets{TableID: 4, Buckets: []offsets.BucketOffset{{BucketID: 1, LogEndOffset: 9}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := fs.ReadOffsets(ctx, stray); err != nil {
			t.Fatal(err)
		}
	}
	if st := f.cache.Stats(); st.Misses != 2 || st.Hits != 0 || st.Files != 0 {
		t.Fatalf("a file no snapshot names: stats %+v, want two misses and nothing kept", st)
	}
	f.rawWrite(t, "fp", 9)
	f.syncInner(t)
	snap, _, found, err := f.cache.Snapshots().GetSnapshot(ctx, "fp")
	if err != nil || !found {
		t.Fatalf("snapshot: %v %v", found, err)
	}
	path := snap.Tables[0].OffsetsPath
	before := f.cache.Stats()
	for range 3 {
		got, err := fs.ReadOffsets(ctx, path)
		if err != nil || got.TableID != 1 || got.Buckets[0].LogEndOffset != 9 {
			t.Fatalf("%+v %v", got, err)
		}
	}
	if st := f.cache.Stats(); st.Misses-before.Misses != 1 || st.Hits-before.Hits != 2 || st.Files != 1 {
		t.Fatalf("stats %+v after %+v", st, before)
	}
	cached, ok := fs.(storage.CachedFiles)
	if !ok {
		t.Fatal("the cache's file store does not offer cached reads")
	}
	if got, hit := cached.CachedOffsets(path); !hit || got.Buckets[0].LogEndOffset != 9 {
		t.Fatalf("cached read: %+v %v", got, hit)
	}
	if _, hit := cached.CachedOffsets(path + "-other"); hit {
		t.Fatal("a file never read is reported cached")
	}
	if err := fs.DeleteOffsets(ctx, path); err != nil {
		t.Fatal(err)
	}
	if _, hit := cached.CachedOffsets(path); hit {
		t.Fatal("a deleted file is still cached")
	}
	if _, err := fs.ReadOffsets(ctx, path); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
}

// TestGetCachedFollowsTheCache: the registry's answer from memory alone
// (what the sidecar's quick GET serves) exists only while the cache holds
// the znode and its files, and is never older than what the session has
// been notified of.
func TestGetCachedFollowsTheCache(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	const id = "quick"
	// Every cached state has its own token, the same across calls while it
	// is cached and never seen again once it is not.
	tokens := map[uint64]int64{}
	cached := func() (int64, bool) {
		t.Helper()
		s, token, found, ok := f.registry.GetCached(id, nil)
		if !ok {
			return 0, false
		}
		off := int64(-1)
		if found {
			off = s.Tables[0].Buckets[0].LogEndOffset
		}
		if again, _, _ := f.registry.CachedToken(id); again != token {
			t.Fatalf("token %d, then %d for the same cached state", token, again)
		}
		if prev, seen := tokens[token]; seen && prev != off {
			t.Fatalf("token %d named offset %d, now %d", token, prev, off)
		}
		tokens[token] = off
		return off, true
	}
	if _, ok := cached(); ok {
		t.Fatal("answered before anything was read")
	}
	f.get(t, id)
	if got, ok := cached(); !ok || got != -1 {
		t.Fatalf("absent znode read once: %d %v, want absent from memory", got, ok)
	}
	f.register(t, id, 5) // own write: the entry is gone
	if got, ok := cached(); ok {
		t.Fatalf("after own register: %d from memory, want a miss", got)
	}
	f.get(t, id)
	if got, ok := cached(); !ok || got != 5 {
		t.Fatalf("after a get: %d %v, want 5 from memory", got, ok)
	}
	f.rawWrite(t, id, 9) // another client's write
	f.syncInner(t)
	if got, ok := cached(); ok {
		t.Fatalf("after another client's write: %d from memory, want a miss", got)
	}
	if got := f.get(t, id); got != 9 {
		t.Fatalf("get after another client's write: %d", got)
	}
	if got, ok := cached(); !ok || got != 9 {
		t.Fatalf("after the get: %d %v, want 9 from memory", got, ok)
	}
	if len(tokens) != 3 {
		t.Fatalf("%d tokens for three cached states: %v", len(tokens), tokens)
	}
	for _, bad := range []string{"", "no spaces", ".."} {
		if _, _, _, ok := f.registry.GetCached(bad, nil); ok {
			t.Fatalf("invalid id %q answered from memory", bad)
		}
	}
}

// TestWrittenFilesCachedAsRead: a file written through the cache is cached
// with exactly the content a read of it from storage returns, whatever the
// order its buckets were given in.
func TestWrittenFilesCachedAsRead(t *testing.T) {
	f := newFixture(t, zkAddr, nil, nil)
	ctx := t.Context()
	rnd := rand.New(rand.NewPCG(5, 8))
	fs := f.cache.Files()
	cached := fs.(storage.CachedFiles)
	tables := []offsets.TableOffsets{{TableID: 1}} // no buckets
	for i := range 30 {
		tb := offsets.TableOffsets{TableID: int64(i + 2)}
		partitioned := i%2 == 0
		for _, b := range rnd.Perm(40)[:1+rnd.IntN(39)] {
			bo := offsets.BucketOffset{BucketID: int32(b % 8), LogEndOffset: rnd.Int64N(1 << 40)}
			if partitioned {
				bo.Partitioned, bo.PartitionID = true, int64(b/8)
			} else {
				bo.BucketID = int32(b)
			}
			tb.Buckets = append(tb.Buckets, bo)
		}
		if i%3 == 2 && !partitioned {
			tb = offsets.TableOffsets{TableID: tb.TableID, ByBucket: byBucket(tb.Buckets)}
		}
		tables = append(tables, tb)
	}
	// A large register's form: an array by bucket id, and a list already
	// in file order; both are kept as written, not copied.
	tables = append(tables,
		offsets.TableOffsets{TableID: 40, ByBucket: []int64{7, -1, 9, -1}},
		offsets.TableOffsets{TableID: 41, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: 3}, {BucketID: 5, LogEndOffset: 4}}})
	for _, tb := range tables {
		path, err := fs.WriteOffsets(ctx, "written", tb)
		if err != nil {
			t.Fatal(err)
		}
		got, hit := cached.CachedOffsets(path)
		if !hit {
			t.Fatalf("table %d: not cached after its write", tb.TableID)
		}
		want, err := f.files.ReadOffsets(ctx, path) // from disk, not the cache
		if err != nil {
			t.Fatal(err)
		}
		if got.TableID != want.TableID || len(got.Buckets) != len(want.Buckets) ||
			(len(want.Buckets) > 0 && !slices.Equal(got.Buckets, want.Buckets)) {
			t.Fatalf("table %d: cached on write %+v, read from storage %+v", tb.TableID, got, want)
		}
		if got.ByBucket != nil {
			t.Fatalf("table %d: the cache answered the array by bucket id %v", tb.TableID, got.ByBucket)
		}
		again, _ := cached.CachedOffsets(path)
		if len(got.Buckets) > 0 && &again.Buckets[0] != &got.Buckets[0] {
			t.Errorf("table %d: a second hit built its list again", tb.TableID)
		}
		if tb.IsInFileOrder() && len(tb.Buckets) > 0 && &got.Buckets[0] != &tb.Buckets[0] {
			t.Errorf("table %d: already in file order, but the cache keeps a copy", tb.TableID)
		}
	}
}

// byBucket is a non-partitioned table's buckets as an array indexed by
// bucket id, -1 where none.
func byBucket(bs []offsets.BucketOffset) []int64 {
	var arr []int64
	for _, b := range bs {
		for int(b.BucketID) >= len(arr) {
			arr = append(arr, -1)
		}
		arr[b.BucketID] = b.LogEndOffset
	}
	return arr
}
