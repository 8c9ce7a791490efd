package app_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// TestCleanupOneLeader: two sidecars on one ZooKeeper root and remote
// directory, with a short cleanup interval. Exactly one leads cleanup;
// every expired snapshot is removed once and reported once (the two
// instances' removal counters sum to the number of snapshots, and only
// the leader's moves); the other says it follows. When the leader stops,
// the follower takes over and removes what expires next.
func TestCleanupOneLeader(t *testing.T) {
	root := zktest.UniqueRoot()
	remoteDir := "file://" + t.TempDir()
	logs := map[string]*syncbuf.Buffer{}
	start := func(name string) *app.App {
		kv := reporterOn(map[string]string{
			"zookeeper.path.root": root, "remote.data.dir": remoteDir,
			"coordinator.producer-offsets.cleanup-interval": "100 ms",
			"sidecar.orphan-cleanup.grace-period":           "1 h",
		})
		c := apptest.Config(t, sharedZK, kv)
		logs[name] = &syncbuf.Buffer{}
		return apptest.StartConfig(t, c, app.Options{Logger: hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.Info, Output: logs[name]})})
	}
	a, b := start("a"), start("b")
	apps := map[string]*app.App{"a": a, "b": b}
	leaderOf := func() (string, string) {
		la := value(scrape(t, a), "fluss_sidecar_cleanup_leader")
		lb := value(scrape(t, b), "fluss_sidecar_cleanup_leader")
		switch {
		case la == 1 && lb == 0:
			return "a", "b"
		case la == 0 && lb == 1:
			return "b", "a"
		}
		return "", ""
	}
	var leader, follower string
	eventually.True(t, "one leader", func() bool { leader, follower = leaderOf(); return leader != "" })

	removed := func(name string) float64 {
		return value(scrape(t, apps[name]), "fluss_sidecar_cleanup_expiredSnapshotsRemovedTotal")
	}
	zc, err := zk.Connect(t.Context(), zk.Config{Address: sharedZK, Root: root, ConnectionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	producersLeft := func() int {
		ids, err := zc.Children(t.Context(), "/producers")
		if err != nil {
			t.Fatal(err)
		}
		return len(ids)
	}

	// Expired at birth (negative TTL), registered through both sidecars.
	const n = 12
	ca, cb := dial(t, a.Addr()), dial(t, b.Addr())
	for i := 0; i < n; i++ {
		c := ca
		if i%2 == 1 {
			c = cb
		}
		if err := registerTTL(t.Context(), c, fmt.Sprintf("expired-%d", i), -1000); err != nil {
			t.Fatal(err)
		}
	}
	eventually.True(t, "expired snapshots removed", func() bool { return producersLeft() == 0 })
	eventually.True(t, "the removals counted", func() bool { return removed(leader)+removed(follower) >= n })
	if l, f := removed(leader), removed(follower); l != n || f != 0 {
		t.Fatalf("leader reported %v removals, follower %v; want %d and 0", l, f, n)
	}
	// Let more rounds pass on both: nothing is removed or counted twice.
	eventually.True(t, "the follower to skip rounds", func() bool {
		return value(scrape(t, apps[follower]), "fluss_sidecar_cleanup_runsTotal", "result=following") >= 3
	})
	if got := removed(follower); got != 0 {
		t.Fatalf("the follower reported %v removals; each snapshot must be removed and reported once", got)
	}
	if got := removed(leader); got != n {
		t.Fatalf("the leader reported %v removals, want %d", got, n)
	}
	if got := value(scrape(t, apps[leader]), "fluss_sidecar_cleanup_runsTotal", "result=following"); got > 0 {
		t.Fatalf("the leader skipped %v rounds as a follower", got)
	}
	if !strings.Contains(logs[follower].String(), "following: another instance leads cleanup") {
		t.Errorf("the follower does not say it follows:\n%s", logs[follower])
	}
	if c := strings.Count(logs[leader].String(), "deleted expired producer snapshots"); c == 0 {
		t.Errorf("the leader does not report its removals:\n%s", logs[leader])
	}
	if strings.Contains(logs[follower].String(), "deleted expired producer snapshots") {
		t.Errorf("the follower reports removals:\n%s", logs[follower])
	}

	// The leader stops: the follower takes over.
	apps[leader].Close()
	next := apps[follower]
	eventually.True(t, "the follower to lead", func() bool { return value(scrape(t, next), "fluss_sidecar_cleanup_leader") == 1 })
	c := ca
	if follower == "b" {
		c = cb
	}
	const m = 5
	for i := 0; i < m; i++ {
		if err := registerTTL(t.Context(), c, fmt.Sprintf("later-%d", i), -1000); err != nil {
			t.Fatal(err)
		}
	}
	eventually.True(t, "snapshots removed by the new leader", func() bool { return producersLeft() == 0 })
	eventually.True(t, "the new leader's removals counted", func() bool { return removed(follower) == m })
	if !strings.Contains(logs[follower].String(), "this instance leads cleanup") {
		t.Errorf("the new leader does not say it leads:\n%s", logs[follower])
	}
}
