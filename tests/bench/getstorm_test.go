package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
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
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The GET storm: every connection sends GET_PRODUCER_OFFSETS, one request
// in flight, as recovering Flink subtasks poll for their producer's
// snapshot. Each target is loaded for the same time, in one run, against
// the same ZooKeeper, by the same load generator:
//
//   - zk: raw ZooKeeper getData of the same znode (one session per
//     connection): what any read-through GET, a coordinator's included,
//     cannot beat;
//   - zksync: raw ZooKeeper sync then getData of the same znode, one
//     session per connection: the usual linearizable read from ZooKeeper,
//     the limit a linearizable GET that reads through is held to;
//   - nothing: a do-nothing server that answers every request with the
//     bytes of the sidecar's answer, copying the request id and decoding
//     nothing: the ceiling of any implementation on this host, since the
//     load generator shares the CPUs;
//   - sidecar: the sidecar with its snapshot cache and linearizable reads
//     (the defaults): every GET waits for a ZooKeeper sync sent after it
//     arrived, shared with the GETs that arrived with it;
//   - sequential: the same with sidecar.read-consistency sequential, GETs
//     answered from the cache without waiting;
//   - nocache: the sidecar with sidecar.snapshot-cache.max-bytes 0;
//   - coordinator: a real Fluss 0.9.1-incubating coordinator
//     (coordinator_test.go), its snapshots registered through itself under
//     its own root, reached on its PLAINTEXT client listener; it serves
//     the storm's GETs until its JIT compiler is done with them
//     (warmCoordinator) before any of its GETs is counted.
//
// Every answer is checked against the one its target gave before the
// storm (the coordinator's, in turn, against a sidecar's on the
// coordinator's root), and the first error or wrong answer fails the
// benchmark.
//
// Run it with scripts/bench.sh, which prints the ratios, or:
//
//	go test ./tests/bench -run '^$' -bench 'GetStorm$' -benchtime 1x

// randomTargets are the targets of the storm over random ids.
var randomTargets = []string{"zk", "sidecar", "sequential", "nocache", "coordinator"}

// pacedNothing names the do-nothing server held to the linearizable
// sidecar's rate in the same slice.
const pacedNothing = "nothing@sc"

// stormConns are the connection counts of the single-id storm.
var stormConns = []int{16, 64, 256}

const (
	stormRound   = 2 * time.Second        // counted load per target and count
	stormSlices  = 8                      // stormRound is cut into this many
	stormWarm    = 300 * time.Millisecond // load before, once, not counted
	randomIDs    = 1000
	randomConns  = 64
	stormTargets = "zk zksync nothing sidecar sequential nocache coordinator"
	// peerTarget is the storm's target that is a real Fluss coordinator.
	peerTarget = "coordinator"
)

// stormResult is one target's load at one connection count.
type stormResult struct {
	reqs      int
	elapsed   time.Duration
	latencies []time.Duration // sorted
	cpu       cpuCost         // of the target's server and of ZooKeeper
}

func (r stormResult) rate() float64 { return float64(r.reqs) / r.elapsed.Seconds() }

// serverCPU is the target's own server process's CPU time per request in
// microseconds, or -1 where it has none (raw ZooKeeper) or it was not read.
func (r stormResult) serverCPU() float64 {
	return perRequest(r.cpu.server, r.cpu.serverOK, r.reqs)
}

// zkCPU is ZooKeeper's CPU time per request in microseconds, or -1.
func (r stormResult) zkCPU() float64 { return perRequest(r.cpu.zk, r.cpu.zkOK, r.reqs) }

// fmtCPU prints a per-request CPU time, "-" where there is none.
func fmtCPU(us float64) string {
	if us < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", us)
}

// cpuRatio is a/b, or -1 where either is missing.
func cpuRatio(a, b float64) float64 {
	if a < 0 || b <= 0 {
		return -1
	}
	return a / b
}

func (r stormResult) pct(p float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[int(p*float64(len(r.latencies)-1))]
}

// caller sends one request and waits for its answer; the load generator
// gives each connection its own caller and a per-connection random source.
type caller func(ctx context.Context, rnd *rand.Rand) error

