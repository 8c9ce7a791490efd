package app_test

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// staleRig is two sidecars on one ZooKeeper root and one remote directory;
// A reaches ZooKeeper through a Cutter, so that the test can hold back
// every notification A's session would get about B's writes: A's cached
// view is then stale for as long as the test wants, the window that made
// cross-sidecar histories non-linearizable without the shared sync.
type staleRig struct {
	a, b   *app.App
	ca, cb *wire.Client
	cut    *zktest.Cutter
}

func newStaleRig(t *testing.T, kv map[string]string) *staleRig {
	t.Helper()
	shared := map[string]string{
		"zookeeper.path.root": zktest.UniqueRoot(),
		"remote.data.dir":     "file://" + t.TempDir(),
	}
	for k, v := range kv {
		shared[k] = v
	}
	r := &staleRig{cut: zktest.NewCutter(t, sharedZK)}
	r.b = apptest.Start(t, sharedZK, shared)
	r.a = apptest.Start(t, r.cut.Addr(), shared)
	r.ca, r.cb = dial(t, r.a.Addr()), dial(t, r.b.Addr())
	eventually.True(t, "A's cache to set its watch", func() bool { return r.a.Cache().Stats().Watching })
	return r
}

func registerOffset(ctx context.Context, c *wire.Client, id string, offset int64) (int32, error) {
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TtlMs: proto.Int64(3600_000),
		TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(1),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(offset)}}}}}
	resp := &messages.RegisterProducerOffsetsResponse{}
	err := c.Call(ctx, 1053, 0, req, resp)
	return resp.GetResult(), err
}

// get returns the stored offset, -1 when there is no snapshot.
func getOffset(ctx context.Context, c *wire.Client, id string) (int64, error) {
	resp := &messages.GetProducerOffsetsResponse{}
	if err := c.Call(ctx, 1054, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, resp); err != nil {
		return 0, err
	}
	if resp.ProducerId == nil {
		return -1, nil
	}
	return resp.GetTableOffsets()[0].GetBucketOffsets()[0].GetLogEndOffset(), nil
}

func deleteSnapshot(ctx context.Context, c *wire.Client, id string) error {
	return c.Call(ctx, 1055, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, &messages.DeleteProducerOffsetsResponse{})
}

// warm reads id through A until A's cache holds its znode state (want is
// the offset expected, -1 for absent). A read that a notification crossed
// is not cached, so the first may not be; the stale-view tests need the
// entry, so that A's operation takes the shared sync whose count whileStale
// watches.
func (r *staleRig) warm(t *testing.T, ctx context.Context, id string, want int64) {
	t.Helper()
	holds := r.a.Cache().Snapshots().(storage.CachedSnapshots).HoldsSnapshot
	for !holds(id) {
		if ctx.Err() != nil {
			t.Fatalf("A never cached %s: %+v", id, r.a.Cache().Stats())
		}
		if off, err := getOffset(ctx, r.ca, id); err != nil || off != want {
			t.Fatalf("A's get of %s: %d, %v (want %d)", id, off, err, want)
		}
	}
}

// whileStale runs op on A while A's link to ZooKeeper is stalled, and lets
// the link go once op has sent its sync (or returned without one, as the
// stale code did): op must not answer from what A saw before the stall.
func (r *staleRig) whileStale(t *testing.T, op func() error) error {
	t.Helper()
	syncs := r.a.Registry().Syncs()
	done := make(chan error, 1)
	go func() { done <- op() }()
	var early error
	answered := false
	eventually.True(t, "op to send its sync or answer", func() bool {
		select {
		case early = <-done:
			answered = true // answered without a sync: the test's assertions judge it
			return true
		default:
			return r.a.Registry().Syncs() != syncs
		}
	})
	r.cut.Resume()
	if answered {
		return early
	}
	return <-done
}

