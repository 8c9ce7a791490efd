package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// A snapshot larger than the znode limit is refused with ErrTooLarge by
// CheckSnapshot and by the writes, before anything is written; one at the
// limit is held.
func testTooLarge(e *env) {
	big := bigSnapshot(2 << 20)
	e.wantClass("CheckSnapshot of a 2 MiB snapshot", e.s.CheckSnapshot("p", big), storeerr.ErrTooLarge, false)
	created, err := e.s.CreateSnapshot(e.ctx, "p", big)
	e.wantClass("CreateSnapshot of a 2 MiB snapshot", err, storeerr.ErrTooLarge, false)
	if created {
		e.t.Error("CreateSnapshot of a 2 MiB snapshot reported created")
	}
	e.wantRawAbsent("CreateSnapshot of a 2 MiB snapshot", "p")

	inc := e.create("q", snapN(1))
	before := e.raw("q")
	ok, err := e.s.ReplaceSnapshotIf(e.ctx, "q", inc, big)
	e.wantClass("ReplaceSnapshotIf with a 2 MiB snapshot", err, storeerr.ErrTooLarge, false)
	if ok {
		e.t.Error("ReplaceSnapshotIf with a 2 MiB snapshot reported replaced")
	}
	e.wantRaw("ReplaceSnapshotIf with a 2 MiB snapshot", "q", before)

	// The limit to the byte, the same for every store.
	over := snapshotOfSize(maxSnapshotBytes + 1)
	e.wantClass("CheckSnapshot of a snapshot one byte over the limit", e.s.CheckSnapshot("over", over), storeerr.ErrTooLarge, false)
	_, err = e.s.CreateSnapshot(e.ctx, "over", over)
	e.wantClass("CreateSnapshot of a snapshot one byte over the limit", err, storeerr.ErrTooLarge, false)
	e.wantRawAbsent("CreateSnapshot of a snapshot one byte over the limit", "over")
	fits := snapshotOfSize(maxSnapshotBytes)
	if err := e.s.CheckSnapshot("fits", fits); err != nil {
		e.t.Fatalf("CheckSnapshot of a snapshot at the limit: %v", err)
	}
	e.create("fits", fits)
	if s, _, found := e.get("fits"); !found || !s.Equal(fits) {
		e.t.Error("a snapshot at the limit does not read back")
	}
	if ok, err := e.s.ReplaceSnapshotIf(e.ctx, "q", inc, fits); err != nil || !ok {
		e.t.Errorf("ReplaceSnapshotIf with a snapshot at the limit = %v, %v", ok, err)
	}
}

// A znode that is not a snapshot Fluss can read is ErrCorrupt, not "absent"
// (which would let a register replace it) and not transient; it still
// exists for the conditional create, and reads well once repaired.
func testCorruptSnapshot(e *env) {
	lr, linear := e.s.(storage.LinearReads)
	for i, bad := range []string{
		"not json",
		"",
		`{"version":2,"expiration_time":1735538268000,"tables":[]}`,
		`{"version":1,"tables":[]}`,
		`{"version":1,"expiration_time":1,"tables":[{"table_id":1}]}`,
		`[1,2,3]`,
	} {
		id := fmt.Sprintf("corrupt-%d", i)
		e.create(id, snapN(1))
		e.get(id) // so that a cache holds the valid one
		e.rawSet(id, []byte(bad))
		e.sync()
		s, inc, found, err := e.s.GetSnapshot(e.ctx, id)
		e.wantClass(fmt.Sprintf("GetSnapshot of %q", bad), err, storeerr.ErrCorrupt, false)
		if found || inc != (offsets.Incarnation{}) || len(s.Tables) != 0 {
			e.t.Errorf("GetSnapshot of %q returned %+v at %+v, found %v", bad, s, inc, found)
		}
		if linear {
			_, _, found, err := lr.GetSnapshotLinear(e.ctx, id, nil)
			e.wantClass(fmt.Sprintf("GetSnapshotLinear of %q", bad), err, storeerr.ErrCorrupt, false)
			if found {
				e.t.Errorf("GetSnapshotLinear of %q: found", bad)
			}
		}
		before := e.raw(id)
		if created, err := e.s.CreateSnapshot(e.ctx, id, snapN(2)); err != nil || created {
			e.t.Errorf("CreateSnapshot over %q = %v, %v; want false, nil", bad, created, err)
		}
		e.wantRaw("CreateSnapshot over a corrupt znode", id, before)
		e.rawSet(id, flussjson.EncodeSnapshot(snapN(3)))
		if s, _, found := e.get(id); !found || !s.Equal(snapN(3)) {
			e.t.Errorf("repaired %s reads %+v, %v", id, s, found)
		}
	}
}