// runStorm loads conns callers for warm+d and measures the last d: the
// requests sent in it. Without warm, a measured run starts with nothing in
// flight, and its elapsed time runs until the last of its answers, which
// dividing by d alone would credit to the window: at 256 connections on a
// server answering 5,000 GETs a second that is a fifth more than it served.
func runStorm(ctx context.Context, callers []caller, warm, d time.Duration) (stormResult, error) {
	return runStormPaced(ctx, callers, warm, d, 0)
}

// runStormPaced is runStorm with each caller sending at most one request
// every pace (none when pace is 0): the do-nothing server's load at the
// sidecar's own rate, for the CPU a server spends per request when it
// serves that few (a server between requests sleeps, and waking costs).
func runStormPaced(ctx context.Context, callers []caller, warm, d, pace time.Duration) (stormResult, error) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		res     stormResult
		firstEr error
	)
	start := time.Now()
	from, until := start.Add(warm), start.Add(warm+d)
	for i, call := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(i), 42))
			lat := make([]time.Duration, 0, 4096)
			next := start.Add(time.Duration(i) * pace / time.Duration(len(callers)))
			for {
				if pace > 0 {
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait) // the sleep is under test: the callers' pace
					}
					next = next.Add(pace)
				}
				t0 := time.Now()
				if !t0.Before(until) {
					break
				}
				if err := call(ctx, rnd); err != nil {
					mu.Lock()
					if firstEr == nil {
						firstEr = err
					}
					mu.Unlock()
					return
				}
				if !t0.Before(from) {
					lat = append(lat, time.Since(t0))
				}
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.reqs = len(res.latencies)
	res.elapsed = d
	if warm == 0 {
		res.elapsed = time.Since(start)
	}
	slices.Sort(res.latencies)
	return res, firstEr
}

// stormEnv is everything the storm targets need, started once.
type stormEnv struct {
	// addresses of the sidecar (cache on), the sidecar with its cache off
	// and the do-nothing server, each in its own process (child_test.go)
	sidecar, sequential, nocache, nothing string
	// coordinator is the Fluss coordinator's client listener, "" when the
	// storm has no such target
	coordinator string
	// pids of the targets' server processes, by target name (none for
	// raw ZooKeeper, whose server is ZooKeeper itself, nor in process)
	pids    map[string]int
	zkPaths []string // full znode paths: [0] the storm id, then the random ids
	ids     []string // producer ids, same order
	bodies  [][]byte // encoded GET requests, same order
	// answers are the sidecars' answers to bodies, coordAnswers the
	// coordinator's (another root: other expirations); nil where not read
	answers, coordAnswers [][]byte
}

