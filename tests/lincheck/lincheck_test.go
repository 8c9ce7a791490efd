package lincheck

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// plan describes one scenario.
type plan struct {
	// sidecars is how many sidecars share the ZooKeeper root and the
	// remote directory (default 2); clients is how many clients each has.
	sidecars, clients int
	// kv adds settings to sidecar i (index i); every sidecar also gets the
	// shared ZooKeeper and storage keys, then LINCHECK_KV.
	kv []map[string]string
	// zk is where the sidecars' ZooKeeper is: "single" (the package's
	// server, directly), "cut" (the same server, each sidecar through its
	// own zktest.Cutter) or "ensemble" (three servers of their own).
	zk string
	// front, if set, puts something between sidecar i's clients and the
	// sidecar and returns the address clients dial.
	front func(t *testing.T, r *rig, i int) func() string
	// coordinators is how many coordinator writers (coordinator_test.go)
	// share the producer ids; they need zk "single".
	coordinators int
	// excuse, if set, accepts some UNKNOWN_SERVER_ERROR answers, by
	// message; runPlan sets it when coordinators run (a coordinator's
	// orphan cleanup removes files of snapshots being registered, W2).
	excuse func(msg string) bool
	// fault runs beside the workload and returns once ctx ends, with every
	// fault undone.
	fault func(ctx context.Context, t *testing.T, r *rig)
}

// rig is a running scenario.
type rig struct {
	sidecars []*sidecarProc
	relays   []*relay
	cutters  []*zktest.Cutter
	ensemble *zktest.Ensemble
}

// ids are the producer ids every client of a run shares: few, so that
// clients collide on them.
var ids = []string{"lc-p0", "lc-p1", "lc-p2", "lc-p3"}

func runDuration() time.Duration {
	if long() {
		return 15 * time.Second
	}
	return 3 * time.Second
}

func checkTimeout() time.Duration {
	if long() {
		return 10 * time.Minute
	}
	return time.Minute
}

func sidecarName(i int) string { return string(rune('A' + i)) }

// result is what one run produced.
type result struct {
	ops     []porcupine.Operation
	cnt     map[string]*counters
	verdict Verdict
	excuse  func(msg string) bool
}

// runPlan starts the scenario's servers, drives the workload with the fault
// beside it, and checks the history.
func runPlan(t *testing.T, p plan) result {
	t.Helper()
	zktest.SkipIfShort(t)
	if p.sidecars == 0 {
		p.sidecars = 2
	}
	if p.clients == 0 {
		p.clients = 3
		if long() {
			p.clients = 4
		}
	}
	r := &rig{}
	root := zktest.UniqueRoot()
	dataDir := remoteDataDir(t)
	zkAddrs := make([]string, p.sidecars)
	switch p.zk {
	case "", "single":
		for i := range zkAddrs {
			zkAddrs[i] = sharedZK.Addr
		}
	case "cut":
		for i := range zkAddrs {
			c := zktest.NewCutter(t, sharedZK.Addr)
			r.cutters = append(r.cutters, c)
			zkAddrs[i] = c.Addr()
		}
	case "ensemble":
		e := startEnsemble(t)
		r.ensemble = e
		for i := range zkAddrs {
			zkAddrs[i] = e.Address()
		}
	default:
		t.Fatalf("unknown zk %q", p.zk)
	}
	extra := extraKV()
	for i := range p.sidecars {
		kv := map[string]string{
			"zookeeper.address":   zkAddrs[i],
			"zookeeper.path.root": root,
			"remote.data.dir":     dataDir,
		}
		for k, v := range extra {
			kv[k] = v
		}
		if i < len(p.kv) {
			for k, v := range p.kv[i] {
				kv[k] = v
			}
		}
		r.sidecars = append(r.sidecars, startSidecar(t, sidecarName(i), kv))
	}
	cnt := map[string]*counters{}
	var targets []target
	for i, s := range r.sidecars {
		name := sidecarName(i)
		cnt[name] = &counters{}
		addr := s.Addr
		if p.front != nil {
			if f := p.front(t, r, i); f != nil {
				addr = f
			}
		}
		targets = append(targets, target{name: name, addr: addr, clients: p.clients})
	}
	var coords []*coordinator
	for range p.coordinators {
		coords = append(coords, newCoordinator(t, sharedZK.Addr, root, dataDir))
	}
	if len(coords) > 0 {
		cnt["coord"] = &counters{}
		p.excuse = func(msg string) bool {
			excused := false
			coords[0].orphaned.Range(func(path, _ any) bool {
				excused = strings.Contains(msg, path.(string))
				return !excused
			})
			return excused
		}
	}

	h := NewHistory()
	snaps := &snapIDs{}
	ctx, cancel := context.WithTimeout(context.Background(), runDuration())
	defer cancel()
	var wg sync.WaitGroup
	if p.fault != nil {
		wg.Add(1)
		go func() { defer wg.Done(); p.fault(ctx, t, r) }()
	}
	firstCoord := p.sidecars * p.clients
	if len(coords) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			driveCoordinators(ctx, h, coords, ids, snaps, cnt["coord"], firstCoord)
		}()
	}
	drive(ctx, h, targets, ids, snaps, cnt, 0)
	wg.Wait()
	if r.ensemble != nil {
		checkEnsembleAgrees(t, r.ensemble, root)
	}

	res := result{ops: h.Operations(), cnt: cnt, excuse: p.excuse}
	for _, name := range sortedKeys(cnt) {
		t.Logf("%s: %s", name, cnt[name])
	}
	start := time.Now()
	res.verdict = Check(res.ops, checkTimeout())
	t.Logf("%d operations on %d producer ids: %s (checked in %s)", len(res.ops), len(ids), res.verdict.Result, time.Since(start).Round(time.Millisecond))
	if res.verdict.Visualization != "" {
		t.Logf("visualization: %s", res.verdict.Visualization)
	} else if res.verdict.VisualizationErr != nil {
		t.Logf("no visualization: %v", res.verdict.VisualizationErr)
	}
	return res
}

