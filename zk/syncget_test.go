package zk

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// SyncGet answers what Get answers: data, stat and absence alike, also
// for many calls at once on one connection.
func TestSyncGetMatchesGet(t *testing.T) {
	ctx := t.Context()
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

// holdSyncReads makes c's SyncGet calls queue as if a batch were in flight
// and returns the function that lets that batch return: the next batch
// then goes out with every call queued meanwhile.
func holdSyncReads(c *Client) (release func()) {
	c.reads.mu.Lock()
	c.reads.inFlight = true
	c.reads.mu.Unlock()
	return func() {
		if batch := c.reads.following(); batch != nil {
			go c.runSyncReads(batch)
		}
	}
}

func waitingReads(c *Client) int {
	c.reads.mu.Lock()
	defer c.reads.mu.Unlock()
	return len(c.reads.next)
}

// TestSyncGetSharesOneSync: calls that arrive while a batch is in flight
// go out together behind one sync, each with its own path's answer
// (present, absent, the same path twice), and a write acknowledged before
// they arrived is seen by all of them.
func TestSyncGetSharesOneSync(t *testing.T) {
	ctx := t.Context()
	root := zktest.UniqueRoot()
	c := connect(t, zkAddr, root)
	for _, p := range []string{"/a", "/b", "/c"} {
		if _, err := c.Create(ctx, p, []byte("old"+p), Persistent); err != nil {
			t.Fatal(err)
		}
	}
	release := holdSyncReads(c)
	// Written through another session, acknowledged before the reads
	// arrive.
	other := connect(t, zkAddr, root)
	if _, err := other.Set(ctx, "/b", []byte("new/b"), -1); err != nil {
		t.Fatal(err)
	}
	paths := []string{"/a", "/b", "/c", "/missing", "/a", "/b"}
	want := []string{"old/a", "new/b", "old/c", "", "old/a", "new/b"}
	type result struct {
		i    int
		data string
		err  error
	}
	results := make(chan result, len(paths))
	for i, p := range paths {
		go func() {
			d, _, err := c.SyncGet(ctx, p)
			results <- result{i, string(d), err}
		}()
	}
	eventually.True(t, "every read to queue", func() bool { return waitingReads(c) >= len(paths) })
	before := c.reads.batches.Load()
	release()
	for range paths {
		r := <-results
		switch {
		case want[r.i] == "" && !errors.Is(r.err, ErrNoNode):
			t.Errorf("SyncGet(%s) = %q, %v; want ErrNoNode", paths[r.i], r.data, r.err)
		case want[r.i] != "" && (r.err != nil || r.data != want[r.i]):
			t.Errorf("SyncGet(%s) = %q, %v; want %q", paths[r.i], r.data, r.err, want[r.i])
		}
	}
	if n := c.reads.batches.Load() - before; n != 1 {
		t.Errorf("%d batches for %d reads queued together, want 1", n, len(paths))
	}
}

// TestSyncGetDropsAbandonedReads: reads whose callers gave up while a batch
// was stuck in flight do not pile up in the waiting list, and a read that
// is still waited for is answered once the batch returns.
func TestSyncGetDropsAbandonedReads(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	if _, err := c.Create(ctx, "/p", []byte("data"), Persistent); err != nil {
		t.Fatal(err)
	}
	release := holdSyncReads(c)
	gone, cancel := context.WithCancel(ctx)
	const n = compactAt + 100
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.SyncGet(gone, "/p"); !errors.Is(err, context.Canceled) {
				t.Errorf("abandoned SyncGet: %v, want context.Canceled", err)
			}
		}()
	}
	eventually.True(t, "every read to queue", func() bool { return waitingReads(c) >= n })
	cancel()
	wg.Wait()
	done := make(chan error, 1)
	go func() {
		d, _, err := c.SyncGet(ctx, "/p")
		if err == nil && string(d) != "data" {
			err = errors.New("wrong data " + string(d))
		}
		done <- err
	}()
	eventually.True(t, "the abandoned reads to be dropped", func() bool { return waitingReads(c) != n })
	if w := waitingReads(c); w != 1 {
		t.Errorf("%d reads waiting after %d callers gave up and one more arrived, want 1", w, n)
	}
	release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