// startStormEnv starts both sidecars on one ZooKeeper root and one remote
// directory, registers the storm id and, if random, randomIDs more, and
// starts the do-nothing server with the sidecar's answer for the storm id.
// With withPeer it also registers the same ids through the process's Fluss
// coordinator (coordinator_test.go), under its own root, and checks its
// answers against a sidecar's on that root.
//
// With inProcess the servers run in this process instead (BenchmarkGet
// counts their allocations).
func startStormEnv(tb testing.TB, random int, inProcess, withPeer bool) *stormEnv {
	tb.Helper()
	zktest.SkipIfShort(tb)
	root := fmt.Sprintf("/storm-%d-%d", os.Getpid(), seq.Add(1))
	dir := tb.TempDir()
	var e *stormEnv
	if inProcess {
		kv := map[string]string{"zookeeper.path.root": root, "remote.data.dir": "file://" + dir}
		off := map[string]string{"zookeeper.path.root": root, "remote.data.dir": "file://" + dir, app.KeyCacheMaxBytes: "0"}
		seq := map[string]string{"zookeeper.path.root": root, "remote.data.dir": "file://" + dir, app.KeyReadConsistency: app.ReadSequential}
		e = &stormEnv{sidecar: apptest.Start(tb, zkAddr, kv).Addr(), nocache: apptest.Start(tb, zkAddr, off).Addr(),
			sequential: apptest.Start(tb, zkAddr, seq).Addr()}
	} else {
		env := []string{childZKEnv + "=" + zkAddr, childRootEnv + "=" + root, childDirEnv + "=" + dir}
		e = &stormEnv{pids: map[string]int{}}
		e.sidecar, e.pids["sidecar"] = startChildPID(tb, "sidecar", env...)
		e.nocache, e.pids["nocache"] = startChildPID(tb, "sidecar", append(env, childKVEnv+"="+app.KeyCacheMaxBytes+"=0")...)
		e.sequential, e.pids["sequential"] = startChildPID(tb, "sidecar", append(env, childKVEnv+"="+app.KeyReadConsistency+"="+app.ReadSequential)...)
	}

	ids := []string{"storm"}
	for i := range random {
		ids = append(ids, fmt.Sprintf("random-%04d", i))
	}
	registerIDs(tb, e.sidecar, ids, false)
	for _, id := range ids {
		body, err := proto.Marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)})
		if err != nil {
			tb.Fatal(err)
		}
		e.ids = append(e.ids, id)
		e.bodies = append(e.bodies, body)
		e.zkPaths = append(e.zkPaths, root+zkstore.ProducersPath+"/"+id)
	}
	e.answers = getAnswers(tb, e.sidecar, e.bodies)
	if inProcess {
		s, err := listenNothing(e.answers[0])
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(s.close)
		e.nothing = s.addr()
	} else {
		e.nothing, e.pids["nothing"] = startChildPID(tb, "nothing", childBodyEnv+"="+hex.EncodeToString(e.answers[0]))
	}
	if withPeer {
		p := startCoordinator(tb)
		// The process's earlier storms may have registered these ids.
		registerIDs(tb, p.addr, ids, true)
		e.coordinator, e.pids[peerTarget] = p.addr, p.pid
		e.coordAnswers = getAnswers(tb, p.addr, e.bodies)
		checkBesideCoordinator(tb, p, e.bodies, e.coordAnswers)
	}
	return e
}

// callers opens n connections to one target; ids are the indexes (into
// e.ids) each request picks from at random.
func (e *stormEnv) callers(tb testing.TB, target string, n int, ids []int) []caller {
	tb.Helper()
	out := make([]caller, n)
	pick := func(rnd *rand.Rand) int {
		if len(ids) == 1 {
			return ids[0]
		}
		return ids[rnd.IntN(len(ids))]
	}
	for i := range out {
		switch target {
		case "zk", "zksync":
			conn, _, err := gozk.Connect([]string{zkAddr}, 30*time.Second, gozk.WithLogger(quiet{}))
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(conn.Close)
			// Connect does not wait for the session; hundreds of sessions
			// opened at once take a moment.
			eventually.True(tb, "a ZooKeeper session", func() bool { return conn.State() == gozk.StateHasSession })
			synced := target == "zksync"
			out[i] = func(_ context.Context, rnd *rand.Rand) error {
				path := e.zkPaths[pick(rnd)]
				if synced {
					if _, err := conn.Sync(path); err != nil {
						return err
					}
				}
				_, _, err := conn.Get(path)
				return err
			}
		default:
			addr := map[string]string{"nothing": e.nothing, "sidecar": e.sidecar, "sequential": e.sequential, "nocache": e.nocache,
				peerTarget: e.coordinator}[target]
			if addr == "" {
				tb.Fatalf("the storm has no target %q", target)
			}
			want := e.want(target)
			c, err := wire.Dial(context.Background(), addr, wire.ClientOptions{})
			if err != nil {
				tb.Fatal(err)
			}
			tb.Cleanup(func() { c.Close() })
			out[i] = func(ctx context.Context, rnd *rand.Rand) error {
				k := pick(rnd)
				r, err := c.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, e.bodies[k])
				if err != nil {
					return err
				}
				if r.Type != wire.ResponseSuccess || len(r.Body) == 0 {
					return fmt.Errorf("%s: %v %v", target, r.Type, r.Err())
				}
				if want != nil && !bytes.Equal(r.Body, want(k)) {
					return fmt.Errorf("%s: GET of %s answered %x, before the storm %x", target, e.ids[k], r.Body, want(k))
				}
				return nil
			}
		}
	}
	return out
}

