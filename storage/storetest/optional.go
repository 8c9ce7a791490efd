package storetest

import (
	"context"
	"fmt"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

// GetSnapshotLinear answers what the backend holds when it is called, as
// GetSnapshot after a Sync does, with or without a shared sync to wait for,
// including another writer's changes made just before, with no Sync.
func testLinearReads(e *env) {
	lr, ok := e.s.(storage.LinearReads)
	if !ok {
		e.t.Skip("the store does not implement storage.LinearReads")
	}
	waits := []struct {
		name string
		wait func(context.Context) error
	}{{"no wait", nil}, {"waiting for Sync", e.s.Sync}}
	check := func(step, id string) {
		e.t.Helper()
		for _, w := range waits {
			s, inc, found, err := lr.GetSnapshotLinear(e.ctx, id, w.wait)
			if err != nil {
				e.t.Fatalf("%s: GetSnapshotLinear(%s), %s: %v", step, id, w.name, err)
			}
			e.checkAnswer(fmt.Sprintf("%s: GetSnapshotLinear, %s", step, w.name), id, s, inc, found)
		}
	}
	check("absent", "p")
	e.create("p", snapN(1))
	check("created", "p")
	e.get("p") // so that a cache holds it
	e.rawSet("p", flussjson.EncodeSnapshot(snapN(2)))
	check("replaced by another writer", "p")
	e.rawDelete("p")
	check("deleted by another writer", "p")
	e.rawSet("p", flussjson.EncodeSnapshot(snapN(3)))
	check("created by another writer", "p")
	for i := range int64(5) {
		e.rawSet("p", flussjson.EncodeSnapshot(snapN(10+i)))
		check(fmt.Sprintf("change %d", i), "p")
	}
}

// What CachedSnapshot answers from memory after a Sync is what the backend
// holds, and its token changes with the state it names; a znode just read
// and left unchanged is held.
func testCachedSnapshots(e *env) {
	cs, ok := e.s.(storage.CachedSnapshots)
	if !ok {
		e.t.Skip("the store does not implement storage.CachedSnapshots")
	}
	seen := map[uint64]string{}
	check := func(step, id string) (uint64, bool) {
		e.t.Helper()
		e.sync()
		s, token, found, ok := cs.CachedSnapshot(id)
		if held := cs.HoldsSnapshot(id); held != ok {
			e.t.Errorf("%s: HoldsSnapshot(%s) = %v, CachedSnapshot ok = %v", step, id, held, ok)
		}
		if !ok {
			return 0, false
		}
		z := e.raw(id)
		if found != z.found || found && !z.holds(s) {
			e.t.Errorf("%s: CachedSnapshot(%s) = %+v, found %v; the znode is %v", step, id, s, found, z)
		}
		state := z.String()
		if prev, ok := seen[token]; ok && prev != state {
			e.t.Errorf("%s: token %d named %s and now %s", step, token, prev, state)
		}
		seen[token] = state
		return token, true
	}
	e.create("p", snapN(1))
	e.get("p")
	t1, held := check("read", "p")
	if !held {
		e.t.Fatal("a znode just read and unchanged is not held")
	}
	e.get("p")
	if t2, held := check("read again", "p"); !held || t2 != t1 {
		e.t.Errorf("an unchanged znode read again: token %d (held %v), was %d", t2, held, t1)
	}
	e.rawSet("p", flussjson.EncodeSnapshot(snapN(2)))
	check("replaced by another writer", "p")
	e.get("p")
	if t3, _ := check("read after the replace", "p"); t3 == t1 {
		e.t.Errorf("the token %d of the replaced state names the new one", t1)
	}
	e.rawDelete("p")
	check("deleted by another writer", "p")
	e.get("p")
	check("read after the delete", "p")
	inc := e.create("p", snapN(3))
	check("created again", "p")
	e.get("p")
	check("read after the create", "p")
	if ok, err := e.s.ReplaceSnapshotIf(e.ctx, "p", inc, snapN(4)); err != nil || !ok {
		e.t.Fatal(ok, err)
	}
	check("replaced through the store", "p")
	e.get("absent")
	check("absent, read", "absent")
}

// KnownAbsent is true only for a producer the backend has no snapshot of,
// after a Sync, whoever created or deleted it.
func testAbsenceHints(e *env) {
	ah, ok := e.s.(storage.AbsenceHints)
	if !ok {
		e.t.Skip("the store does not implement storage.AbsenceHints")
	}
	check := func(step string, ids ...string) {
		e.t.Helper()
		e.sync()
		for _, id := range ids {
			if ah.KnownAbsent(id) {
				if z := e.raw(id); z.found {
					e.t.Errorf("%s: KnownAbsent(%s), but the znode is %v", step, id, z)
				}
			}
		}
	}
	// Wait until the store knows some producer absent, so that the checks
	// below can fail; the case's deadline bounds the wait.
	for !ah.KnownAbsent("never") {
		select {
		case <-e.ctx.Done():
			e.t.Fatal("the store never knew an absent producer absent")
		case <-time.After(10 * time.Millisecond):
		}
	}
	ids := []string{"other", "mine", "never"}
	check("empty", ids...)
	e.rawSet("other", flussjson.EncodeSnapshot(snapN(1)))
	inc := e.create("mine", snapN(2))
	check("created", ids...)
	e.rawDelete("other")
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "mine", inc); err != nil || !ok {
		e.t.Fatal(ok, err)
	}
	check("deleted", ids...)
	e.rawSet("other", flussjson.EncodeSnapshot(snapN(3)))
	e.rawSet("mine", flussjson.EncodeSnapshot(snapN(4)))
	check("created again", ids...)
}

// What CachedOffsets answers is the file's content, and a file deleted
// through the store is no longer answered.
func testCachedFiles(e *env) {
	cf, ok := e.f.(storage.CachedFiles)
	if !ok {
		e.t.Skip("the store does not implement storage.CachedFiles")
	}
	for _, t := range []offsets.TableOffsets{tablePlain, tablePartitioned, tableByBucket} {
		path := e.write("p", t)
		if got, ok := cf.CachedOffsets(path); ok && !sameOffsets(got, t.InFileOrder()) {
			e.t.Errorf("CachedOffsets(%s) after the write = %+v, want %+v", path, got, t.InFileOrder())
		}
		if _, err := e.f.ReadOffsets(e.ctx, path); err != nil {
			e.t.Fatal(err)
		}
		if got, ok := cf.CachedOffsets(path); ok && !sameOffsets(got, t.InFileOrder()) {
			e.t.Errorf("CachedOffsets(%s) after a read = %+v, want %+v", path, got, t.InFileOrder())
		}
		if err := e.f.DeleteOffsets(e.ctx, path); err != nil {
			e.t.Fatal(err)
		}
		if got, ok := cf.CachedOffsets(path); ok {
			e.t.Errorf("CachedOffsets(%s) after DeleteOffsets = %+v", path, got)
		}
	}
	planted := e.plantedPath("p", 9, 1)
	e.plant(planted, mustEncode(offsets.TableOffsets{TableID: 9}))
	if _, err := e.f.ReadOffsets(e.ctx, planted); err != nil {
		e.t.Fatal(err)
	}
	if got, ok := cf.CachedOffsets(planted); ok && !sameOffsets(got, offsets.TableOffsets{TableID: 9}) {
		e.t.Errorf("CachedOffsets of a planted file = %+v", got)
	}
}
