package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Many producers: ZooKeeper holds 100,000 producer
// snapshots, as after many jobs and many restarts. The benchmark measures,
// for a sidecar started as a child process with default settings (its
// metrics port on, which /readyz needs):
//
//   - start-up: from the process's start until /readyz answers 200, beside
//     the same start on an empty root in the same run;
//   - the index of producer ids: its listing time (the
//     snapshotCache_indexListSeconds gauge), beside a raw getChildren of
//     the same znode from this process, and the sidecar's RSS once the
//     index is built, beside the empty-root sidecar's;
//   - a GET storm over 1,000 ids chosen at random among the 100,000, 64
//     connections with one GET in flight each (linearizable reads, the
//     default), against raw ZooKeeper getData of the same 1,000 znodes
//     with the same concurrency, in interleaved slices;
//   - first reads: every producer read once over 64 connections, through
//     the sidecar and, before it, with raw getData and raw sync+getData;
//     the cache must end within its bounds (entries, estimated bytes,
//     evictions, RSS and Go heap are printed);
//   - what happens past sidecar.snapshot-cache.max-entries: one more
//     znode turns the index off (index.go); the storm is run again and a
//     register of a new producer must still succeed.
//
// The znodes are written directly with go-zookeeper (multi batches in
// parallel), each naming the offsets files of one of a few producers
// registered through a sidecar beforehand, so every GET reads real files.
//
//	go test ./tests/bench -run '^$' -bench ManyProducers -benchtime 1x -timeout 30m
//
// or `make bench-producers`. FLUSS_BENCH_PRODUCERS changes the count.

const (
	manyDefault     = 100_000
	manyShared      = 4   // producers registered for real; the rest share their files
	manyBatch       = 500 // creates per multi
	manyFillWorkers = 16
)

func manyCount(tb testing.TB) int {
	if s := os.Getenv("FLUSS_BENCH_PRODUCERS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			tb.Fatalf("FLUSS_BENCH_PRODUCERS=%q", s)
		}
		return n
	}
	return manyDefault
}

// manyID is the i-th filler producer's id.
func manyID(i int) string { return fmt.Sprintf("job-%06d-restart", i) }

// fillProducers registers manyShared producers through an in-process
// sidecar on root and dir, then writes n more znodes under root, each a
// snapshot (re-encoded with flussjson.EncodeSnapshot) naming the files of
// one of them. It returns the time the n creates took and the snapshots.
func fillProducers(tb testing.TB, conn *gozk.Conn, root, dir string, n int) (time.Duration, [][]byte) {
	tb.Helper()
	ctx := context.Background()
	a := apptest.Start(tb, zkAddr, map[string]string{"zookeeper.path.root": root, "remote.data.dir": "file://" + dir})
	c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	var templates [][]byte
	for i := range manyShared {
		id := fmt.Sprintf("shared-%d", i)
		req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TableOffsets: twoTables()}
		resp := &messages.RegisterProducerOffsetsResponse{}
		if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil || resp.GetResult() != 0 {
			tb.Fatalf("register %s: %v %v", id, err, resp)
		}
		data, _, err := conn.Get(root + zkstore.ProducersPath + "/" + id)
		if err != nil {
			tb.Fatal(err)
		}
		s, err := flussjson.DecodeSnapshot(data)
		if err != nil {
			tb.Fatal(err)
		}
		templates = append(templates, flussjson.EncodeSnapshot(s))
	}
	c.Close()
	a.Close() // its watch would take every creation below

	acl := gozk.WorldACL(gozk.PermAll)
	start := time.Now()
	batches := make(chan int)
	errs := make(chan error, manyFillWorkers)
	var wg sync.WaitGroup
	for range manyFillWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for from := range batches {
				ops := make([]any, 0, manyBatch)
				for i := from; i < min(from+manyBatch, n); i++ {
					ops = append(ops, &gozk.CreateRequest{Path: root + zkstore.ProducersPath + "/" + manyID(i), Data: templates[i%manyShared], Acl: acl})
				}
				if _, err := conn.Multi(ops...); err != nil {
					errs <- fmt.Errorf("multi from %d: %w", from, err)
					return
				}
			}
		}()
	}
	for from := 0; from < n; from += manyBatch {
		batches <- from
	}
	close(batches)
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	return time.Since(start), templates
}