func sortedKeys(m map[string]*counters) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// assertLinearizable fails the test unless the history was found
// linearizable, every target answered some calls, and the history is not
// trivial (it created, found, missed and deleted snapshots).
func assertLinearizable(t *testing.T, res result) {
	t.Helper()
	switch res.verdict.Result {
	case porcupine.Ok:
	case porcupine.Illegal:
		t.Errorf("history is NOT linearizable; visualization: %s", res.verdict.Visualization)
	default:
		t.Errorf("checker could not decide within %s (%s): not a pass; visualization: %s",
			checkTimeout(), res.verdict.Result, res.verdict.Visualization)
	}
	var created, found, absent, deleted int64
	for name, c := range res.cnt {
		if c.known.Load() == 0 {
			t.Errorf("%s answered no call with a known outcome: the history proves nothing about it", name)
		}
		created += c.created.Load()
		found += c.found.Load()
		absent += c.absent.Load()
		deleted += c.deleted.Load()
		c.mu.Lock()
		var bad []string
		for _, msg := range c.minusOneMsgs {
			if res.excuse == nil || !res.excuse(msg) {
				bad = append(bad, msg)
			}
		}
		if excused := len(c.minusOneMsgs) - len(bad); excused > 0 {
			t.Logf("%s: %d UNKNOWN_SERVER_ERROR answers for files the coordinator's orphan cleanup removed (W2)", name, excused)
		}
		c.mu.Unlock()
		if len(bad) > 0 {
			t.Errorf("%s answered UNKNOWN_SERVER_ERROR (-1) %d times though no snapshot's current znode names a missing file; first: %s", name, len(bad), bad[0])
		}
	}
	if created == 0 || found == 0 || absent == 0 || deleted == 0 {
		t.Errorf("trivial history: %d CREATED, %d GET found, %d GET absent, %d DELETE ok", created, found, absent, deleted)
	}
}

// sleepCtx waits d or until ctx ends; false if ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// faultRounds is how many times a fault is injected in one run.
func faultRounds() int {
	if long() {
		return 3
	}
	return 1
}

// scenarios are the checker's fault scenarios, all with the sidecars'
// default configuration (plus LINCHECK_KV).
func scenarios() []struct {
	name string
	plan plan
} {
	d := runDuration()
	gap := d / time.Duration(faultRounds()+1)
	return []struct {
		name string
		plan plan
	}{
		{"one sidecar", plan{sidecars: 1, clients: 4}},
		{"no fault", plan{}},
		{"sidecar killed and restarted", plan{fault: func(ctx context.Context, t *testing.T, r *rig) {
			for range faultRounds() {
				if !sleepCtx(ctx, gap/2) {
					return
				}
				r.sidecars[0].Kill()
				time.Sleep(300 * time.Millisecond) // the sleep is under test: the sidecar stays down 300 ms
				if err := r.sidecars[0].Restart(); err != nil {
					t.Errorf("restart sidecar A: %v", err)
					return
				}
				sleepCtx(ctx, gap/2)
			}
		}}},
		{"TCP resets between clients and a sidecar", plan{
			front: func(t *testing.T, r *rig, i int) func() string {
				if i != 0 {
					return nil
				}
				rl := newRelay(t, r.sidecars[0].Addr())
				r.relays = append(r.relays, rl)
				return rl.Addr
			},
			fault: func(ctx context.Context, t *testing.T, r *rig) {
				for sleepCtx(ctx, 250*time.Millisecond) {
					r.relays[0].Reset()
				}
			},
		}},
		{"ZooKeeper stalled", plan{zk: "cut", fault: func(ctx context.Context, t *testing.T, r *rig) {
			stall := 1500 * time.Millisecond
			if long() {
				stall = 2500 * time.Millisecond
			}
			for i := range faultRounds() {
				if !sleepCtx(ctx, gap/3) {
					return
				}
				c := r.cutters[i%len(r.cutters)]
				c.Stall()
				sleepCtx(ctx, stall)
				c.Resume()
			}
		}}},
		{"ensemble leader killed", plan{zk: "ensemble", fault: func(ctx context.Context, t *testing.T, r *rig) {
			for range faultRounds() {
				if !sleepCtx(ctx, gap/3) {
					return
				}
				if err := bounceLeader(r.ensemble); err != nil {
					t.Error(err)
					return
				}
			}
		}}},
		{"short request timeout", plan{kv: []map[string]string{{"sidecar.request-timeout": "10ms"}}}},
		{"coordinator writer", plan{coordinators: 2}},
	}
}

// TestLinearizable runs every scenario and checks its history. With the
// default configuration it needs the sidecars to be linearizable across
// each other; LINCHECK_KV adds settings to every sidecar.
func TestLinearizable(t *testing.T) {
	if kv := extraKV(); len(kv) > 0 {
		t.Logf("every sidecar also gets %v (LINCHECK_KV)", kv)
	}
	for _, sc := range scenarios() {
		t.Run(strings.ReplaceAll(sc.name, " ", "_"), func(t *testing.T) {
			res := runPlan(t, sc.plan)
			assertLinearizable(t, res)
		})
	}
}

// describeCounts is a one-line summary for failure messages.
func describeCounts(cnt map[string]*counters) string {
	var parts []string
	for _, k := range sortedKeys(cnt) {
		parts = append(parts, fmt.Sprintf("%s: %s", k, cnt[k]))
	}
	return strings.Join(parts, "; ")
}
