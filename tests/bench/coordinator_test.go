package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The real peer: a released Fluss coordinator, 0.9.1-incubating (the first
// release with the producer-offsets registry), and the one tablet server it
// needs before it is ready, run from the jars in .deps/maven by
// internal/flusstest on the benchmarks' ZooKeeper under a root and a remote
// directory of their own. One cluster serves every benchmark and test of a
// test process (the GET storm's "coordinator" target, the lifecycle against
// the coordinator); runBenchmarks stops it before ZooKeeper.

// coordinatorJVM are the servers' JVM options: those of a deployment, not
// flusstest's quick-start ones (which stop the JIT at C1). Fluss's own
// start scripts pass no heap or collector option, so the JVM picks G1 on a
// machine with two CPUs or more; the heap is fixed so that it neither grows
// during a run nor takes a quarter of the host's memory. Each JVM also
// logs every method its JIT compiles to dir/jit-<pid>.log, which tells
// warmCoordinator when the compiler is done.
func coordinatorJVM(dir string) []string {
	return []string{"-Xms1g", "-Xmx1g", "-XX:+UseG1GC", "-Xlog:jit+compilation=debug:file=" + filepath.Join(dir, "jit-%p.log")}
}

const (
	// coordinatorListener is the PLAINTEXT client listener the benchmarks
	// reach the coordinator on, as a deployment's clients would (the
	// internal listener is the servers' own).
	coordinatorListener = "CLIENT"
	// The coordinator serves a workload, uncounted, in windows of jitWindow
	// until its JIT compiler compiled fewer than jitQuiet methods in each
	// of the last two windows (on the 2-CPU VM: about 15 s of the GET storm,
	// 30-40 s of lifecycles, during which its CPU per operation falls to
	// a third or less), but at most for jitMaxWarm.
	jitWindow  = 2 * time.Second
	jitQuiet   = 10
	jitMaxWarm = 2 * time.Minute
)

// flussPeer is the running cluster and what the benchmarks need of it.
type flussPeer struct {
	cluster *flusstest.Cluster
	dir     string // the cluster's folder: configuration, data, logs
	addr    string // the coordinator's client listener
	pid     int    // the coordinator's process
	root    string // zookeeper.path.root
	remote  string // remote.data.dir, a local folder
}

var peer struct {
	mu     sync.Mutex
	p      *flussPeer
	err    error                // the start failed; not tried again
	warmed map[string]jitWarmth // by workload
}

// jitWarmth is how long a workload warmed the coordinator's JIT, and
// whether the compiler went quiet within jitMaxWarm.
type jitWarmth struct {
	took  time.Duration
	quiet bool
}

// startCoordinator returns the process's Fluss cluster, starting it on
// first use; a cluster that cannot start fails every caller.
func startCoordinator(tb testing.TB) *flussPeer {
	tb.Helper()
	flusstest.SkipIfShort(tb)
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if peer.p == nil && peer.err == nil {
		peer.p, peer.err = launchPeer()
	}
	if peer.err != nil {
		tb.Fatalf("the Fluss %s coordinator: %v", flusstest.Fluss091.Version, peer.err)
	}
	return peer.p
}

func launchPeer() (*flussPeer, error) {
	dir, err := os.MkdirTemp("", "bench-fluss-")
	if err != nil {
		return nil, err
	}
	cfg := flusstest.Config{
		Release:    flusstest.Fluss091,
		ZooKeeper:  zkAddr,
		Root:       zktest.UniqueRoot(),
		Dir:        dir,
		RemoteDir:  filepath.Join(dir, "remote"),
		Listeners:  []flusstest.Listener{{Name: coordinatorListener}},
		JVMOptions: coordinatorJVM(dir),
	}
	c, err := flusstest.Start(context.Background(), cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &flussPeer{cluster: c, dir: dir, addr: c.Coordinator.Endpoint(coordinatorListener), pid: c.Coordinator.Pid(),
		root: cfg.Root, remote: cfg.RemoteDir}, nil
}

// stopCoordinator stops the cluster if one was started. Its folder is
// removed unless the run failed, when its path is printed for the logs.
func stopCoordinator(failed bool) {
	peer.mu.Lock()
	defer peer.mu.Unlock()
	if peer.p == nil {
		return
	}
	peer.p.cluster.Close()
	if failed {
		fmt.Fprintf(os.Stderr, "bench: the Fluss cluster's configuration and logs are kept in %s\n", peer.p.dir)
	} else {
		os.RemoveAll(peer.p.dir)
	}
	peer.p = nil
}

// warmCoordinator runs work, window after window, the first time the
// process measures the workload named, until the coordinator's JIT is done
// with it (see jitQuiet), so that none of its compiling is counted; later
// calls return at once with the first one's answer.
func warmCoordinator(tb testing.TB, p *flussPeer, workload string, work func(window int, d time.Duration) error) jitWarmth {
	tb.Helper()
	peer.mu.Lock()
	w, done := peer.warmed[workload]
	peer.mu.Unlock()
	if done {
		return w
	}
	start := time.Now()
	quiet := 0
	for w := 0; quiet < 2 && time.Since(start) < jitMaxWarm; w++ {
		before, err := p.jitCompiles()
		if err != nil {
			tb.Fatal(err)
		}
		if err := work(w, jitWindow); err != nil {
			tb.Fatalf("warming the coordinator up (%s): %v", workload, err)
		}
		after, err := p.jitCompiles()
		if err != nil {
			tb.Fatal(err)
		}
		if after-before < jitQuiet {
			quiet++
		} else {
			quiet = 0
		}
	}
	w = jitWarmth{took: time.Since(start), quiet: quiet == 2}
	peer.mu.Lock()
	if peer.warmed == nil {
		peer.warmed = map[string]jitWarmth{}
	}
	peer.warmed[workload] = w
	peer.mu.Unlock()
	return w
}

func (w jitWarmth) String() string {
	if !w.quiet {
		return fmt.Sprintf("%.0f s of warm-up, its JIT still compiling (more than %d methods in %s)", w.took.Seconds(), jitQuiet, jitWindow)
	}
	return fmt.Sprintf("%.0f s of warm-up, when its JIT went quiet (fewer than %d methods compiled in each of two %s windows)", w.took.Seconds(), jitQuiet, jitWindow)
}

// jitCompiles is how many methods the coordinator's JIT has compiled so
// far: the lines of its compilation log.
func (p *flussPeer) jitCompiles() (int, error) {
	b, err := os.ReadFile(filepath.Join(p.dir, fmt.Sprintf("jit-%d.log", p.pid)))
	if err != nil {
		return 0, fmt.Errorf("the coordinator's JIT log: %w", err)
	}
	return bytes.Count(b, []byte("\n")), nil
}

// checkBesideCoordinator reads every id through a sidecar started on the
// coordinator's own ZooKeeper root and remote directory, and fails unless
// each answer is byte for byte the coordinator's (answers, in the order of
// bodies): the two servers read the same znodes and files, so a target that
// answered differently would not be doing the same work.
func checkBesideCoordinator(tb testing.TB, p *flussPeer, bodies, answers [][]byte) {
	tb.Helper()
	a := apptest.Start(tb, zkAddr, map[string]string{app.KeyZKRoot: p.root, app.KeyRemoteDataDir: "file://" + p.remote})
	defer a.Close()
	got := getAnswers(tb, a.Addr(), bodies)
	for i := range bodies {
		if !bytes.Equal(got[i], answers[i]) {
			tb.Fatalf("GET %x: the coordinator answers %x, a sidecar on its root %x", bodies[i], answers[i], got[i])
		}
	}
}

// registerIDs registers the two-table snapshot under every id through the
// server at addr, 16 at a time. With again, an id already registered (a
// live snapshot, answered 1) is fine: the coordinator's root outlives one
// benchmark.
func registerIDs(tb testing.TB, addr string, ids []string, again bool) {
	tb.Helper()
	ctx := context.Background()
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	err = inParallel(len(ids), func(i int) error {
		req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(ids[i]), TableOffsets: twoTables()}
		resp := &messages.RegisterProducerOffsetsResponse{}
		if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil {
			return fmt.Errorf("register %s at %s: %v", ids[i], addr, err)
		}
		if r := resp.GetResult(); r != 0 && (r != 1 || !again) {
			return fmt.Errorf("register %s at %s: result %d", ids[i], addr, r)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// getAnswers GETs each body once from the server at addr and returns the
// answers' bodies, each checked to be the two-table snapshot of its id.
func getAnswers(tb testing.TB, addr string, bodies [][]byte) [][]byte {
	tb.Helper()
	ctx := context.Background()
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	out := make([][]byte, len(bodies))
	err = inParallel(len(bodies), func(i int) error {
		r, err := c.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, bodies[i])
		if err != nil {
			return fmt.Errorf("get at %s: %v", addr, err)
		}
		if r.Type != wire.ResponseSuccess {
			return fmt.Errorf("get at %s: %v", addr, r.Err())
		}
		if err := isTwoTables(bodies[i], r.Body); err != nil {
			return fmt.Errorf("get at %s: %v", addr, err)
		}
		out[i] = bytes.Clone(r.Body)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// isTwoTables checks that answer, the body of a GET_PRODUCER_OFFSETS
// success for request body req, holds the requested id and exactly the
// offsets of twoTables, whatever its expiration.
func isTwoTables(req, answer []byte) error {
	var q messages.GetProducerOffsetsRequest
	var got messages.GetProducerOffsetsResponse
	if err := proto.Unmarshal(req, &q); err != nil {
		return err
	}
	if err := proto.Unmarshal(answer, &got); err != nil {
		return fmt.Errorf("answer %x: %v", answer, err)
	}
	if got.ExpirationTime == nil {
		return fmt.Errorf("answer %x has no expiration", answer)
	}
	got.ExpirationTime = nil
	want := &messages.GetProducerOffsetsResponse{ProducerId: q.ProducerId, TableOffsets: twoTables()}
	if !proto.Equal(&got, want) {
		return fmt.Errorf("answer for %s is %v, want %v", q.GetProducerId(), &got, want)
	}
	return nil
}

// inParallel runs fn(0..n-1) on 16 goroutines and returns the first error.
func inParallel(n int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
