package zkstore

import (
	"errors"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var offsets0 = offsets.Snapshot{ExpirationTime: 1735538268000, Tables: []offsets.FileRef{}}

var offsets2 = offsets.Snapshot{ExpirationTime: 1735538268000, Tables: []offsets.FileRef{
	{TableID: 100, OffsetsPath: "oss://bucket/path/uuid1.offsets"},
	{TableID: 200, OffsetsPath: "s3://bucket/path/uuid2.offsets"},
}}

func newStore(t *testing.T) (*Store, string) {
	t.Helper()
	root := zktest.UniqueRoot()
	return New(connect(t, zkAddr, root)), root
}

func TestCreateSnapshot(t *testing.T) {
	ctx := t.Context()
	ps, root := newStore(t)

	created, err := ps.CreateSnapshot(ctx, "job-1", offsets2)
	if err != nil || !created {
		t.Fatalf("first create: %v %v", created, err)
	}
	created, err = ps.CreateSnapshot(ctx, "job-1", offsets0)
	if err != nil || created {
		t.Fatalf("second create: %v %v", created, err)
	}

	// The znode holds exactly the Java bytes, at <root>/producers/<id>,
	// at a data version in [1, MaxInitialVersion] (created empty and set in one multi); /producers is an empty parent.
	raw := zktest.RawConn(t, zkAddr)
	data, st, err := raw.Get(root + "/producers/job-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := readGolden(t, "producer_two_tables.json"); string(data) != string(want) {
		t.Errorf("stored %s\nwant   %s", data, want)
	}
	if st.Version < 1 || st.Version > MaxInitialVersion || st.EphemeralOwner != 0 {
		t.Errorf("stat %+v", st)
	}
	if d, _, err := raw.Get(root + "/producers"); err != nil || len(d) != 0 {
		t.Errorf("/producers data %q %v", d, err)
	}
	if b, err := ps.RawSnapshot(ctx, "job-1"); err != nil || string(b) != string(data) {
		t.Errorf("RawSnapshot %s %v", b, err)
	}

	s, inc, found, err := ps.GetSnapshot(ctx, "job-1")
	if err != nil || !found {
		t.Fatalf("GetSnapshot: %v %v", found, err)
	}
	if !reflect.DeepEqual(s, offsets2) {
		t.Errorf("GetSnapshot = %+v", s)
	}
	if inc.Czxid != st.Czxid || inc.Version != st.Version {
		t.Errorf("incarnation %+v, stat %+v", inc, st)
	}

	// Empty snapshot, golden bytes too.
	if created, err := ps.CreateSnapshot(ctx, "job-2", offsets0); err != nil || !created {
		t.Fatal(created, err)
	}
	if b, err := ps.RawSnapshot(ctx, "job-2"); err != nil || string(b) != string(readGolden(t, "producer_empty.json")) {
		t.Errorf("empty snapshot stored as %s (%v)", b, err)
	}

	for _, bad := range []string{"", ".", "..", "a/b"} {
		if _, err := ps.CreateSnapshot(ctx, bad, offsets0); err == nil {
			t.Errorf("id %q accepted", bad)
		}
	}
}

func TestGetSnapshotMissingAndCorrupt(t *testing.T) {
	ctx := t.Context()
	ps, _ := newStore(t)
	if _, _, found, err := ps.GetSnapshot(ctx, "nobody"); found || err != nil {
		t.Fatalf("missing: %v %v", found, err)
	}
	if _, err := ps.RawSnapshot(ctx, "nobody"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("RawSnapshot missing: %v", err)
	}
	if _, err := ps.Client().Create(ctx, "/producers/bad", []byte(`{"version":2,"expiration_time":1}`), zk.Persistent); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ps.GetSnapshot(ctx, "bad"); err == nil {
		t.Fatal("version 2 decoded")
	}
}

func TestDeleteSnapshotIf(t *testing.T) {
	ctx := t.Context()
	ps, _ := newStore(t)
	get := func(id string) (offsets.Incarnation, bool) {
		t.Helper()
		_, inc, found, err := ps.GetSnapshot(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return inc, found
	}
	mustCreate := func(id string, s offsets.Snapshot) {
		t.Helper()
		if created, err := ps.CreateSnapshot(ctx, id, s); err != nil || !created {
			t.Fatalf("create %s: %v %v", id, created, err)
		}
	}

	// Right incarnation → deleted.
	mustCreate("p", offsets2)
	inc, _ := get("p")
	if ok, err := ps.DeleteSnapshotIf(ctx, "p", inc); err != nil || !ok {
		t.Fatalf("right incarnation: %v %v", ok, err)
	}
	if _, found := get("p"); found {
		t.Fatal("still there")
	}
	// Already deleted → true.
	if ok, err := ps.DeleteSnapshotIf(ctx, "p", inc); err != nil || !ok {
		t.Fatalf("already deleted: %v %v", ok, err)
	}
	if ok, err := ps.DeleteSnapshotIf(ctx, "never", offsets.Incarnation{}); err != nil || !ok {
		t.Fatalf("never existed: %v %v", ok, err)
	}

	// Wrong version → false, kept.
	mustCreate("q", offsets2)
	inc, _ = get("q")
	if ok, err := ps.DeleteSnapshotIf(ctx, "q", offsets.Incarnation{Czxid: inc.Czxid, Version: 999}); err != nil || ok {
		t.Fatalf("version 999: %v %v", ok, err)
	}
	if _, found := get("q"); !found {
		t.Fatal("deleted despite wrong version")
	}

	// ABA: the znode is deleted and created again, and brought to the same
	// data version; the old incarnation must not delete the new one.
	old, _ := get("q")
	if err := ps.DeleteSnapshot(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	newer := offsets.Snapshot{ExpirationTime: 42, Tables: []offsets.FileRef{{TableID: 1, OffsetsPath: "/x"}}}
	raw := zktest.RawConn(t, zkAddr)
	full := ps.Client().FullPath("/producers/q")
	if _, err := raw.Create(full, flussjson.EncodeSnapshot(newer), 0, gozk.WorldACL(gozk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for range old.Version {
		if _, err := raw.Set(full, flussjson.EncodeSnapshot(newer), -1); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := get("q")
	if cur.Version != old.Version || cur.Czxid == old.Czxid {
		t.Fatalf("setup: old %+v new %+v", old, cur)
	}
	if ok, err := ps.DeleteSnapshotIf(ctx, "q", old); err != nil || ok {
		t.Fatalf("ABA delete: %v %v", ok, err)
	}
	s, _, found, err := ps.GetSnapshot(ctx, "q")
	if err != nil || !found || !reflect.DeepEqual(s, newer) {
		t.Fatalf("new snapshot lost: %+v %v %v", s, found, err)
	}
	if err := ps.DeleteSnapshot(ctx, "gone"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("unversioned delete of a missing znode: %v", err)
	}
}

func TestListProducerIDs(t *testing.T) {
	ctx := t.Context()
	ps, _ := newStore(t)
	ids, err := ps.ListProducerIDs(ctx)
	if err != nil || ids == nil || len(ids) != 0 {
		t.Fatalf("before: %v %v", ids, err)
	}
	want := []string{"a", "b-2", "__c"}
	for _, id := range want {
		if _, err := ps.CreateSnapshot(ctx, id, offsets0); err != nil {
			t.Fatal(err)
		}
	}
	ids, err = ps.ListProducerIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ids)
	sort.Strings(want)
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids %v", ids)
	}
	// /producers stays when it has no children left.
	for _, id := range want {
		if err := ps.DeleteSnapshot(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if ok, _, err := ps.Client().Exists(ctx, ProducersPath); err != nil || !ok {
		t.Fatalf("/producers removed: %v %v", ok, err)
	}
}

func TestConcurrentCreate(t *testing.T) {
	ctx := t.Context()
	ps, _ := newStore(t)
	var wins atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 10 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			s := offsets.Snapshot{ExpirationTime: int64(i), Tables: []offsets.FileRef{{TableID: int64(i), OffsetsPath: "p" + strconv.Itoa(i)}}}
			created, err := ps.CreateSnapshot(ctx, "same", s)
			if err != nil {
				errs <- err
			}
			if created {
				wins.Add(1)
			}
		}()
		go func() { // distinct ids all win
			defer wg.Done()
			created, err := ps.CreateSnapshot(ctx, "distinct-"+strconv.Itoa(i), offsets0)
			if err != nil || !created {
				errs <- errors.New("distinct id not created")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if wins.Load() != 1 {
		t.Fatalf("%d creates won, want 1", wins.Load())
	}
}

// TestReplaceSnapshotIf: the in-place replace of an expired snapshot is a
// compare-and-set on the incarnation; two replacers of one read cannot both
// win, and a replace of a newer incarnation fails.
func TestReplaceSnapshotIf(t *testing.T) {
	ctx := t.Context()
	ps, root := newStore(t)
	if _, err := ps.CreateSnapshot(ctx, "p", offsets0); err != nil {
		t.Fatal(err)
	}
	_, inc, _, err := ps.GetSnapshot(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	ok, err := ps.ReplaceSnapshotIf(ctx, "p", inc, offsets2)
	if err != nil || !ok {
		t.Fatalf("first replace: %v %v", ok, err)
	}
	ok, err = ps.ReplaceSnapshotIf(ctx, "p", inc, offsets0)
	if err != nil || ok {
		t.Fatalf("second replace of the same read: %v %v", ok, err)
	}
	got, inc2, _, err := ps.GetSnapshot(ctx, "p")
	if err != nil || !got.Equal(offsets2) || inc2.Czxid != inc.Czxid || inc2.Version != inc.Version+1 {
		t.Fatalf("after replace: %+v %+v %v", got, inc2, err)
	}

	// A stale read of an earlier incarnation at the same version.
	if deleted, err := ps.DeleteSnapshotIf(ctx, "p", inc2); err != nil || !deleted {
		t.Fatal(deleted, err)
	}
	raw := zktest.RawConn(t, zkAddr)
	if _, err := raw.Create(root+"/producers/p", flussjson.EncodeSnapshot(offsets0), 0, gozk.WorldACL(gozk.PermAll)); err != nil {
		t.Fatal(err)
	}
	for range inc2.Version { // bring the new incarnation to the stale version
		if _, err := raw.Set(root+"/producers/p", flussjson.EncodeSnapshot(offsets0), -1); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := ps.ReplaceSnapshotIf(ctx, "p", inc2, offsets2); err != nil || ok {
		t.Fatalf("replace of a newer incarnation at the same version: %v %v", ok, err)
	}
	if ok, err := ps.ReplaceSnapshotIf(ctx, "absent", inc2, offsets2); err != nil || ok {
		t.Fatalf("replace of an absent znode: %v %v", ok, err)
	}
}

// TestCreateSnapshotTooLarge: a snapshot over the buffer limit is refused
// before it is sent, as permanent and not applied, and the session survives.
func TestCreateSnapshotTooLarge(t *testing.T) {
	zktest.SkipIfShort(t)
	ctx := t.Context()
	c, err := zk.Connect(ctx, zk.Config{Address: zkAddr, Root: zktest.UniqueRoot(), ServerMaxBuffer: 8192})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ps := New(c)
	big := offsets.Snapshot{ExpirationTime: 1}
	for i := range 200 {
		big.Tables = append(big.Tables, offsets.FileRef{TableID: int64(i), OffsetsPath: "file:/some/long/path/producers/p/1/00000000-0000-0000-0000-000000000000.offsets"})
	}
	for name, err := range map[string]error{
		"check":  ps.CheckSnapshot("p", big),
		"create": func() error { _, err := ps.CreateSnapshot(ctx, "p", big); return err }(),
	} {
		if !errors.Is(err, storeerr.ErrTooLarge) || storeerr.OutcomeUnknown(err) || storeerr.Transient(err) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if ok, _, err := c.Exists(ctx, "/producers/p"); err != nil || ok {
		t.Fatalf("znode exists %v %v", ok, err)
	}
	if err := ps.CheckSnapshot("p", offsets2); err != nil {
		t.Fatal(err)
	}
}
