package storetest

import (
	"slices"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
)

// A created snapshot holds a coordinator's exact bytes at a data version of
// at least 1 (which keeps a coordinator's stale versioned delete off it,
// W3); each replace bumps the version by one and keeps the creation id. A
// coordinator's own snapshot is at version 0 and is replaced alike.
func testVersions(e *env) {
	for _, c := range []struct {
		id   string
		s    offsets.Snapshot
		want string
	}{{"empty", snapEmpty, snapEmptyBytes}, {"two", snapTwo, snapTwoBytes}} {
		e.create(c.id, c.s)
		if z := e.raw(c.id); string(z.data) != c.want {
			e.t.Errorf("CreateSnapshot(%s) stored %s, want a coordinator's bytes %s", c.id, z.data, c.want)
		}
	}

	inc := e.create("p", snapN(1))
	if inc.Version < 1 {
		e.t.Errorf("a created snapshot is at data version %d, want at least 1", inc.Version)
	}
	s, got, found := e.get("p")
	if !found || !s.Equal(snapN(1)) || got != inc {
		e.t.Fatalf("GetSnapshot after create = %+v at %+v (found %v), want %+v at %+v", s, got, found, snapN(1), inc)
	}
	for i := range int64(3) {
		next := snapN(10 + i)
		ok, err := e.s.ReplaceSnapshotIf(e.ctx, "p", inc, next)
		if err != nil || !ok {
			e.t.Fatalf("ReplaceSnapshotIf at %+v = %v, %v; want replaced", inc, ok, err)
		}
		want := offsets.Incarnation{Czxid: inc.Czxid, Version: inc.Version + 1}
		e.wantRaw("after a replace", "p", znode{data: flussjson.EncodeSnapshot(next), inc: want, found: true})
		if s, got, _ := e.get("p"); !s.Equal(next) || got != want {
			e.t.Errorf("GetSnapshot after a replace = %+v at %+v, want %+v at %+v", s, got, next, want)
		}
		inc = want
	}

	// A coordinator's snapshot: created by another writer at version 0.
	e.rawSet("coordinator", []byte(snapTwoBytes))
	_, cinc, found := e.get("coordinator")
	if !found || cinc.Version != 0 {
		e.t.Fatalf("a coordinator's snapshot reads as found %v at %+v, want version 0", found, cinc)
	}
	if ok, err := e.s.ReplaceSnapshotIf(e.ctx, "coordinator", cinc, snapN(5)); err != nil || !ok {
		e.t.Fatalf("ReplaceSnapshotIf of a coordinator's snapshot = %v, %v", ok, err)
	}
	e.wantRaw("a coordinator's snapshot replaced", "coordinator",
		znode{data: flussjson.EncodeSnapshot(snapN(5)), inc: offsets.Incarnation{Czxid: cinc.Czxid, Version: 1}, found: true})
}

// A znode deleted and created again is another incarnation, with a later
// creation id, and a conditional write naming the old one is refused even
// when the data versions are equal (the W3 fix).
func testCreationIDs(e *env) {
	first := e.create("p", snapN(1))
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "p", first); err != nil || !ok {
		e.t.Fatalf("DeleteSnapshotIf = %v, %v", ok, err)
	}
	e.wantRawAbsent("after DeleteSnapshotIf", "p")
	if _, _, found := e.get("p"); found {
		e.t.Fatal("GetSnapshot after DeleteSnapshotIf found the snapshot")
	}
	second := e.create("p", snapN(2))
	if second.Czxid <= first.Czxid {
		e.t.Errorf("re-created snapshot has creation id %d, the deleted one had %d: want a later one", second.Czxid, first.Czxid)
	}
	now := e.raw("p")
	// Whatever the versions, the old incarnation is refused.
	stale := offsets.Incarnation{Czxid: first.Czxid, Version: second.Version}
	for _, inc := range []offsets.Incarnation{first, stale} {
		if ok, err := e.s.ReplaceSnapshotIf(e.ctx, "p", inc, snapN(3)); err != nil || ok {
			e.t.Errorf("ReplaceSnapshotIf with the old incarnation %+v = %v, %v; want false", inc, ok, err)
		}
		if ok, err := e.s.DeleteSnapshotIf(e.ctx, "p", inc); err != nil || ok {
			e.t.Errorf("DeleteSnapshotIf with the old incarnation %+v = %v, %v; want false", inc, ok, err)
		}
		e.wantRaw("after writes naming the old incarnation", "p", now)
	}

	// Two coordinator incarnations, both at version 0.
	e.rawSet("c", []byte(snapTwoBytes))
	_, old, _ := e.get("c")
	e.rawDelete("c")
	e.rawSet("c", []byte(snapEmptyBytes))
	_, cur, found := e.get("c")
	if !found || old.Version != 0 || cur.Version != 0 || cur.Czxid <= old.Czxid {
		e.t.Fatalf("coordinator incarnations %+v then %+v (found %v): want version 0, later creation id", old, cur, found)
	}
	now = e.raw("c")
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "c", old); err != nil || ok {
		e.t.Errorf("DeleteSnapshotIf of a re-created znode at the same version = %v, %v; want false (W3)", ok, err)
	}
	if ok, err := e.s.ReplaceSnapshotIf(e.ctx, "c", old, snapN(4)); err != nil || ok {
		e.t.Errorf("ReplaceSnapshotIf of a re-created znode at the same version = %v, %v; want false", ok, err)
	}
	e.wantRaw("after writes naming the deleted incarnation", "c", now)
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "c", cur); err != nil || !ok {
		e.t.Errorf("DeleteSnapshotIf of the current incarnation = %v, %v", ok, err)
	}
	e.wantRawAbsent("after DeleteSnapshotIf of the current incarnation", "c")
}