// manyChild is a sidecar in its own process with its metrics port.
type manyChild struct {
	pid     int
	addr    string
	metrics string        // http://127.0.0.1:port
	ready   time.Duration // from the process's start until /readyz answered 200
}

// startManyChild starts a sidecar child (child_test.go's runChild) on root
// and dir with the Prometheus reporter on, and returns once /readyz has
// answered 200, timing that from the process's start.
func startManyChild(tb testing.TB, root, dir string) *manyChild {
	tb.Helper()
	port := zktest.LoopbackPort(tb)
	m := &manyChild{metrics: fmt.Sprintf("http://127.0.0.1:%d", port)}
	kv := strings.Join([]string{
		app.KeyMetricsReporters + "=prometheus",
		app.KeyPrometheusPort + "=" + strconv.Itoa(port),
		app.KeyMetricsHost + "=127.0.0.1",
	}, ";")
	// /readyz is polled from before the process starts, so the time
	// counts from its start.
	ready := make(chan time.Duration, 1)
	stop := make(chan struct{})
	defer close(stop)
	start := time.Now()
	go func() {
		hc := &http.Client{Timeout: time.Second}
		for {
			select {
			case <-stop:
				return
			default:
			}
			if r, err := hc.Get(m.metrics + "/readyz"); err == nil {
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				if r.StatusCode == http.StatusOK {
					ready <- time.Since(start)
					return
				}
			}
			time.Sleep(2 * time.Millisecond) // the sleep is under test: the readiness time is measured to 2 ms, which a backing-off wait would blur
		}
	}()
	p := startChildProc(tb, "sidecar", childZKEnv+"="+zkAddr, childRootEnv+"="+root,
		childDirEnv+"="+dir, childKVEnv+"="+kv)
	m.pid, m.addr = p.pid, p.addr
	select {
	case m.ready = <-ready:
	case <-time.After(2 * time.Minute):
		tb.Fatal("/readyz never answered 200")
	}
	return m
}

// metric scrapes the value of one unlabelled metric.
func (m *manyChild) metric(tb testing.TB, name string) float64 {
	tb.Helper()
	r, err := http.Get(m.metrics + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Body.Close()
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				tb.Fatalf("%s: %v", name, err)
			}
			return f
		}
	}
	tb.Fatalf("no metric %s", name)
	return 0
}

// waitMetric waits until name has the value want.
func (m *manyChild) waitMetric(tb testing.TB, name string, want float64) {
	tb.Helper()
	eventually.Nil(tb, name+" to reach its value", func() error {
		if got := m.metric(tb, name); got != want {
			return fmt.Errorf("%s is %v, want %v", name, got, want)
		}
		return nil
	})
}

// rssBytes reads the process's resident set from /proc.
func rssBytes(tb testing.TB, pid int) float64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb * 1024
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}

const (
	cacheMetric   = "fluss_sidecar_snapshotCache_"
	heapMetric    = "go_memstats_heap_inuse_bytes"
	manyStormConn = 64
)