// An offsets file Fluss cannot read is ErrCorrupt, neither missing nor
// transient.
func testCorruptOffsetsFile(e *env) {
	for i, bad := range []string{
		"garbage",
		"",
		`{"version":2,"table_id":5}`,
		`{"version":1,"table_id":5,"bucket_offsets":[100,`,
		`{"version":1,"table_id":5,"bucket_offsets":[1],"partition_offsets":[{"partition_id":1,"bucket_offsets":[2]}]}`,
		`{"version":1,"table_id":5,"bucket_offsets":["x"]}`,
	} {
		path := e.plantedPath("p", 5, i)
		e.plant(path, []byte(bad))
		_, err := e.f.ReadOffsets(e.ctx, path)
		e.wantClass(fmt.Sprintf("ReadOffsets of %q", bad), err, storeerr.ErrCorrupt, false)
		if isNotFound(err) {
			e.t.Errorf("ReadOffsets of %q: %v matches ErrNotFound", bad, err)
		}
	}
}

// A call whose context has ended fails with the class of how it ended
// (ErrUnavailable when canceled, ErrTimeout when past its deadline), even
// when memory holds the answer; a write reports an outcome that the
// backend's state then bears out, and a file write leaves nothing behind.
func testEndedContext(e *env) {
	path := e.write("p", tablePlain)
	lr, linear := e.s.(storage.LinearReads)
	o := e.h.Orphans()
	for _, ec := range endedContexts(e.ctx) {
		what := func(op string) string { return op + " with a " + ec.name + " context" }
		ws := e.snapWrites(ec.name)
		existing := ws[1].id
		e.get(existing) // so that a cache holds it
		if _, err := e.f.ReadOffsets(e.ctx, path); err != nil {
			e.t.Fatal(err) // so that a cache holds it
		}

		for _, id := range []string{existing, ec.name + "-absent"} {
			_, _, found, err := e.s.GetSnapshot(ec.ctx, id)
			e.wantClass(what("GetSnapshot of "+id), err, ec.class, false)
			if found {
				e.t.Errorf("%s: found", what("GetSnapshot of "+id))
			}
			if linear {
				for _, wait := range []func(context.Context) error{nil, e.s.Sync} {
					_, _, found, err := lr.GetSnapshotLinear(ec.ctx, id, wait)
					e.wantClass(what("GetSnapshotLinear of "+id), err, ec.class, false)
					if found {
						e.t.Errorf("%s: found", what("GetSnapshotLinear of "+id))
					}
				}
			}
		}
		e.wantClass(what("Sync"), e.s.Sync(ec.ctx), ec.class, false)
		_, err := e.s.ListProducerIDs(ec.ctx)
		e.wantClass(what("ListProducerIDs"), err, ec.class, false)
		for _, w := range ws {
			ok, err := w.do(ec.ctx)
			e.wantClass(what(w.name), err, ec.class, true)
			if ok {
				e.t.Errorf("%s: reported success", what(w.name))
			}
			e.checkOutcome(what(w.name), w, outcomeOf(ok, err))
		}

		files := e.rawFiles()
		_, err = e.f.WriteOffsets(ec.ctx, "p", tablePartitioned)
		e.wantClass(what("WriteOffsets"), err, ec.class, false)
		if after := e.rawFiles(); !slices.Equal(after, files) {
			e.t.Errorf("%s left files: %q, before %q", what("WriteOffsets"), after, files)
		}
		_, err = e.f.ReadOffsets(ec.ctx, path)
		e.wantClass(what("ReadOffsets"), err, ec.class, false)
		err = e.f.DeleteOffsets(ec.ctx, path)
		e.wantClass(what("DeleteOffsets"), err, ec.class, true)
		if !storeerr.OutcomeUnknown(err) && !e.rawFileExists(path) {
			e.t.Errorf("%s failed, yet the file is gone", what("DeleteOffsets"))
		}
		if o != nil {
			_, err := o.ListProducerDirs(ec.ctx)
			e.wantClass(what("ListProducerDirs"), err, ec.class, false)
			_, err = o.ListProducerFiles(ec.ctx, "p")
			e.wantClass(what("ListProducerFiles"), err, ec.class, false)
			_, err = o.PruneEmptyDirs(ec.ctx, "p")
			e.wantClass(what("PruneEmptyDirs"), err, ec.class, false)
			err = o.DeleteOffsets(ec.ctx, path)
			e.wantClass(what("OrphanStore.DeleteOffsets"), err, ec.class, true)
			if !storeerr.OutcomeUnknown(err) && !e.rawFileExists(path) {
				e.t.Errorf("%s failed, yet the file is gone", what("OrphanStore.DeleteOffsets"))
			}
		}
	}
}

