package app_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// TestSnapshotCacheAcrossSidecars runs two sidecars on one cluster (one
// ZooKeeper root, one remote.data.dir), each with its cache: a GET storm on
// A for an id B has not registered yet is served from memory, and what B
// registers, then deletes, becomes visible on A.
func TestSnapshotCacheAcrossSidecars(t *testing.T) {
	kv := map[string]string{
		"zookeeper.path.root": zktest.UniqueRoot(),
		"remote.data.dir":     "file://" + t.TempDir(),
	}
	a := apptest.Start(t, sharedZK, kv)
	b := apptest.Start(t, sharedZK, kv)
	ca, cb := dial(t, a.Addr()), dial(t, b.Addr())
	const id = "recovering-job"
	for range 10 {
		if resp := get(t, ca, id); resp.ProducerId != nil {
			t.Fatalf("found before register: %v", resp)
		}
	}
	if st := a.Cache().Stats(); st.Misses != 1 || st.Hits != 9 || !st.Watching {
		t.Fatalf("A's cache after 10 gets of an absent id: %+v", st)
	}
	if err := register(t, cb, id, 1, 2); err != nil {
		t.Fatal(err)
	}
	eventually.Nil(t, "A sees B's register", func() error {
		if resp := get(t, ca, id); len(resp.TableOffsets) != 2 {
			return fmt.Errorf("A answers %v", resp)
		}
		return nil
	})
	if err := deleteID(t, cb, id); err != nil {
		t.Fatal(err)
	}
	eventually.Nil(t, "A sees B's delete", func() error {
		if resp := get(t, ca, id); resp.ProducerId != nil {
			return fmt.Errorf("A answers %v", resp)
		}
		return nil
	})
}

func TestSnapshotCacheSettings(t *testing.T) {
	for _, tc := range []struct {
		kv      map[string]string
		enabled bool
		bytes   int64
		entries int
		bad     bool
	}{
		{kv: nil, enabled: true, bytes: 64 << 20, entries: 100000},
		{kv: map[string]string{app.KeyCacheMaxBytes: "1mb", app.KeyCacheMaxEntries: "10"}, enabled: true, bytes: 1 << 20, entries: 10},
		{kv: map[string]string{app.KeyCacheMaxBytes: "0"}, enabled: false, entries: 100000},
		{kv: map[string]string{app.KeyCacheMaxEntries: "0"}, enabled: false, bytes: 64 << 20},
		{kv: map[string]string{app.KeyCacheMaxEntries: "-1"}, bad: true},
		{kv: map[string]string{app.KeyCacheMaxBytes: "lots"}, bad: true},
	} {
		s, err := app.FromConfig(apptest.Config(t, sharedZK, tc.kv))
		if tc.bad {
			if err == nil {
				t.Errorf("%v: accepted", tc.kv)
			}
			continue
		}
		if err != nil || s.Cache.Enabled() != tc.enabled || s.Cache.MaxBytes != tc.bytes || s.Cache.MaxEntries != tc.entries {
			t.Errorf("%v: %+v %v", tc.kv, s.Cache, err)
		}
	}
	off := apptest.Start(t, sharedZK, map[string]string{app.KeyCacheMaxBytes: "0"})
	if off.Cache() != nil {
		t.Fatal("cache on with max-bytes 0")
	}
	c := dial(t, off.Addr())
	if err := register(t, c, "p", 1); err != nil {
		t.Fatal(err)
	}
	if resp := get(t, c, "p"); len(resp.TableOffsets) != 1 {
		t.Fatalf("without cache: %v", resp)
	}
}

// TestSnapshotCacheHoldsOnlyLiveAcrossSidecars: two sidecars on one
// cluster; hundreds of times a client registers a two-table snapshot on B,
// reads it on A, deletes it on B and reads it on A again. A's cache then
// holds the live snapshots, their files and the absences of the deleted
// ones, nothing else: the files of the snapshots B deleted left A's cache
// with them (before, each cycle left two file entries on A until evicted).
func TestSnapshotCacheHoldsOnlyLiveAcrossSidecars(t *testing.T) {
	kv := map[string]string{
		"zookeeper.path.root": zktest.UniqueRoot(),
		"remote.data.dir":     "file://" + t.TempDir(),
	}
	a := apptest.Start(t, sharedZK, kv)
	b := apptest.Start(t, sharedZK, kv)
	const (
		workers   = 4
		cycles    = 400
		keepEvery = 40 // one cycle in keepEvery leaves its snapshot live
	)
	ctx := t.Context()
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		ca, cb := dial(t, a.Addr()), dial(t, b.Addr())
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < cycles; i += workers {
				if err := wireCycle(ctx, ca, cb, fmt.Sprint("job-", i), i%keepEvery == 0); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// A read whose reply came after a notification for its id is not
	// cached, so which GETs above left an entry depends on timing. Read
	// the live snapshots once more, now that every notification of B's
	// writes has reached A (each GET waited for a sync sent after B's
	// write): each is cached with its files.
	ca := dial(t, a.Addr())
	for i := 0; i < cycles; i += keepEvery {
		if resp := get(t, ca, fmt.Sprint("job-", i)); len(resp.TableOffsets) != 2 {
			t.Fatalf("job-%d on A: %v", i, resp)
		}
	}
	live := cycles / keepEvery
	deleted := cycles - live
	if st := a.Cache().Stats(); st.Files != 2*live || st.Absences > deleted || st.Entries != live+2*live+st.Absences {
		t.Fatalf("A's cache %+v; want %d snapshots, their %d files and at most %d absences", st, live, 2*live, deleted)
	}
	if st := b.Cache().Stats(); st.Files != 2*live {
		t.Fatalf("B's cache %+v; want the %d files of its live snapshots", st, 2*live)
	}
}

// wireCycle is one round of TestSnapshotCacheHoldsOnlyLiveAcrossSidecars.
func wireCycle(ctx context.Context, ca, cb *wire.Client, id string, keep bool) error {
	if err := cb.Call(ctx, keyRegister, 0, registerReq(id, 1, 2), &messages.RegisterProducerOffsetsResponse{}); err != nil {
		return fmt.Errorf("register %s on B: %w", id, err)
	}
	getA := func() (*messages.GetProducerOffsetsResponse, error) {
		resp := &messages.GetProducerOffsetsResponse{}
		err := ca.Call(ctx, keyGet, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, resp)
		return resp, err
	}
	if resp, err := getA(); err != nil || len(resp.TableOffsets) != 2 {
		return fmt.Errorf("get %s on A after B's register: %v %v", id, resp, err)
	}
	if keep {
		return nil
	}
	if err := cb.Call(ctx, keyDelete, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, &messages.DeleteProducerOffsetsResponse{}); err != nil {
		return fmt.Errorf("delete %s on B: %w", id, err)
	}
	if resp, err := getA(); err != nil || resp.ProducerId != nil {
		return fmt.Errorf("get %s on A after B's delete: %v %v", id, resp, err)
	}
	return nil
}