// CreateSnapshot of an existing znode reports false and leaves it alone,
// whoever made it.
func testConditionalCreate(e *env) {
	e.create("p", snapTwo)
	before := e.raw("p")
	if created, err := e.s.CreateSnapshot(e.ctx, "p", snapN(1)); err != nil || created {
		e.t.Errorf("CreateSnapshot of an existing snapshot = %v, %v; want false, nil", created, err)
	}
	e.wantRaw("after a second create", "p", before)

	e.rawSet("c", []byte(snapEmptyBytes))
	before = e.raw("c")
	e.sync()
	if created, err := e.s.CreateSnapshot(e.ctx, "c", snapN(2)); err != nil || created {
		e.t.Errorf("CreateSnapshot of a coordinator's snapshot = %v, %v; want false, nil", created, err)
	}
	e.wantRaw("after a create over a coordinator's snapshot", "c", before)
}

// ReplaceSnapshotIf replaces only the incarnation and version it names.
func testConditionalReplace(e *env) {
	if ok, err := e.s.ReplaceSnapshotIf(e.ctx, "absent", offsets.Incarnation{Czxid: 1, Version: 1}, snapN(1)); err != nil || ok {
		e.t.Errorf("ReplaceSnapshotIf of an absent snapshot = %v, %v; want false, nil", ok, err)
	}
	e.wantRawAbsent("ReplaceSnapshotIf of an absent snapshot", "absent")

	inc := e.create("p", snapN(1))
	// Another writer replaces it: the version read before is stale.
	e.rawSet("p", flussjson.EncodeSnapshot(snapN(2)))
	now := e.raw("p")
	if now.inc.Version != inc.Version+1 || now.inc.Czxid != inc.Czxid {
		e.t.Fatalf("another writer's replace moved %+v to %+v", inc, now.inc)
	}
	e.sync()
	for _, stale := range []offsets.Incarnation{
		inc,
		{Czxid: inc.Czxid, Version: now.inc.Version + 1},
		{Czxid: inc.Czxid + 1_000_000, Version: now.inc.Version},
		{Czxid: inc.Czxid - 1, Version: now.inc.Version},
	} {
		if ok, err := e.s.ReplaceSnapshotIf(e.ctx, "p", stale, snapN(3)); err != nil || ok {
			e.t.Errorf("ReplaceSnapshotIf at %+v, znode at %+v = %v, %v; want false, nil", stale, now.inc, ok, err)
		}
	}
	e.wantRaw("after stale replaces", "p", now)
	if ok, err := e.s.ReplaceSnapshotIf(e.ctx, "p", now.inc, snapN(3)); err != nil || !ok {
		e.t.Errorf("ReplaceSnapshotIf at the current %+v = %v, %v; want true", now.inc, ok, err)
	}
}

// DeleteSnapshotIf deletes only the incarnation and version it names, and
// reports true when nothing is left.
func testConditionalDelete(e *env) {
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "absent", offsets.Incarnation{Czxid: 1, Version: 1}); err != nil || !ok {
		e.t.Errorf("DeleteSnapshotIf of an absent snapshot = %v, %v; want true, nil", ok, err)
	}
	inc := e.create("p", snapN(1))
	e.rawSet("p", flussjson.EncodeSnapshot(snapN(2)))
	now := e.raw("p")
	e.sync()
	for _, stale := range []offsets.Incarnation{
		inc,
		{Czxid: inc.Czxid, Version: now.inc.Version + 1},
		{Czxid: inc.Czxid + 1_000_000, Version: now.inc.Version},
		{Czxid: inc.Czxid - 1, Version: now.inc.Version},
	} {
		if ok, err := e.s.DeleteSnapshotIf(e.ctx, "p", stale); err != nil || ok {
			e.t.Errorf("DeleteSnapshotIf at %+v, znode at %+v = %v, %v; want false, nil", stale, now.inc, ok, err)
		}
	}
	e.wantRaw("after stale deletes", "p", now)
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "p", now.inc); err != nil || !ok {
		e.t.Errorf("DeleteSnapshotIf at the current %+v = %v, %v; want true", now.inc, ok, err)
	}
	e.wantRawAbsent("after DeleteSnapshotIf", "p")
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "p", now.inc); err != nil || !ok {
		e.t.Errorf("DeleteSnapshotIf once deleted = %v, %v; want true, nil", ok, err)
	}
}