// Producer ids that are not one path segment are refused by every call
// that takes one, for good, and nothing is created for them; WriteOffsets
// also refuses the ids Fluss refuses (docs/storage-format.md §7.4), which name no file a
// coordinator could have written.
func testInvalidProducerIDs(e *env) {
	inc := e.create("a", snapN(1))
	before := e.raw("a")
	lr, linear := e.s.(storage.LinearReads)
	o := e.h.Orphans()
	for _, id := range []string{"", ".", "..", "a/b", "a/", "/a", "a\x00b"} {
		q := fmt.Sprintf("%q", id)
		e.wantRefused("CheckSnapshot("+q+")", e.s.CheckSnapshot(id, snapN(2)))
		created, err := e.s.CreateSnapshot(e.ctx, id, snapN(2))
		e.wantRefused("CreateSnapshot("+q+")", err)
		if created {
			e.t.Errorf("CreateSnapshot(%s) reported created", q)
		}
		_, _, found, err := e.s.GetSnapshot(e.ctx, id)
		e.wantRefused("GetSnapshot("+q+")", err)
		if found {
			e.t.Errorf("GetSnapshot(%s) found", q)
		}
		if linear {
			_, _, found, err := lr.GetSnapshotLinear(e.ctx, id, nil)
			e.wantRefused("GetSnapshotLinear("+q+")", err)
			if found {
				e.t.Errorf("GetSnapshotLinear(%s) found", q)
			}
		}
		ok, err := e.s.ReplaceSnapshotIf(e.ctx, id, inc, snapN(2))
		e.wantRefused("ReplaceSnapshotIf("+q+")", err)
		if ok {
			e.t.Errorf("ReplaceSnapshotIf(%s) reported replaced", q)
		}
		ok, err = e.s.DeleteSnapshotIf(e.ctx, id, inc)
		e.wantRefused("DeleteSnapshotIf("+q+")", err)
		if ok {
			e.t.Errorf("DeleteSnapshotIf(%s) reported deleted", q)
		}
		_, err = e.f.WriteOffsets(e.ctx, id, tablePlain)
		e.wantRefused("WriteOffsets("+q+")", err)
		if o != nil {
			_, err := o.ListProducerFiles(e.ctx, id)
			e.wantRefused("ListProducerFiles("+q+")", err)
			_, err = o.PruneEmptyDirs(e.ctx, id)
			e.wantRefused("PruneEmptyDirs("+q+")", err)
		}
	}
	for _, id := range []string{"a b", "a:b", "a@b", "é", strings.Repeat("x", 201)} {
		_, err := e.f.WriteOffsets(e.ctx, id, tablePlain)
		e.wantRefused(fmt.Sprintf("WriteOffsets(%q)", id), err)
	}
	e.wantRaw("after calls with invalid ids", "a", before)
	e.wantRawAbsent("CreateSnapshot(\"a/b\")", "a/b")
	e.sync()
	if ids, err := e.s.ListProducerIDs(e.ctx); err != nil || !slices.Equal(ids, []string{"a"}) {
		e.t.Errorf("ListProducerIDs after calls with invalid ids = %q, %v; want [a]", ids, err)
	}
	if files := e.rawFiles(); len(files) != 0 {
		e.t.Errorf("files written for invalid ids: %q", files)
	}
}
