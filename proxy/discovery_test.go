package proxy_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

func waitChange(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-t.Context().Done():
		t.Fatal("discovery saw no change")
	}
}

// TestZKDiscoveryFollowsLeader runs discovery over a real ZooKeeper: it
// picks the configured listener, refuses service while no coordinator is
// active, and after a leader change sends new client connections to the new
// leader while an existing one keeps its upstream.
func TestZKDiscoveryFollowsLeader(t *testing.T) {
	ctx := t.Context()
	zc := connectZK(t)
	disc := runDiscovery(t, proxy.ZKDiscoveryConfig{ZK: zc, ListenerName: "CLIENT", RetryBackoff: 50 * time.Millisecond})

	fake1 := startFake(t, fakecoord.Config{NodeID: 1})
	fake2 := startFake(t, fakecoord.Config{NodeID: 2})
	ln := listener(t)
	local := newRealLocal(t, config.Listener{Name: "CLIENT", Host: "127.0.0.1", Port: 1})
	serveProxy(t, ln, proxy.Config{Upstream: disc, Local: local.mux}, wire.ServerConfig{})

	// No coordinator yet.
	if _, err := disc.Current(ctx); !errors.Is(err, proxy.ErrNoActiveCoordinator) {
		t.Fatalf("Current before election: %v", err)
	}
	early := dialRaw(t, ln.Addr().String())
	early.Handshake() // answered locally
	early.Send(messages.KeyListDatabases, 0, 1, nil)
	wantCode(t, early.Read(), flusserr.NetworkException, "names no active coordinator")

	// Coordinator 1 is elected (version 2 znode, two listeners).
	changed := disc.Changed()
	v2 := fmt.Sprintf(`{"version":2,"id":"1","listeners":"FLUSS://127.0.0.1:1,CLIENT://%s"}`, fake1.Addr())
	if _, err := zc.Create(ctx, proxy.ActiveCoordinatorPath, []byte(v2), zk.Ephemeral); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changed)
	a := dialRaw(t, ln.Addr().String())
	a.Handshake()
	a.Send(messages.KeyListDatabases, 0, 1, []byte("a1"))
	if r := a.Read(); r.Type != wire.ResponseSuccess {
		t.Fatal(r.Err())
	}

	// Leader change to coordinator 2 (version 1 znode).
	changed = disc.Changed()
	v1 := fmt.Sprintf(`{"version":1,"id":2,"host":"127.0.0.1","port":%d}`, fake2.Port())
	if _, err := zc.Set(ctx, proxy.ActiveCoordinatorPath, []byte(v1), -1); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changed)
	if got, err := disc.Current(ctx); err != nil || got != fake2.Addr() {
		t.Fatalf("Current after leader change: %s %v", got, err)
	}
	b := dialRaw(t, ln.Addr().String())
	b.Handshake()
	b.Send(messages.KeyListDatabases, 0, 1, []byte("b1"))
	a.Send(messages.KeyListDatabases, 0, 2, []byte("a2"))
	b.Read()
	a.Read()

	bodies := func(f *fakecoord.Coordinator) int { return len(f.RequestsFor(messages.KeyListDatabases)) }
	if bodies(fake1) != 2 || bodies(fake2) != 1 {
		t.Fatalf("LIST_DATABASES seen by coordinator 1: %d (want 2, connection a), by 2: %d (want 1, connection b)",
			bodies(fake1), bodies(fake2))
	}

	// An unusable znode is reported, not guessed around.
	changed = disc.Changed()
	if _, err := zc.Set(ctx, proxy.ActiveCoordinatorPath, []byte(`{"version":2,"id":"3","listeners":"FLUSS://h:1"}`), -1); err != nil {
		t.Fatal(err)
	}
	waitChange(t, changed)
	if _, err := disc.Current(ctx); err == nil {
		t.Fatal("a coordinator without the CLIENT listener was accepted")
	}
}