// An absent snapshot is found false, with no error; a missing offsets file
// is ErrNotFound, which no retry fixes; deleting one is no error.
func testNotFound(e *env) {
	s, inc, found, err := e.s.GetSnapshot(e.ctx, "absent")
	if err != nil || found || inc != (offsets.Incarnation{}) || s.ExpirationTime != 0 || len(s.Tables) != 0 {
		e.t.Errorf("GetSnapshot of an absent snapshot = %+v, %+v, %v, %v; want zero, false, nil", s, inc, found, err)
	}
	// Absent again once another writer deleted it.
	e.create("p", snapTwo)
	e.get("p")
	e.rawDelete("p")
	if _, _, found := e.get("p"); found {
		e.t.Error("GetSnapshot after another writer's delete found it")
	}

	missing := e.plantedPath("p", 1, 1)
	_, err = e.f.ReadOffsets(e.ctx, missing)
	if !isNotFound(err) {
		e.t.Errorf("ReadOffsets of a missing file: %v, want storage.ErrNotFound", err)
	}
	e.wantRefused("ReadOffsets of a missing file", err)
	if err := e.f.DeleteOffsets(e.ctx, missing); err != nil {
		e.t.Errorf("DeleteOffsets of a missing file: %v", err)
	}
	// A file deleted behind the store's back, never read through it.
	path := e.plantedPath("p", 1, 2)
	e.plant(path, mustEncode(tablePlain))
	if err := e.f.DeleteOffsets(e.ctx, path); err != nil {
		e.t.Errorf("DeleteOffsets of a planted file: %v", err)
	}
	if _, err := e.f.ReadOffsets(e.ctx, path); !isNotFound(err) {
		e.t.Errorf("ReadOffsets of a deleted file: %v, want storage.ErrNotFound", err)
	}
}

// ListProducerIDs lists every producer with a snapshot, whoever made it.
func testListProducerIDs(e *env) {
	ids, err := e.s.ListProducerIDs(e.ctx)
	if err != nil || len(ids) != 0 {
		e.t.Fatalf("ListProducerIDs of an empty store = %q, %v; want none", ids, err)
	}
	incs := map[string]offsets.Incarnation{}
	for _, id := range []string{"b", "a", "c-1", "__d"} {
		incs[id] = e.create(id, snapN(1))
	}
	e.rawSet("coordinator", []byte(snapEmptyBytes))
	e.rawSet("corrupt", []byte("not json"))
	list := func(want ...string) {
		e.t.Helper()
		e.sync()
		ids, err := e.s.ListProducerIDs(e.ctx)
		if err != nil {
			e.t.Fatalf("ListProducerIDs: %v", err)
		}
		slices.Sort(ids)
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			e.t.Errorf("ListProducerIDs = %q, want %q", ids, want)
		}
	}
	list("a", "b", "c-1", "__d", "coordinator", "corrupt")
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "b", incs["b"]); err != nil || !ok {
		e.t.Fatal(ok, err)
	}
	e.rawDelete("coordinator")
	list("a", "c-1", "__d", "corrupt")
}

// After Sync the store reads what another writer did before it: a create,
// a replace and a delete, of znodes the store had read before.
func testSyncShowsOtherWriters(e *env) {
	e.create("replaced", snapN(1))
	e.create("deleted", snapN(2))
	for _, id := range []string{"created", "replaced", "deleted"} {
		e.get(id) // so that a cache holds it
	}
	e.rawSet("created", flussjson.EncodeSnapshot(snapN(3)))
	e.rawSet("replaced", flussjson.EncodeSnapshot(snapN(4)))
	e.rawDelete("deleted")
	// get syncs, reads and checks the answers against the backend.
	if s, _, found := e.get("created"); !found || !s.Equal(snapN(3)) {
		e.t.Errorf("another writer's create: read %+v, %v", s, found)
	}
	if s, _, found := e.get("replaced"); !found || !s.Equal(snapN(4)) {
		e.t.Errorf("another writer's replace: read %+v, %v", s, found)
	}
	if _, _, found := e.get("deleted"); found {
		e.t.Error("another writer's delete: still found")
	}
	// Several changes in a row, each read after a Sync.
	for i := range int64(5) {
		e.rawSet("replaced", flussjson.EncodeSnapshot(snapN(10+i)))
		if s, _, _ := e.get("replaced"); !s.Equal(snapN(10 + i)) {
			e.t.Errorf("change %d: read %+v", i, s)
		}
	}
}

func mustEncode(t offsets.TableOffsets) []byte {
	b, err := flussjson.EncodeTableOffsets(t)
	if err != nil {
		panic(err)
	}
	return b
}
