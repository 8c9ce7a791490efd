package soak

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// The environment of a long run (make soak).
const (
	// durationEnv is the run's length (a Go duration); TestSoak is
	// skipped without it.
	durationEnv = "SOAK_DURATION"
	// restartEnv is how often sidecar B is restarted (default 1m).
	restartEnv = "SOAK_RESTART_EVERY"
	// sampleEnv is how often both sidecars are sampled (default 5s).
	sampleEnv = "SOAK_SAMPLE_EVERY"
	// getConnsEnv and churnEnv resize the GET storm (default 200
	// connections at 10 Hz) and the connection churn (default 50 a
	// second), for a smaller machine.
	getConnsEnv = "SOAK_GET_CONNS"
	churnEnv    = "SOAK_CHURN"
	// outEnv is where the CSV samples go (default: a new temporary
	// directory, kept after the run).
	outEnv = "SOAK_OUT"
)

// plan is one run of the harness.
type plan struct {
	duration, restartEvery, sampleEvery time.Duration
	shape                               loadShape
	// judged runs the verdict on slopes; a short run only checks answers.
	judged bool
	// outDir receives samples.csv.
	outDir string
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		t.Fatalf("%s=%q: want a positive Go duration such as 30m", name, v)
	}
	return d
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

// fullShape is the load of the outside run that found the cache's growth,
// with the job cycles and the static snapshots it reads.
func fullShape(t *testing.T) loadShape {
	return loadShape{
		getConns: envInt(t, getConnsEnv, 200), getHz: 10,
		jobWorkers: 16, idsPerWorker: 4,
		staticIDs: 100, absentIDs: 2000,
		churnPerSec: envInt(t, churnEnv, 50),
		badEvery:    time.Second,
	}
}

// TestSoak is the long run: SOAK_DURATION=30m go test -run '^TestSoak$'
// -v ./tests/soak/ (make soak). It fails when a quantity of the sidecar that is
// never restarted grows past what the live data explains, when any answer
// is wrong, when the sidecar that is not restarted leaves a call
// unanswered, or when a restart is not clean.
func TestSoak(t *testing.T) {
	if os.Getenv(durationEnv) == "" {
		t.Skipf("a long run: set %s (make soak)", durationEnv)
	}
	d := envDuration(t, durationEnv, 30*time.Minute)
	if dl, ok := t.Deadline(); ok && time.Until(dl) < d+10*time.Minute {
		t.Fatalf("%s=%v needs go test -timeout of at least %v (make soak SOAK_TIMEOUT=...)", durationEnv, d, d+10*time.Minute)
	}
	out := os.Getenv(outEnv)
	if out == "" {
		var err error
		if out, err = os.MkdirTemp("", "fluss-sidecar-soak-"); err != nil {
			t.Fatal(err)
		}
	}
	runSoak(t, plan{
		duration:     d,
		restartEvery: envDuration(t, restartEnv, time.Minute),
		sampleEvery:  envDuration(t, sampleEnv, 5*time.Second),
		shape:        fullShape(t),
		judged:       true,
		outDir:       out,
	})
}

// TestSoakSmoke runs the harness for a few seconds at a tenth of the load,
// with one restart: no verdict on slopes (too short to mean anything),
// but every answer is checked, nothing acknowledged is lost, bad input is
// refused, and every quantity is sampled from both sidecars.
func TestSoakSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ZooKeeper and two sidecar processes")
	}
	runSoak(t, plan{
		duration:     12 * time.Second,
		restartEvery: 5 * time.Second,
		sampleEvery:  500 * time.Millisecond,
		shape: loadShape{
			getConns: 20, getHz: 10,
			jobWorkers: 4, idsPerWorker: 2,
			staticIDs: 20, absentIDs: 200,
			churnPerSec: 5,
			badEvery:    time.Second,
		},
		outDir: t.TempDir(),
	})
}

