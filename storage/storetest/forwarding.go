package storetest

import (
	"fmt"

	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

// Wrapper is implemented by a Harness whose stores under test wrap other
// stores (the portable layer, faultstore, counted, snapcache's
// decorators): Inner returns the stores they wrap. The suite then holds
// the stores under test to offering every optional interface their inner
// stores offer.
type Wrapper interface {
	Inner() (storage.SnapshotStore, storage.FileStore)
}

// CheckForwarding returns, one line each, the optional interfaces the
// inner stores of h offer and its stores under test do not; none when h is
// not a Wrapper. A wrapper that hid one would make the registry lose the
// fast path the interface offers and still pass every other case.
func CheckForwarding(h Harness) []string {
	w, ok := h.(Wrapper)
	if !ok {
		return nil
	}
	innerSnaps, innerFiles := w.Inner()
	var missing []string
	hides := func(what string, inner, outer bool) {
		if inner && !outer {
			missing = append(missing, fmt.Sprintf("the store under test does not offer %s, which its inner store offers", what))
		}
	}
	s, f := h.Snapshots(), h.Files()
	in, out := storage.SnapshotExtrasOf(innerSnaps), storage.SnapshotExtrasOf(s)
	hides("storage.LinearReads", in.Linear != nil, out.Linear != nil)
	hides("storage.CachedSnapshots", in.Cached != nil, out.Cached != nil)
	hides("storage.AbsenceHints", in.Absence != nil, out.Absence != nil)
	_, innerCached := innerFiles.(storage.CachedFiles)
	_, outerCached := f.(storage.CachedFiles)
	hides("storage.CachedFiles", innerCached, outerCached)
	return missing
}

// A wrapper offers the optional interfaces of the stores it wraps.
func testForwarding(e *env) {
	if _, ok := e.h.(Wrapper); !ok {
		e.t.Skip("the stores under test wrap no other store")
	}
	for _, m := range CheckForwarding(e.h) {
		e.t.Error(m)
	}
}
