package lincheck

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// producerTree is one server's view of the producer znodes: for each id,
// its creation and modification zxids and a digest of its data.
type producerTree map[string]string

// readTree reads the producer znodes under root from one server alone,
// after a sync on that server.
func readTree(ctx context.Context, addr, root string) (producerTree, error) {
	c, err := zk.Connect(ctx, zk.Config{Address: addr, Root: root})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Sync(ctx, "/"); err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	ids, err := c.Children(ctx, zkstore.ProducersPath)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	tree := producerTree{}
	for _, id := range ids {
		data, st, err := c.Get(ctx, zkstore.ProducersPath+"/"+id)
		if err != nil {
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			return nil, fmt.Errorf("get %s: %w", id, err)
		}
		tree[id] = fmt.Sprintf("czxid=%#x mzxid=%#x data=%x", st.Czxid, st.Mzxid, sha256.Sum256(data))
	}
	return tree, nil
}

// diffTrees describes how b differs from a, "" when they are equal.
func diffTrees(a, b producerTree) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s: %q vs %q", k, a[k], b[k]))
		}
	}
	return strings.Join(out, "; ")
}

// checkEnsembleAgrees fails the test if the ensemble's servers, each read
// on its own after a sync, hold different producer znodes: then the
// servers diverged (a ZooKeeper fault, not a client's), and no history
// read through them could be judged.
func checkEnsembleAgrees(t *testing.T, e *zktest.Ensemble, root string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var first producerTree
	for i, s := range e.Servers {
		tree, err := readTree(ctx, s.Addr, root)
		if err != nil {
			t.Errorf("ensemble member %d (%s): %v", i, s.Addr, err)
			return
		}
		if i == 0 {
			first = tree
			continue
		}
		if d := diffTrees(first, tree); d != "" {
			t.Errorf("ensemble members 0 and %d disagree after a sync on each (ZooKeeper diverged): %s", i, d)
		}
	}
	t.Logf("the %d ensemble members agree on %d producer znodes", len(e.Servers), len(first))
}

// startEnsemble starts three ZooKeeper servers of the test's own, stopped
// when it ends.
func startEnsemble(t *testing.T) *zktest.Ensemble {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	e, err := zktest.StartEnsemble(ctx, 3)
	cancel()
	if err != nil {
		t.Fatalf("ensemble: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// bounceLeader stops the ensemble's leader, waits a second (the others
// elect a new one) and starts it again on its data.
func bounceLeader(e *zktest.Ensemble) error {
	l := e.Leader()
	if l == nil {
		return errors.New("the ensemble has no leader")
	}
	l.Stop()
	time.Sleep(time.Second) // the sleep is under test: the leader stays down while the others elect a new one
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := l.Restart(ctx); err != nil {
		return fmt.Errorf("restart the old leader: %w", err)
	}
	return nil
}
