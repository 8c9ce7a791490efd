package zk

import (
	"context"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// BenchmarkBarrier prices the read barrier on a three-server ensemble, one
// barrier in flight at a time as a shared sync round sends them:
//   - follower: the session is on a follower, the barrier is a sync;
//   - leader: the session is on the leader, the barrier is the write that
//     changes nothing (barrier.go: the leader's own sync does not wait for
//     commits);
//   - leader-sync: the plain sync on the leader, which is no barrier there,
//     for the price the write adds.
//
// ns/op is one barrier's latency; zk-cpu-us/op is the CPU all three
// servers spent per barrier, from their processes' accounting.
func BenchmarkBarrier(b *testing.B) {
	ctx := b.Context()
	e, err := zktest.StartEnsemble(ctx, 3)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(e.Close)
	leader := e.Leader()
	if leader == nil {
		b.Fatal("no leader")
	}
	var follower *zktest.Server
	for _, s := range e.Servers {
		if s != leader {
			follower = s
			break
		}
	}
	open := func(addr string) *Client {
		c, err := Connect(ctx, Config{Address: addr, Root: zktest.UniqueRoot()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(c.Close)
		if _, err := c.Create(ctx, "/p", nil, Persistent); err != nil {
			b.Fatal(err)
		}
		return c
	}
	onLeader, onFollower := open(leader.Addr), open(follower.Addr)
	sides := []struct {
		name    string
		barrier func(context.Context) error
	}{
		{"follower", func(ctx context.Context) error { return onFollower.Sync(ctx, "/p") }},
		{"leader", func(ctx context.Context) error { return onLeader.Sync(ctx, "/p") }},
		{"leader-sync", func(ctx context.Context) error {
			_, err := call(ctx, onLeader, "sync", onLeader.FullPath("/p"), func() (string, error) {
				return onLeader.conn.Sync(onLeader.FullPath("/p"))
			})
			return err
		}},
	}
	// Warm the JVMs up on every path first.
	for _, s := range sides {
		for range 2000 {
			if err := s.barrier(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	cpu := func() time.Duration {
		var sum time.Duration
		for _, s := range e.Servers {
			d, ok := s.CPUTime()
			if !ok {
				b.Fatal("no CPU time for a ZooKeeper server")
			}
			sum += d
		}
		return sum
	}
	for _, s := range sides {
		b.Run(s.name, func(b *testing.B) {
			before := cpu()
			for b.Loop() {
				if err := s.barrier(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpu()-before).Microseconds())/float64(b.N), "zk-cpu-us/op")
		})
	}
}
