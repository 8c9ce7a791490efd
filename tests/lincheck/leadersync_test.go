package lincheck

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// TestSyncThenReadAfterAnotherServersAck checks, with ZooKeeper clients
// alone, what the read barrier (zk.Client.Sync) promises: a writer on one
// follower creates a znode and, the moment the create is acknowledged,
// readers on the other members send a barrier and then a read. Through
// the other follower a sync is enough; through the leader it is not (the
// leader answers a sync without waiting for commits, and applies a commit
// itself after telling the followers), so zk.Client.Sync writes there
// instead (zk/barrier.go). The test requires no miss through either
// barrier and reports the misses of a plain go-zookeeper sync on the
// leader, the gap the write closes.
func TestSyncThenReadAfterAnotherServersAck(t *testing.T) {
	if !long() {
		t.Skipf("runs with %s=1 (make lincheck)", longEnv)
	}
	e := startEnsemble(t)
	leader := e.Leader()
	if leader == nil {
		t.Fatal("no leader")
	}
	var followers []*zktest.Server
	for _, s := range e.Servers {
		if s != leader {
			followers = append(followers, s)
		}
	}
	root := zktest.UniqueRoot()
	connect := func(s *zktest.Server) *zk.Client {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := zk.Connect(cctx, zk.Config{Address: s.Addr, Root: root})
		if err != nil {
			t.Fatalf("connect %s: %v", s.Addr, err)
		}
		t.Cleanup(c.Close)
		return c
	}
	writer := connect(followers[0])
	raw, _, err := gozk.Connect([]string{leader.Addr}, time.Minute, gozk.WithLogger(gozkQuiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(raw.Close)
	type reader func(ctx context.Context, path string) (bool, error)
	barrierRead := func(c *zk.Client) reader {
		return func(ctx context.Context, path string) (bool, error) {
			if err := c.Sync(ctx, "/"); err != nil {
				return false, err
			}
			ok, _, err := c.Exists(ctx, path)
			return ok, err
		}
	}
	readers := map[string]reader{
		"leader, barrier":   barrierRead(connect(leader)),
		"follower, barrier": barrierRead(connect(followers[1])),
		"leader, plain sync": func(_ context.Context, path string) (bool, error) {
			if _, err := raw.Sync(root); err != nil {
				return false, err
			}
			ok, _, err := raw.Exists(root + path)
			return ok, err
		},
	}
	const rounds = 1000
	misses := map[string]int{}
	var mu sync.Mutex
	for i := range rounds {
		path := fmt.Sprintf("/n%d", i)
		opCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if _, err := writer.Create(opCtx, path, nil, zk.Persistent); err != nil {
			cancel()
			t.Fatalf("create %s: %v", path, err)
		}
		// Every reader starts once the create is acknowledged.
		var wg sync.WaitGroup
		for name, read := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := read(opCtx, path)
				if err != nil {
					t.Errorf("%s: %v", name, err)
					return
				}
				if !ok {
					mu.Lock()
					misses[name]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		cancel()
	}
	t.Logf("%d creates acknowledged by a follower, then a barrier and a read on another member: misses %v", rounds, misses)
	for _, name := range []string{"leader, barrier", "follower, barrier"} {
		if misses[name] > 0 {
			t.Errorf("%s: a read after the barrier missed %d acknowledged creates", name, misses[name])
		}
	}
}

// gozkQuiet drops go-zookeeper's log lines.
type gozkQuiet struct{}

func (gozkQuiet) Printf(string, ...any) {}