// rules are the verdict's rules for the sidecar that is not restarted:
// what each quantity may grow by over a run whose live data is level, and
// which growth would explain more.
func rules(shape loadShape) []Rule {
	jobs := float64(shape.jobWorkers * shape.idsPerWorker) // live snapshots swing by this much
	const kib, mib = 1 << 10, 1 << 20
	files := float64(len(snapshot(1))) // offsets files per snapshot
	return []Rule{
		// The stores: level by design.
		{Quantity: "zk_producers", Allowed: jobs},
		{Quantity: "remote_files", Allowed: files*jobs + 10, ExplainedBy: []Explainer{{"zk_producers", files}}},
		// What the cache and index hold follows the stores.
		{Quantity: "index_ids", Allowed: jobs, ExplainedBy: []Explainer{{"zk_producers", 1}}},
		{Quantity: "cache_files", Allowed: files * jobs, ExplainedBy: []Explainer{{"zk_producers", files}}},
		{Quantity: "cache_absences", Allowed: jobs, AllowedFrac: 0.05},
		{Quantity: "cache_entries", Allowed: (1 + files) * jobs, AllowedFrac: 0.05, ExplainedBy: []Explainer{{"zk_producers", 1 + files}, {"cache_absences", 1}}},
		{Quantity: "cache_bytes", Unit: "B", Allowed: 64 * kib, AllowedFrac: 0.05, ExplainedBy: []Explainer{{"cache_entries", 2 * kib}}},
		// The process follows what it holds and its connections.
		{Quantity: "connections", Allowed: 10, AllowedFrac: 0.1},
		{Quantity: "goroutines", Allowed: 20, AllowedFrac: 0.05, ExplainedBy: []Explainer{{"connections", 4}}},
		{Quantity: "fds", Allowed: 10, AllowedFrac: 0.05, ExplainedBy: []Explainer{{"connections", 1}}},
		{Quantity: "proc_fds", Allowed: 10, AllowedFrac: 0.05, ExplainedBy: []Explainer{{"connections", 1}}},
		{Quantity: "proc_threads", Allowed: 4, AllowedFrac: 0.25},
		{Quantity: "heap_inuse", Unit: "B", Allowed: 4 * mib, AllowedFrac: 0.05,
			ExplainedBy: []Explainer{{"cache_bytes", 2}, {"connections", 16 * kib}}},
		{Quantity: "rss", Unit: "B", Allowed: 8 * mib, AllowedFrac: 0.05,
			ExplainedBy: []Explainer{{"heap_inuse", 1}, {"goroutines", 8 * kib}, {"connections", 64 * kib}}},
		{Quantity: "proc_rss", Unit: "B", Allowed: 8 * mib, AllowedFrac: 0.05,
			ExplainedBy: []Explainer{{"heap_inuse", 1}, {"goroutines", 8 * kib}, {"connections", 64 * kib}}},
	}
}

