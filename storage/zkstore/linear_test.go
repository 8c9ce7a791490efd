package zkstore

import (
	"errors"
	"reflect"
	"testing"
)

// GetSnapshotLinear answers what GetSnapshot answers: data, incarnation and
// absence alike, and a write by another session acknowledged before the
// call.
func TestGetSnapshotLinearMatchesGetSnapshot(t *testing.T) {
	ctx := t.Context()
	ps, root := newStore(t)
	other := New(connect(t, zkAddr, root))

	if _, _, found, err := ps.GetSnapshotLinear(ctx, "absent", nil); err != nil || found {
		t.Fatalf("absent producer: found %v, %v", found, err)
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
