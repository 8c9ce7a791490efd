package zk

import (
	"errors"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// SyncGet answers what Get answers: data, stat and absence alike, also
// for many calls at once on one connection.
func TestSyncGetMatchesGet(t *testing.T) {
	ctx := zktest.Context(t)
	c := newClient(t)
	if _, _, err := c.SyncGet(ctx, "/no/such/znode"); !errors.Is(err, ErrNoNode) {
		t.Fatalf("SyncGet of a missing znode: %v, want ErrNoNode", err)
	}
	if _, err := c.Create(ctx, "/p", []byte("data"), Persistent); err != nil {
		t.Fatal(err)
	}
	d1, st1, err1 := c.Get(ctx, "/p")
	d2, st2, err2 := c.SyncGet(ctx, "/p")
	if err1 != nil || err2 != nil || string(d1) != string(d2) || st1 != st2 {
		t.Fatalf("Get %q %+v %v, SyncGet %q %+v %v", d1, st1, err1, d2, st2, err2)
	}
	errs := make(chan error, 64)
	for range 64 {
		go func() {
			d, _, err := c.SyncGet(ctx, "/p")
			if err == nil && string(d) != "data" {
				err = errors.New("wrong data " + string(d))
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
