package zk

import (
	"errors"
	"reflect"
	"testing"
)

// SyncGet and GetSnapshotLinear answer what Get and GetSnapshot answer:
// data, stat and absence alike, and a write by another session acknowledged
// before the call.
func TestSyncGetMatchesGet(t *testing.T) {
	ctx := testCtx(t)
	ps, root := newStore(t)
	other := NewProducerStore(connect(t, zkAddr, root))

	if _, _, found, err := ps.GetSnapshotLinear(ctx, "absent", nil); err != nil || found {
		t.Fatalf("absent producer: found %v, %v", found, err)
	}
	if _, _, err := ps.c.SyncGet(ctx, "/no/such/znode"); !errors.Is(err, ErrNoNode) {
		t.Fatalf("SyncGet of a missing znode: %v, want ErrNoNode", err)
	}
	if created, err := other.CreateSnapshot(ctx, "p", offsets2); err != nil || !created {
		t.Fatalf("create through the other session: %v %v", created, err)
	}
	s1, inc1, found1, err1 := ps.GetSnapshot(ctx, "p")
	s2, inc2, found2, err2 := ps.GetSnapshotLinear(ctx, "p", nil)
	if err1 != nil || err2 != nil || !found1 || !found2 {
		t.Fatalf("GetSnapshot %v %v, GetSnapshotLinear %v %v", found1, err1, found2, err2)
	}
	if !reflect.DeepEqual(s1, s2) || inc1 != inc2 || !s2.Equal(offsets2) {
		t.Fatalf("GetSnapshot %+v %+v, GetSnapshotLinear %+v %+v", s1, inc1, s2, inc2)
	}
	d1, st1, err1 := ps.c.Get(ctx, "/producers/p")
	d2, st2, err2 := ps.c.SyncGet(ctx, "/producers/p")
	if err1 != nil || err2 != nil || string(d1) != string(d2) || st1 != st2 {
		t.Fatalf("Get %q %+v %v, SyncGet %q %+v %v", d1, st1, err1, d2, st2, err2)
	}
	// Many at once on one connection: every reply reaches its own caller.
	errs := make(chan error, 64)
	for range 64 {
		go func() {
			_, _, found, err := ps.GetSnapshotLinear(ctx, "p", nil)
			if err == nil && !found {
				err = errors.New("not found")
			}
			errs <- err
		}()
	}
	for range 64 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