// want returns the answer target must give to e.bodies[k], or nil where the
// storm read none before (a caller then checks only that there is one).
func (e *stormEnv) want(target string) func(k int) []byte {
	switch {
	case target == "nothing" && e.answers != nil:
		return func(int) []byte { return e.answers[0] } // its one fixed answer
	case target == peerTarget && e.coordAnswers != nil:
		return func(k int) []byte { return e.coordAnswers[k] }
	case target != peerTarget && e.answers != nil:
		return func(k int) []byte { return e.answers[k] }
	}
	return nil
}

func BenchmarkGetStorm(b *testing.B) {
	targets := strings.Fields(stormTargets)
	if v := os.Getenv("FLUSS_BENCH_STORM_TARGETS"); v != "" {
		targets = strings.Fields(v)
	}
	e := startStormEnv(b, randomIDs, false, slices.Contains(targets, peerTarget))
	ctx := context.Background()
	results := map[string]map[int]*stormResult{} // target → conns → merged
	merge := func(target string, conns int, r stormResult) {
		if results[target] == nil {
			results[target] = map[int]*stormResult{}
		}
		m := results[target][conns]
		if m == nil {
			m = &stormResult{}
			results[target][conns] = m
		}
		m.reqs += r.reqs
		m.elapsed += r.elapsed
		m.latencies = append(m.latencies, r.latencies...)
		m.cpu.add(r.cpu)
	}
	// measure runs one counted slice of a target's load, charging the
	// target's server and ZooKeeper the CPU time they spent in it.
	measure := func(t string, callers []caller, d time.Duration) (stormResult, error) {
		w := startCPUWindow(e.pids[t], zkServer.CPUTime)
		r, err := runStorm(ctx, callers, 0, d)
		w.end(&r.cpu, zkServer.CPUTime)
		return r, err
	}
	if v := os.Getenv("FLUSS_BENCH_STORM_CONNS"); v != "" {
		stormConns = nil
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
			n, err := strconv.Atoi(f)
			if err != nil || n <= 0 {
				b.Fatalf("FLUSS_BENCH_STORM_CONNS: %q is not a connection count", f)
			}
			stormConns = append(stormConns, n)
		}
	}
	// A chosen subset of targets leaves the ratios out unless every
	// target they compare ran; the storm over random ids runs only with
	// every target but the coordinator, which joins it when chosen
	// (FLUSS_BENCH_STORM_TARGETS without "coordinator" is the storm
	// without Java).
	full := true
	for _, t := range strings.Fields(stormTargets) {
		full = full && (t == peerTarget || slices.Contains(targets, t))
	}
	var rts []string
	for _, t := range randomTargets {
		if full && slices.Contains(targets, t) {
			rts = append(rts, t)
		}
	}
	all := make([]int, 0, randomIDs)
	for i := 1; i <= randomIDs; i++ {
		all = append(all, i)
	}
	// One set of connections per target and count, opened before timing.
	single := map[string]map[int][]caller{}
	for _, t := range targets {
		single[t] = map[int][]caller{}
		for _, n := range stormConns {
			single[t][n] = e.callers(b, t, n, []int{0})
		}
	}
	random := map[string][]caller{}
	for _, t := range rts {
		random[t] = e.callers(b, t, randomConns, all)
	}
	// The coordinator first serves the storm's GETs long enough for its
	// JIT compiler to finish with them (once per process), then every
	// target is warmed up once, uncounted.
	var warmth jitWarmth
	if cs := single[peerTarget]; cs != nil {
		// Windows alternate between the storm's id, at the middle
		// connection count, and the random ids.
		warmth = warmCoordinator(b, startCoordinator(b), "get", func(w int, d time.Duration) error {
			callers := cs[stormConns[len(stormConns)/2]]
			if w%2 == 1 && random[peerTarget] != nil {
				callers = random[peerTarget]
			}
			_, err := runStorm(ctx, callers, d, 0)
			return err
		})
	}
	for _, t := range targets {
		for _, n := range stormConns {
			if _, err := runStorm(ctx, single[t][n], stormWarm, 0); err != nil {
				b.Fatalf("%s at %d connections: %v", t, n, err)
			}
		}
	}
	for t, callers := range random {
		if _, err := runStorm(ctx, callers, stormWarm, 0); err != nil {
			b.Fatalf("%s on random ids: %v", t, err)
		}
	}
	// Each target's load is cut into slices interleaved with the other
	// targets', in rotating order, so that a change in the machine's load
	// (it is shared) weighs on every target alike.
	slice := stormRound / stormSlices
	b.ResetTimer()
	for round := range b.N {
		for _, n := range stormConns {
			for sl := range stormSlices {
				sidecarRate := 0.0
				for k := range targets {
					t := targets[(k+sl+round)%len(targets)]
					r, err := measure(t, single[t][n], slice)
					if err != nil {
						b.Fatalf("%s at %d connections: %v", t, n, err)
					}
					merge(t, n, r)
					if t == "sidecar" {
						sidecarRate = r.rate()
					}
				}
				// The do-nothing server again, held to the rate the
				// linearizable sidecar reached in this slice.
				if sidecarRate > 0 && single["nothing"] != nil {
					pace := time.Duration(float64(n) / sidecarRate * float64(time.Second))
					w := startCPUWindow(e.pids["nothing"], zkServer.CPUTime)
					r, err := runStormPaced(ctx, single["nothing"][n], 0, slice, pace)
					w.end(&r.cpu, zkServer.CPUTime)
					if err != nil {
						b.Fatalf("paced do-nothing at %d connections: %v", n, err)
					}
					merge(pacedNothing, n, r)
				}
			}
		}
		rt := rts
		for sl := range stormSlices {
			for k := range rt {
				t := rt[(k+sl+round)%len(rt)]
				r, err := measure(t, random[t], slice)
				if err != nil {
					b.Fatalf("%s on random ids: %v", t, err)
				}
				merge(t+"-random", randomConns, r)
			}
		}
	}
	b.StopTimer()
	for _, rs := range results {
		for _, r := range rs {
			slices.Sort(r.latencies)
		}
	}
	var tbl strings.Builder
	fmt.Fprintf(&tbl, "GET storm, %d CPUs (GOMAXPROCS %d), shared machine: ratios are within this run\n", runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(&tbl, "CPU per request, in microseconds, of the target's own server process and of ZooKeeper (for zk and zksync the server is ZooKeeper)\n")
	if single[peerTarget] != nil {
		fmt.Fprintf(&tbl, "coordinator: Fluss %s, JVM %s, measured after %s\n", flusstest.Fluss091.Version,
			strings.Join(coordinatorJVM("")[:3], " "), warmth)
		b.ReportMetric(warmth.took.Seconds(), "coordinator-jit-warm-s")
	}
	fmt.Fprintf(&tbl, "%-6s %-11s %10s %9s %9s %11s %8s\n", "conns", "target", "req/s", "p50", "p99", "server-cpu", "zk-cpu")
	for _, n := range stormConns {
		for _, t := range append(slices.Clone(targets), pacedNothing) {
			r := results[t][n]
			if r == nil {
				continue
			}
			fmt.Fprintf(&tbl, "%-6d %-11s %10.0f %9v %9v %11s %8s\n", n, t, r.rate(), r.pct(0.5).Round(time.Microsecond), r.pct(0.99).Round(time.Microsecond),
				fmtCPU(r.serverCPU()), fmtCPU(r.zkCPU()))
		}
		if results["sidecar"] != nil && results[pacedNothing] != nil {
			if ratio := cpuRatio(results["sidecar"][n].serverCPU(), results[pacedNothing][n].serverCPU()); ratio > 0 {
				b.ReportMetric(ratio, fmt.Sprintf("c%d-cpu-sidecar/nothing-at-its-rate", n))
			}
		}
		for _, t := range []string{"sidecar", "sequential", "nocache"} {
			if results[t] == nil || results["nothing"] == nil {
				continue
			}
			if ratio := cpuRatio(results[t][n].serverCPU(), results["nothing"][n].serverCPU()); ratio > 0 {
				b.ReportMetric(ratio, fmt.Sprintf("c%d-cpu-%s/nothing", n, t))
			}
		}
		for _, t := range targets {
			if v := results[t][n].serverCPU(); v >= 0 {
				b.ReportMetric(v, fmt.Sprintf("c%d-%s-server-cpu-us/req", n, t))
			}
			if v := results[t][n].zkCPU(); v >= 0 {
				b.ReportMetric(v, fmt.Sprintf("c%d-%s-zk-cpu-us/req", n, t))
			}
		}
		// The real coordinator against the sidecar, read modes apart.
		for _, t := range []string{"sidecar", "sequential"} {
			s, c := results[t][n], results[peerTarget][n]
			if s == nil || c == nil {
				continue
			}
			b.ReportMetric(s.rate()/c.rate(), fmt.Sprintf("c%d-%s/coordinator", n, t))
			b.ReportMetric(float64(s.pct(0.99))/float64(c.pct(0.99)), fmt.Sprintf("c%d-p99-%s/coordinator", n, t))
			if ratio := cpuRatio(s.serverCPU(), c.serverCPU()); ratio > 0 {
				b.ReportMetric(ratio, fmt.Sprintf("c%d-cpu-%s/coordinator", n, t))
			}
		}
		if !full {
			continue
		}
		z, nothing, s, nc := results["zk"][n], results["nothing"][n], results["sidecar"][n], results["nocache"][n]
		sq, zs := results["sequential"][n], results["zksync"][n]
		b.ReportMetric(s.rate()/zs.rate(), fmt.Sprintf("c%d-sidecar/zksync", n))
		b.ReportMetric(float64(s.pct(0.99))/float64(zs.pct(0.99)), fmt.Sprintf("c%d-p99-sidecar/zksync", n))
		b.ReportMetric(sq.rate()/nothing.rate(), fmt.Sprintf("c%d-sequential/nothing", n))
		b.ReportMetric(sq.rate()/z.rate(), fmt.Sprintf("c%d-sequential/zk", n))
		b.ReportMetric(float64(sq.pct(0.99))/float64(z.pct(0.99)), fmt.Sprintf("c%d-p99-sequential/zk", n))
		b.ReportMetric(s.rate()/nothing.rate(), fmt.Sprintf("c%d-sidecar/nothing", n))
		b.ReportMetric(s.rate()/z.rate(), fmt.Sprintf("c%d-sidecar/zk", n))
		b.ReportMetric(float64(s.pct(0.99))/float64(z.pct(0.99)), fmt.Sprintf("c%d-p99-sidecar/zk", n))
		b.ReportMetric(float64(nothing.pct(0.99))/float64(z.pct(0.99)), fmt.Sprintf("c%d-p99-nothing/zk", n))
		b.ReportMetric(nc.rate()/z.rate(), fmt.Sprintf("c%d-nocache/zk", n))
		b.ReportMetric(nothing.rate()/z.rate(), fmt.Sprintf("c%d-nothing/zk", n))
	}
	for _, t := range rts {
		r := results[t+"-random"][randomConns]
		fmt.Fprintf(&tbl, "%-6d %-11s %10.0f %9v %9v %11s %8s  (%d random ids)\n", randomConns, t, r.rate(), r.pct(0.5).Round(time.Microsecond), r.pct(0.99).Round(time.Microsecond),
			fmtCPU(r.serverCPU()), fmtCPU(r.zkCPU()), randomIDs)
	}
	if !full {
		for _, line := range strings.Split(tbl.String(), "\n") {
			fmt.Println("storm|", line)
		}
		return
	}
	zr, sr, nr := results["zk-random"][randomConns], results["sidecar-random"][randomConns], results["nocache-random"][randomConns]
	b.ReportMetric(results["sequential-random"][randomConns].rate()/zr.rate(), "random-sequential/zk")
	b.ReportMetric(sr.rate()/zr.rate(), "random-sidecar/zk")
	b.ReportMetric(nr.rate()/zr.rate(), "random-nocache/zk")
	if cr := results[peerTarget+"-random"][randomConns]; cr != nil {
		b.ReportMetric(sr.rate()/cr.rate(), "random-sidecar/coordinator")
		b.ReportMetric(float64(sr.pct(0.99))/float64(cr.pct(0.99)), "random-p99-sidecar/coordinator")
		if ratio := cpuRatio(sr.serverCPU(), cr.serverCPU()); ratio > 0 {
			b.ReportMetric(ratio, "random-cpu-sidecar/coordinator")
		}
		for _, x := range []struct {
			t string
			r *stormResult
		}{{"sidecar", sr}, {peerTarget, cr}} {
			if v := x.r.serverCPU(); v >= 0 {
				b.ReportMetric(v, "random-"+x.t+"-server-cpu-us/req")
			}
			if v := x.r.zkCPU(); v >= 0 {
				b.ReportMetric(v, "random-"+x.t+"-zk-cpu-us/req")
			}
		}
	}
	// Printed rather than logged: go test keeps only ten lines of a
	// benchmark's log.
	for _, line := range strings.Split(tbl.String(), "\n") {
		fmt.Println("storm|", line)
	}
}

