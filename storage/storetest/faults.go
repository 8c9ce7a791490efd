package storetest

import (
	"context"
	"sync"

	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

type result struct {
	ok  bool
	err error
}

// While the backend stalls, a call given up fails with the class of how
// its context ended, and a write given up after its request left reports
// an outcome that the backend's state bears out once the request, held
// until then, has reached it.
func testStall(e *env) {
	st, ok := e.h.(Stalls)
	if !ok {
		e.t.Skip("the harness's backend cannot stall")
	}
	for _, w := range e.snapWrites("stalled") {
		stall := st.Stall(e.t)
		ctx, cancel := context.WithCancel(e.ctx)
		res := make(chan result, 1)
		go func() {
			ok, err := w.do(ctx)
			res <- result{ok, err}
		}()
		select {
		case <-stall.Held():
		case r := <-res:
			e.t.Fatalf("%s answered %v, %v while the backend stalls", w.name, r.ok, r.err)
		case <-e.ctx.Done():
			e.t.Fatalf("%s: no request held", w.name)
		}
		cancel()
		r := <-res
		what := w.name + " given up while the backend stalls"
		e.wantClass(what, r.err, storeerr.ErrUnavailable, true)
		stall.Resume()
		e.settle()
		e.checkOutcome(what, w, outcomeOf(r.ok, r.err))
	}

	// Reads and Syncs given up while a read of the same znode is held.
	const id = "stalled-read"
	stall := st.Stall(e.t)
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, _, _, err := e.s.GetSnapshot(ctx, id)
		first <- err
	}()
	select {
	case <-stall.Held():
	case err := <-first:
		e.t.Fatalf("GetSnapshot answered %v while the backend stalls", err)
	case <-e.ctx.Done():
		e.t.Fatal("GetSnapshot: no request held")
	}
	for _, ec := range endedContexts(e.ctx) {
		what := func(op string) string { return op + " with a " + ec.name + " context while the backend stalls" }
		_, _, _, err := e.s.GetSnapshot(ec.ctx, id)
		e.wantClass(what("GetSnapshot"), err, ec.class, false)
		if lr, ok := e.s.(storage.LinearReads); ok {
			_, _, _, err := lr.GetSnapshotLinear(ec.ctx, id, e.s.Sync)
			e.wantClass(what("GetSnapshotLinear"), err, ec.class, false)
		}
		e.wantClass(what("Sync"), e.s.Sync(ec.ctx), ec.class, false)
		_, err = e.s.ListProducerIDs(ec.ctx)
		e.wantClass(what("ListProducerIDs"), err, ec.class, false)
	}
	// A second reader of the same znode that gives up while waiting.
	ctx2, cancel2 := context.WithCancel(e.ctx)
	second := make(chan error, 1)
	go func() {
		_, _, _, err := e.s.GetSnapshot(ctx2, id)
		second <- err
	}()
	cancel2()
	e.wantClass("a second GetSnapshot given up while the backend stalls", <-second, storeerr.ErrUnavailable, false)
	cancel()
	e.wantClass("GetSnapshot given up while the backend stalls", <-first, storeerr.ErrUnavailable, false)
	stall.Resume()
	e.settle()
	if _, _, found := e.get(id); found {
		e.t.Error("a read created the znode")
	}
}

// While the backend is unreachable every call fails with a transient class
// and every write with an outcome that the backend's state bears out once
// it is back; another writer's changes made meanwhile are then seen after
// a Sync, and no optional answer from memory contradicts them.
func testOutage(e *env) {
	out, ok := e.h.(Outages)
	if !ok {
		e.t.Skip("the harness's backend cannot become unreachable")
	}
	ws := e.snapWrites("cut")
	e.create("cut-other", snapN(5))
	ids := []string{"cut-other", "cut-new", "cut-absent"}
	for _, w := range ws {
		ids = append(ids, w.id)
	}
	for _, id := range ids {
		e.get(id) // so that a cache holds it
	}

	restore := out.Cut(e.t)
	var wg sync.WaitGroup
	results := make([]result, len(ws))
	for i, w := range ws {
		wg.Go(func() {
			ok, err := w.do(e.ctx)
			results[i] = result{ok, err}
		})
	}
	var readErr, syncErr, listErr error
	wg.Go(func() { _, _, _, readErr = e.s.GetSnapshot(e.ctx, "cut-fresh") })
	wg.Go(func() { syncErr = e.s.Sync(e.ctx) })
	wg.Go(func() { _, listErr = e.s.ListProducerIDs(e.ctx) })
	wg.Wait()
	// Another writer's changes while the store cannot see them.
	e.rawSet("cut-other", flussjson.EncodeSnapshot(snapN(6)))
	e.rawSet("cut-new", flussjson.EncodeSnapshot(snapN(7)))
	restore()
	e.settle()

	e.wantTransient("GetSnapshot during the outage", readErr)
	e.wantTransient("Sync during the outage", syncErr)
	e.wantTransient("ListProducerIDs during the outage", listErr)
	for i, w := range ws {
		r := results[i]
		what := w.name + " during the outage"
		e.wantTransient(what, r.err)
		if r.ok {
			e.t.Errorf("%s reported success", what)
		}
		e.checkOutcome(what, w, outcomeOf(r.ok, r.err))
	}
	cs, cached := e.s.(storage.CachedSnapshots)
	ah, hints := e.s.(storage.AbsenceHints)
	e.sync()
	for _, id := range ids {
		z := e.raw(id)
		if cached {
			if s, _, found, ok := cs.CachedSnapshot(id); ok && (found != z.found || found && !z.holds(s)) {
				e.t.Errorf("after the outage, CachedSnapshot(%s) = %+v, found %v; the znode is %v", id, s, found, z)
			}
		}
		if hints && ah.KnownAbsent(id) && z.found {
			e.t.Errorf("after the outage, KnownAbsent(%s), but the znode is %v", id, z)
		}
		e.get(id) // checks the answer against the backend
	}
	if s, _, found := e.get("cut-other"); !found || !s.Equal(snapN(6)) {
		e.t.Errorf("another writer's replace during the outage: read %+v, %v", s, found)
	}
	// The store works again.
	inc := e.create("cut-after", snapN(8))
	if ok, err := e.s.DeleteSnapshotIf(e.ctx, "cut-after", inc); err != nil || !ok {
		e.t.Errorf("DeleteSnapshotIf after the outage = %v, %v", ok, err)
	}
}

// wantTransient fails the case unless err is of a class a retry can fix.
func (e *env) wantTransient(what string, err error) {
	e.t.Helper()
	if !storeerr.Transient(err) {
		e.t.Errorf("%s: %v, want ErrUnavailable or ErrTimeout", what, err)
	}
}