func runSoak(t *testing.T, p plan) {
	bin := buildSidecar(t)
	zk := zktest.StartT(t)
	root := zktest.UniqueRoot()
	dataDir := remoteDataDir(t)
	kv := map[string]string{
		"zookeeper.address":   zk.Addr,
		"zookeeper.path.root": root,
		"remote.data.dir":     dataDir,
		"sidecar.log.level":   "warn",
	}
	a := newSidecar(t, "A", bin, kv)
	b := newSidecar(t, "B", bin, kv)
	startCtx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	for _, s := range []*sidecarProc{a, b} {
		if err := s.Start(startCtx); err != nil {
			cancel()
			t.Fatal(err)
		}
	}
	cancel()
	sides := []*sidecarProc{a, b}
	l := newLoad(p.shape, sides, max(time.Hour, 2*p.duration))
	if err := l.setup(); err != nil {
		t.Fatalf("setup: %v", err)
	}
	zkConn := zktest.RawConn(t, zk.Addr)

	smp, err := newSampler(filepath.Join(p.outDir, "samples.csv"), sides, zkConn, root, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("samples: %s; sidecar logs: %s, %s", smp.path, a.log, b.log)

	loadCtx, stopLoad := context.WithTimeout(context.Background(), p.duration)
	defer stopLoad()
	var wg sync.WaitGroup
	wg.Go(func() { l.run(loadCtx) })
	var rs restarts
	wg.Go(func() { rs = rollingRestart(loadCtx, b, p.restartEvery) })
	smp.sample()
	tick := time.NewTicker(p.sampleEvery)
	for loadCtx.Err() == nil {
		select {
		case <-loadCtx.Done():
		case <-tick.C:
			smp.sample()
		}
	}
	tick.Stop()
	wg.Wait() // the samples end with the load: a sample of the idle end would tilt every line
	if err := smp.close(); err != nil {
		t.Errorf("%s: %v", smp.path, err)
	}
	run := p.duration
	series, seriesB := smp.series[0], smp.series[1]

	// What the clients saw.
	t.Logf("run %v; B restarted %d times (every %v); job cycles %d, checked reads %d, late snapshots of unanswered registers %d",
		run.Round(time.Second), rs.done, p.restartEvery, l.cycles.Load(), l.verified.Load(), l.late.Load())
	t.Logf("B's restarts: SIGTERM to exit %s; start to /readyz 200 %s", spread(rs.stops), spread(rs.starts))
	for i, s := range sides {
		t.Logf("sidecar %s: %s", s.name, l.tallies[i])
	}
	if v := l.bad.String(); v != "" {
		t.Errorf("%s", v)
	}
	ta := l.tallies[0]
	if ta.lost.Load() != 0 || ta.noDial.Load() != 0 || ta.errors.Load() != 0 {
		t.Errorf("sidecar A, never restarted, left calls unanswered or refused valid ones: %s\nits log ends:\n%s", ta, a.LogTail(3000))
	}
	for i, s := range sides {
		tt := l.tallies[i]
		if tt.answered.Load() == 0 || tt.badOK.Load() == 0 {
			t.Errorf("sidecar %s: %s; want answers and refused bad inputs", s.name, tt)
		}
	}
	if l.cycles.Load() == 0 || l.verified.Load() == 0 {
		t.Errorf("no job cycle completed (%d) or checked (%d)", l.cycles.Load(), l.verified.Load())
	}
	if len(rs.unclean) > 0 || rs.done == 0 {
		t.Errorf("B restarted %d times; unclean: %s\nits log ends:\n%s", rs.done, strings.Join(rs.unclean, "; "), b.LogTail(3000))
	}
	if len(smp.errs) > 0 {
		t.Errorf("%d samples failed, the first: %s", len(smp.errs), smp.errs[0])
	}
	checkStored(t, zkConn, root, l)

	// What the sidecars' quantities did.
	vs := Judge(run, series, rules(p.shape))
	t.Logf("\n%s", Format(fmt.Sprintf("sidecar A, never restarted, %v (slopes over the second half)", run.Round(time.Second)), vs, p.judged))
	var shown []Rule
	for _, r := range rules(p.shape) {
		if _, ok := seriesB[r.Quantity]; ok {
			shown = append(shown, r)
		}
	}
	t.Logf("\n%s", Format(fmt.Sprintf("sidecar B, restarted every %v (not judged)", p.restartEvery), Judge(run, seriesB, shown), false))
	if !p.judged {
		for _, c := range smp.cols {
			if len(series[c]) < 3 || (len(seriesB[c]) < 3 && !slices.Contains(liveQuantities, c)) {
				t.Errorf("%s: %d samples of A (or the stores), %d of B", c, len(series[c]), len(seriesB[c]))
			}
		}
		return
	}
	for _, v := range vs {
		if !v.Pass {
			t.Errorf("sidecar A: %s", v.Reason)
		}
	}
}

// spread is the least, median and largest of ds.
func spread(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("%v / %v / %v (least / median / largest of %d)", r(ds[0]), r(ds[len(ds)/2]), r(ds[len(ds)-1]), len(ds))
}

// checkStored: once the load has stopped, ZooKeeper holds every static
// snapshot and otherwise only job ids: no bad input was stored.
func checkStored(t *testing.T, conn *gozk.Conn, root string, l *load) {
	t.Helper()
	kids, _, err := conn.Children(root + "/producers")
	if err != nil {
		t.Errorf("zookeeper: %v", err)
		return
	}
	known := map[string]bool{}
	for _, id := range l.jobs {
		known[id] = true
	}
	have := map[string]bool{}
	for _, k := range kids {
		have[k] = true
		if !known[k] && !strings.HasPrefix(k, "soak-static-") {
			t.Errorf("zookeeper holds producer %q, which no acknowledged register made", k)
		}
	}
	for _, id := range l.static {
		if !have[id] {
			t.Errorf("static snapshot %s is gone from ZooKeeper", id)
		}
	}
}

// csvEnv names a samples.csv of an earlier run for TestSoakJudgeCSV.
const csvEnv = "SOAK_CSV"

// TestSoakJudgeCSV judges the samples of an earlier run again, with
// today's rules and the full load's shape: SOAK_CSV=/tmp/.../samples.csv
// go test -run TestSoakJudgeCSV -v ./tests/soak/. The run's length is taken
// from its last sample.
func TestSoakJudgeCSV(t *testing.T) {
	path := os.Getenv(csvEnv)
	if path == "" {
		t.Skipf("set %s to a samples.csv", csvEnv)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %d rows, %v", path, len(rows), err)
	}
	series := map[string]Series{}
	var last time.Duration
	for _, row := range rows[1:] {
		secs, err := strconv.ParseFloat(row[0], 64)
		if err != nil || row[1] != "A" {
			continue
		}
		at := time.Duration(secs * float64(time.Second))
		last = max(last, at)
		for i, c := range rows[0][3:] {
			if v, err := strconv.ParseFloat(row[3+i], 64); err == nil {
				series[c] = append(series[c], Point{at, v})
			}
		}
	}
	vs := Judge(last, series, rules(fullShape(t)))
	t.Logf("\n%s", Format(fmt.Sprintf("sidecar A of %s, %v", path, last.Round(time.Second)), vs, true))
	for _, v := range vs {
		if !v.Pass {
			t.Errorf("sidecar A: %s", v.Reason)
		}
	}
}