func BenchmarkManyProducers(b *testing.B) {
	// n snapshots in all: manyShared registered, the rest written directly.
	n := manyCount(b)
	if n <= manyShared {
		b.Fatalf("FLUSS_BENCH_PRODUCERS must exceed %d", manyShared)
	}
	fillers := n - manyShared
	conn, _, err := gozk.Connect([]string{zkAddr}, 30*time.Second, gozk.WithLogger(quiet{}), gozk.WithMaxBufferSize(64<<20))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	root := fmt.Sprintf("/many-%d-%d", os.Getpid(), seq.Add(1))
	dir := b.TempDir()
	fill, templates := fillProducers(b, conn, root, dir, fillers)
	producers := root + zkstore.ProducersPath

	// Raw listing from this process: the floor of the index's listing.
	var list []time.Duration
	for range 3 {
		t0 := time.Now()
		ids, _, err := conn.Children(producers)
		if err != nil {
			b.Fatal(err)
		}
		list = append(list, time.Since(t0))
		if len(ids) != n {
			b.Fatalf("%d children, want %d", len(ids), n)
		}
	}
	slices.Sort(list)

	// The same start on an empty root, then on the full one.
	empty := startManyChild(b, fmt.Sprintf("/many-empty-%d-%d", os.Getpid(), seq.Add(1)), b.TempDir())
	empty.waitMetric(b, cacheMetric+"indexedProducerIds", 0)
	emptyRSS, emptyHeap := rssBytes(b, empty.pid), empty.metric(b, heapMetric)

	many := startManyChild(b, root, dir)
	readyRSS := rssBytes(b, many.pid)
	want := float64(n)
	indexed := true
	if n > snapcache.DefaultMaxEntries {
		// Past the default bound the index is never installed.
		indexed = false
		want = -1
	}
	t0 := time.Now()
	for deadline := t0.Add(2 * time.Minute); ; {
		got := many.metric(b, cacheMetric+"indexedProducerIds")
		if got == want && (!indexed || many.metric(b, cacheMetric+"indexListSeconds") > 0) {
			break
		}
		if !indexed && time.Since(t0) > 5*time.Second {
			break // -1 from the start: nothing to wait for
		}
		if time.Now().After(deadline) {
			b.Fatalf("indexedProducerIds %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond) // the sleep is under test: the index time is measured to 10 ms, which a backing-off wait would blur
	}
	indexAt := many.ready + time.Since(t0) // from the process's start, to the poll's 10 ms
	listSeconds := many.metric(b, cacheMetric+"indexListSeconds")
	indexRSS, indexHeap := rssBytes(b, many.pid), many.metric(b, heapMetric)

	// The storm over 1,000 random ids among them.
	e := &stormEnv{sidecar: many.addr}
	pick := rand.New(rand.NewPCG(21, 4))
	for _, i := range pick.Perm(fillers)[:min(randomIDs, fillers)] {
		id := manyID(i)
		body, err := proto.Marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)})
		if err != nil {
			b.Fatal(err)
		}
		e.ids = append(e.ids, id)
		e.bodies = append(e.bodies, body)
		e.zkPaths = append(e.zkPaths, producers+"/"+id)
	}
	idx := make([]int, len(e.ids))
	for i := range idx {
		idx[i] = i
	}
	targets := []string{"zk", "sidecar"}
	callers := map[string][]caller{}
	for _, t := range targets {
		callers[t] = e.callers(b, t, manyStormConn, idx)
	}
	ctx := context.Background()
	storm := func(label string) map[string]*stormResult {
		res := map[string]*stormResult{}
		for _, t := range targets {
			if _, err := runStorm(ctx, callers[t], stormWarm, 0); err != nil {
				b.Fatalf("%s %s warm-up: %v", label, t, err)
			}
			res[t] = &stormResult{}
		}
		slice := stormRound / stormSlices
		for round := range b.N {
			for sl := range stormSlices {
				for k := range targets {
					t := targets[(k+sl+round)%len(targets)]
					r, err := runStorm(ctx, callers[t], 0, slice)
					if err != nil {
						b.Fatalf("%s %s: %v", label, t, err)
					}
					m := res[t]
					m.reqs += r.reqs
					m.elapsed += r.elapsed
					m.latencies = append(m.latencies, r.latencies...)
				}
			}
		}
		for _, r := range res {
			slices.Sort(r.latencies)
		}
		return res
	}
	b.ResetTimer()
	within := storm("within")
	b.StopTimer()
	stormRSS := rssBytes(b, many.pid)
	cacheLine := func() string {
		g := func(name string) float64 { return many.metric(b, cacheMetric+name) }
		return fmt.Sprintf("%.0f entries, %.1f MB, %.0f evictions, %.0f invalidations, %.0f drops, %.0f hits, %.0f misses",
			g("entries"), g("bytes")/1e6, g("evictionsTotal"), g("invalidationsTotal"), g("dropsTotal"), g("hitsTotal"), g("missesTotal"))
	}
	afterStorm := cacheLine()

	// Every producer read once through the sidecar (as an hourly cleanup
	// round reads every znode): the cache must stay within max-entries and
	// max-bytes, evicting the least recently used.
	// The same reads of raw ZooKeeper first, each id once over as many
	// sessions: getData, and sync then getData (a linearizable read, what
	// the sidecar's first read of an id is held to).
	zkSweep := func(synced bool) func() (func(int) error, func()) {
		return func() (func(int) error, func()) {
			conn, _, err := gozk.Connect([]string{zkAddr}, 30*time.Second, gozk.WithLogger(quiet{}))
			if err != nil {
				b.Fatal(err)
			}
			eventually.True(b, "a ZooKeeper session", func() bool { return conn.State() == gozk.StateHasSession })
			return func(i int) error {
				path := producers + "/" + manyID(i)
				if synced {
					if _, err := conn.Sync(path); err != nil {
						return err
					}
				}
				_, _, err := conn.Get(path)
				return err
			}, conn.Close
		}
	}
	sweepZK := sweepAll(b, fillers, manyStormConn, zkSweep(false))
	sweepZKSync := sweepAll(b, fillers, manyStormConn, zkSweep(true))
	sweep := sweepAll(b, fillers, manyStormConn, func() (func(int) error, func()) {
		c, err := wire.Dial(ctx, many.addr, wire.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return func(i int) error {
			body, _ := proto.Marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String(manyID(i))})
			r, err := c.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, body)
			if err == nil && r.Type != wire.ResponseSuccess {
				err = fmt.Errorf("get %s: %v", manyID(i), r.Err())
			}
			return err
		}, func() { c.Close() }
	})
	sweepRSS, sweepHeap := rssBytes(b, many.pid), many.metric(b, heapMetric)
	afterSweep := cacheLine()

	// Past the bound: one more producer than sidecar.snapshot-cache.max-entries
	// (when the count is near the default bound) turns the index off; GETs
	// go on.
	var past map[string]*stormResult
	pastIndexed := -2.0
	if indexed && snapcache.DefaultMaxEntries-n < 1000 {
		extra := snapcache.DefaultMaxEntries - n + 1
		for i := range extra {
			if _, err := conn.Create(producers+"/"+fmt.Sprintf("extra-%06d", i), templates[0], 0, gozk.WorldACL(gozk.PermAll)); err != nil {
				b.Fatal(err)
			}
		}
		many.waitMetric(b, cacheMetric+"indexedProducerIds", -1)
		pastIndexed = -1
		past = storm("past")
		// A register of a new producer still works without the index (it
		// reads ZooKeeper first).
		c, err := wire.Dial(ctx, many.addr, wire.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("after-the-bound"), TableOffsets: twoTables()}
		resp := &messages.RegisterProducerOffsetsResponse{}
		if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil || resp.GetResult() != 0 {
			b.Fatalf("register past the bound: %v %v", err, resp)
		}
		c.Close()
	}

	var tbl strings.Builder
	mb := func(v float64) string { return fmt.Sprintf("%.1f MB", v/1e6) }
	fmt.Fprintf(&tbl, "many producers: %d snapshots (%d registered, the rest sharing their files), %d CPUs (GOMAXPROCS %d)\n", n, manyShared, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(&tbl, "fill (multi of %d, %d in parallel): %v, %.0f znodes/s\n", manyBatch, manyFillWorkers, fill.Round(time.Millisecond), float64(fillers)/fill.Seconds())
	fmt.Fprintf(&tbl, "start until /readyz 200: %v (empty root, same run: %v)\n", many.ready.Round(time.Millisecond), empty.ready.Round(time.Millisecond))
	fmt.Fprintf(&tbl, "index listing (indexListSeconds): %.3fs, installed by %v after the start; raw getChildren from the bench: min %v, median %v\n", listSeconds, indexAt.Round(10*time.Millisecond), list[0].Round(time.Millisecond), list[1].Round(time.Millisecond))
	fmt.Fprintf(&tbl, "RSS: at ready %s, index built %s, after the storm %s, after reading all %d %s; empty root %s\n", mb(readyRSS), mb(indexRSS), mb(stormRSS), fillers, mb(sweepRSS), mb(emptyRSS))
	fmt.Fprintf(&tbl, "Go heap in use: index built %s, after reading all %s; empty root %s\n", mb(indexHeap), mb(sweepHeap), mb(emptyHeap))
	fmt.Fprintf(&tbl, "cache after the storm: %s\n", afterStorm)
	fmt.Fprintf(&tbl, "cache after reading all %d once over %d connections (%v, %.0f GET/s): %s\n", fillers, manyStormConn, sweep.Round(time.Millisecond), float64(fillers)/sweep.Seconds(), afterSweep)
	fmt.Fprintf(&tbl, "each id read once, first reads: sidecar %.0f/s, raw getData %.0f/s, raw sync+getData %.0f/s\n", float64(fillers)/sweep.Seconds(), float64(fillers)/sweepZK.Seconds(), float64(fillers)/sweepZKSync.Seconds())
	report := func(label string, res map[string]*stormResult) {
		for _, t := range targets {
			r := res[t]
			fmt.Fprintf(&tbl, "%-7s %-8s %10.0f req/s p50 %9v p99 %9v\n", label, t, r.rate(), r.pct(0.5).Round(time.Microsecond), r.pct(0.99).Round(time.Microsecond))
		}
	}
	report("within", within)
	b.ReportMetric(within["sidecar"].rate()/within["zk"].rate(), "random-sidecar/zk")
	b.ReportMetric(float64(within["sidecar"].pct(0.99))/float64(within["zk"].pct(0.99)), "random-p99-sidecar/zk")
	if past != nil {
		report("past", past)
		b.ReportMetric(past["sidecar"].rate()/past["zk"].rate(), "past-random-sidecar/zk")
		fmt.Fprintf(&tbl, "past the bound: indexedProducerIds %v; a register of a new producer answered 0\n", pastIndexed)
	}
	b.ReportMetric(sweepZK.Seconds()/sweep.Seconds(), "cold-sidecar/zk")
	b.ReportMetric(sweepZKSync.Seconds()/sweep.Seconds(), "cold-sidecar/zksync")
	b.ReportMetric(many.ready.Seconds(), "ready-s")
	b.ReportMetric(many.ready.Seconds()/empty.ready.Seconds(), "ready/empty-ready")
	b.ReportMetric(listSeconds, "index-list-s")
	b.ReportMetric(listSeconds/list[1].Seconds(), "index-list/raw-list")
	b.ReportMetric(indexRSS/1e6, "index-rss-MB")
	b.ReportMetric((indexRSS-emptyRSS)/1e6, "index-rss-over-empty-MB")
	b.ReportMetric(float64(fillers)/fill.Seconds(), "fill-znodes/s")
	for _, line := range strings.Split(strings.TrimRight(tbl.String(), "\n"), "\n") {
		fmt.Println("many|", line)
	}
}

// sweepAll calls each of ids 0..n-1 once over conns connections, each
// opened by open (which returns the call and its close), and returns the
// time the calls took.
func sweepAll(tb testing.TB, n, conns int, open func() (func(int) error, func())) time.Duration {
	tb.Helper()
	calls := make([]func(int) error, conns)
	for k := range calls {
		call, closeFn := open()
		defer closeFn()
		calls[k] = call
	}
	ids := make(chan int, conns)
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for _, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				if err := call(i); err != nil {
					errs <- err
					for range ids {
					}
					return
				}
			}
		}()
	}
	for i := range n {
		ids <- i
	}
	close(ids)
	wg.Wait()
	d := time.Since(start)
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	return d
}
