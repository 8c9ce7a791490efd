package lincheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// TestEnsembleKeepsAcknowledgedWrites runs the "ensemble leader killed"
// fault with ZooKeeper clients alone, no sidecar: writers create znodes
// (each path used once) and delete half of them again, and once the fault
// is over every member is asked, after a sync, whether each acknowledged
// create is still there and each acknowledged delete still gone. A write
// whose outcome was not acknowledged either way proves nothing and is left
// out. It tells a failure of the sidecar's scenario apart from ZooKeeper
// losing or resurrecting what it acknowledged under the same fault.
func TestEnsembleKeepsAcknowledgedWrites(t *testing.T) {
	if !long() {
		t.Skipf("runs with %s=1 (make lincheck)", longEnv)
	}
	e := startEnsemble(t)
	root := zktest.UniqueRoot()

	const writers = 8
	type outcome struct {
		created, deleted []string // acknowledged
		unknown          int
	}
	outcomes := make([]outcome, writers)
	runCtx, stop := context.WithTimeout(context.Background(), runDuration())
	defer stop()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			c, err := zk.Connect(cctx, zk.Config{Address: e.Address(), Root: root})
			cancel()
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
				return
			}
			defer c.Close()
			o := &outcomes[w]
			for i := 0; runCtx.Err() == nil; i++ {
				path := fmt.Sprintf("/w%d-%d", w, i)
				opCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				_, err := c.Create(opCtx, path, []byte(path), zk.Persistent)
				cancel()
				if err != nil {
					o.unknown++
					continue
				}
				if i%2 == 1 {
					o.created = append(o.created, path)
					continue
				}
				opCtx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
				err = c.Delete(opCtx, path, -1)
				cancel()
				if err != nil {
					o.unknown++
					continue
				}
				o.deleted = append(o.deleted, path)
			}
		}()
	}
	gap := runDuration() / time.Duration(3*faultRounds()+1)
	for range 3 * faultRounds() {
		if !sleepCtx(runCtx, gap) {
			break
		}
		if err := bounceLeader(e); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()

	var created, deleted []string
	unknown := 0
	for _, o := range outcomes {
		created = append(created, o.created...)
		deleted = append(deleted, o.deleted...)
		unknown += o.unknown
	}
	t.Logf("%d creates and %d deletes acknowledged, %d writes with no acknowledgement", len(created), len(deleted), unknown)
	if len(created) == 0 || len(deleted) == 0 {
		t.Fatalf("trivial run: nothing to check")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for m, s := range e.Servers {
		c, err := zk.Connect(ctx, zk.Config{Address: s.Addr, Root: root})
		if err != nil {
			t.Fatalf("member %d: %v", m, err)
		}
		if err := c.Sync(ctx, "/"); err != nil {
			t.Fatalf("member %d: sync: %v", m, err)
		}
		var lost, back []string
		for _, p := range created {
			ok, _, err := c.Exists(ctx, p)
			if err != nil {
				t.Fatalf("member %d: exists %s: %v", m, p, err)
			}
			if !ok {
				lost = append(lost, p)
			}
		}
		for _, p := range deleted {
			ok, _, err := c.Exists(ctx, p)
			if err != nil && !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("member %d: exists %s: %v", m, p, err)
			}
			if ok {
				back = append(back, p)
			}
		}
		c.Close()
		if len(lost) > 0 || len(back) > 0 {
			t.Errorf("member %d (%s) lost %d acknowledged creates (first %v) and brought back %d acknowledged deletes (first %v)",
				m, s.Addr, len(lost), first(lost), len(back), first(back))
		}
	}
}

func first(s []string) []string { return s[:min(len(s), 3)] }
