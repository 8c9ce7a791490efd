package app_test

import (
	"fmt"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
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
	eventually(t, "A sees B's register", func() error {
		if resp := get(t, ca, id); len(resp.TableOffsets) != 2 {
			return fmt.Errorf("A answers %v", resp)
		}
		return nil
	})
	if err := deleteID(t, cb, id); err != nil {
		t.Fatal(err)
	}
	eventually(t, "A sees B's delete", func() error {
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