// TestGetStormWorks keeps the storm's targets honest in `make test`: each
// answers a few GETs of the storm id, the do-nothing server answers
// exactly the sidecar's bytes, and a caller fails on an answer other than
// the one its target gave before the storm.
func TestGetStormWorks(t *testing.T) {
	e := startStormEnv(t, 3, false, true)
	ctx := context.Background()
	for _, target := range strings.Fields(stormTargets) {
		callers := e.callers(t, target, 2, []int{0, 1, 2, 3})
		for _, c := range callers {
			for range 5 {
				if err := c(ctx, rand.New(rand.NewPCG(1, 2))); err != nil {
					t.Fatalf("%s: %v", target, err)
				}
			}
		}
	}
	// Every server the storm charges CPU to can be read.
	for _, target := range []string{"sidecar", "sequential", "nocache", "nothing", peerTarget} {
		if _, ok := pidCPU(e.pids[target]); !ok && runtime.GOOS == "linux" {
			t.Errorf("the CPU time of %s's process %d cannot be read", target, e.pids[target])
		}
	}
	if _, ok := zkServer.CPUTime(); !ok && runtime.GOOS == "linux" {
		t.Error("ZooKeeper's CPU time cannot be read")
	}
	c, err := wire.Dial(ctx, e.nothing, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := c.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, e.bodies[0])
	if err != nil || r.Type != wire.ResponseSuccess {
		t.Fatal(err)
	}
	s, err := wire.Dial(ctx, e.sidecar, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want, err := s.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, e.bodies[0])
	if err != nil || !bytes.Equal(r.Body, want.Body) {
		t.Fatalf("do-nothing answer %x, sidecar %x (%v)", r.Body, want.Body, err)
	}
	changed := *e
	changed.coordAnswers = slices.Clone(e.coordAnswers)
	changed.coordAnswers[0] = append(bytes.Clone(e.coordAnswers[0][:len(e.coordAnswers[0])-1]), 0)
	if err := changed.callers(t, peerTarget, 1, []int{0})[0](ctx, nil); err == nil {
		t.Fatal("a caller took an answer other than its target's before the storm")
	}
}

// nothingServer answers every request frame with one SUCCESS frame whose
// body is fixed, copying only the request id. It reads a frame's length,
// skips its bytes and decodes nothing else.
type nothingServer struct {
	ln   net.Listener
	body []byte
	wg   sync.WaitGroup
}

func listenNothing(body []byte) (*nothingServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &nothingServer{ln: ln, body: body}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *nothingServer) close() { s.ln.Close(); s.wg.Wait() }

func (s *nothingServer) addr() string { return s.ln.Addr().String() }

func (s *nothingServer) accept() {
	defer s.wg.Done()
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.serve(conn)
	}
}

func (s *nothingServer) serve(conn net.Conn) {
	defer conn.Close()
	r := bufio.NewReaderSize(conn, 64<<10)
	// The answer: length, SUCCESS, request id (patched), body.
	resp := wire.AppendSuccess(nil, 0, s.body)
	var hdr [12]byte // length, api key, api version, request id
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(hdr[:4]))
		if n < 8 {
			return
		}
		if _, err := r.Discard(n - 8); err != nil {
			return
		}
		copy(resp[5:9], hdr[8:12])
		if _, err := conn.Write(resp); err != nil {
			return
		}
	}
}