// TestDecisionsFollowOtherSidecarsWrites: while A's view of a producer is
// stale (its session's notifications held back), a DELETE, a REGISTER and
// a GET sent to A after B's write was acknowledged answer as if A had seen
// it.
func TestDecisionsFollowOtherSidecarsWrites(t *testing.T) {
	r := newStaleRig(t, nil)
	ctx := t.Context()

	t.Run("delete after another sidecar's create", func(t *testing.T) {
		const id = "stale-delete"
		r.warm(t, ctx, id, -1) // A caches the absence
		r.cut.Stall()
		if res, err := registerOffset(ctx, r.cb, id, 11); err != nil || res != 0 {
			t.Fatalf("B's register: %d, %v", res, err)
		}
		if err := r.whileStale(t, func() error { return deleteSnapshot(ctx, r.ca, id) }); err != nil {
			t.Fatalf("A's delete: %v", err)
		}
		if off, err := getOffset(ctx, r.cb, id); err != nil || off != -1 {
			t.Fatalf("after A answered the delete, B reads %d (%v): the delete deleted nothing", off, err)
		}
	})

	t.Run("register after another sidecar's delete", func(t *testing.T) {
		const id = "stale-register"
		if res, err := registerOffset(ctx, r.cb, id, 21); err != nil || res != 0 {
			t.Fatalf("B's register: %d, %v", res, err)
		}
		r.warm(t, ctx, id, 21) // A caches the snapshot
		r.cut.Stall()
		if err := deleteSnapshot(ctx, r.cb, id); err != nil {
			t.Fatalf("B's delete: %v", err)
		}
		var res int32
		err := r.whileStale(t, func() (err error) { res, err = registerOffset(ctx, r.ca, id, 22); return err })
		if err != nil || res != 0 {
			t.Fatalf("A's register after B's acknowledged delete: result %d (want 0 CREATED), %v", res, err)
		}
		if off, err := getOffset(ctx, r.cb, id); err != nil || off != 22 {
			t.Fatalf("B reads %d (%v), want A's new snapshot 22", off, err)
		}
	})

	t.Run("get after another sidecar's delete", func(t *testing.T) {
		const id = "stale-get"
		if res, err := registerOffset(ctx, r.cb, id, 31); err != nil || res != 0 {
			t.Fatalf("B's register: %d, %v", res, err)
		}
		r.warm(t, ctx, id, 31)
		r.cut.Stall()
		if err := deleteSnapshot(ctx, r.cb, id); err != nil {
			t.Fatalf("B's delete: %v", err)
		}
		var off int64
		err := r.whileStale(t, func() (err error) { off, err = getOffset(ctx, r.ca, id); return err })
		if err != nil || off != -1 {
			t.Fatalf("A's get after B's acknowledged delete: %d, %v (want -1, absent)", off, err)
		}
	})
}

// TestSequentialReadsDoNotWait: with sidecar.read-consistency sequential a
// GET answers from A's view without a sync, so while notifications are
// held back it returns what A saw last: the documented difference between
// the modes. Register and delete still decide on synced state.
func TestSequentialReadsDoNotWait(t *testing.T) {
	r := newStaleRig(t, map[string]string{app.KeyReadConsistency: app.ReadSequential})
	ctx := t.Context()
	const id = "sequential"
	if res, err := registerOffset(ctx, r.cb, id, 41); err != nil || res != 0 {
		t.Fatalf("B's register: %d, %v", res, err)
	}
	r.warm(t, ctx, id, 41)
	r.cut.Stall()
	if err := deleteSnapshot(ctx, r.cb, id); err != nil {
		t.Fatalf("B's delete: %v", err)
	}
	syncs := r.a.Registry().Syncs()
	off, err := getOffset(ctx, r.ca, id)
	r.cut.Resume()
	if err != nil || off != 41 {
		t.Fatalf("a sequential get on the stalled sidecar: %d, %v (want the snapshot it saw, 41)", off, err)
	}
	if n := r.a.Registry().Syncs(); n != syncs {
		t.Fatalf("a sequential get sent %d syncs", n-syncs)
	}
	var res int32
	err = r.whileStale(t, func() (err error) { res, err = registerOffset(ctx, r.ca, id, 42); return err })
	if err != nil || res != 0 {
		t.Fatalf("register in sequential mode after B's delete: %d, %v (want CREATED)", res, err)
	}
}

func TestReadConsistencyIsValidated(t *testing.T) {
	c := apptest.Config(t, sharedZK, map[string]string{app.KeyReadConsistency: "eventual"})
	if _, err := app.FromConfig(c); err == nil {
		t.Fatal("sidecar.read-consistency: eventual was accepted")
	}
	for _, v := range []string{"linearizable", "SEQUENTIAL"} {
		c := apptest.Config(t, sharedZK, map[string]string{app.KeyReadConsistency: v})
		if _, err := app.FromConfig(c); err != nil {
			t.Fatalf("%s refused: %v", v, err)
		}
	}
}
