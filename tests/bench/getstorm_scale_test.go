package bench

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// BenchmarkGetStormScale is the GET storm at a Flink job's scale:
// 1,000, 4,000 and 16,000 connections, one GET of one producer id in
// flight on each, against
//
//   - nothing: the do-nothing server (as in BenchmarkGetStorm);
//   - sidecar: a standalone sidecar with default settings (linearizable
//     reads, no sidecar.max-connections: the limit is derived from the
//     open-files limit);
//   - proxy: a sidecar in proxy mode with default settings, in front of a
//     fake coordinator (GET is served locally; no upstream connection
//     opens);
//
// each in its own process. Every connection first answers one GET
// (uncounted): one that fails there was refused (closed at once by a
// connection limit, or not accepted). A GET that fails in the measured load
// is an error; the connection stops there. Both are reported, with the
// throughput ratios against the do-nothing server at the same count.
//
// When the load generator's descriptors (the open-files limit of this
// process) hold every target's connections at once, the targets are loaded
// in interleaved slices as in BenchmarkGetStorm; otherwise each target's
// connections are opened, loaded and closed in turn (printed as
// "in turn"), which makes the ratio more sensitive to drift of the shared
// machine.
//
// Not part of `make bench`: `make bench-scale`, or
//
//	go test ./tests/bench -run '^$' -bench GetStormScale -benchtime 1x -timeout 30m
//
// FLUSS_BENCH_STORM_SCALE_CONNS overrides the counts (comma-separated).
func BenchmarkGetStormScale(b *testing.B) {
	counts := []int{1000, 4000, 16000}
	if v := os.Getenv("FLUSS_BENCH_STORM_SCALE_CONNS"); v != "" {
		counts = counts[:0]
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("FLUSS_BENCH_STORM_SCALE_CONNS: bad count %q", f)
			}
			counts = append(counts, n)
		}
	}
	e := startScaleEnv(b)
	targets := []string{"nothing", "sidecar", "proxy"}
	var fdLimit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &fdLimit); err != nil {
		b.Fatal(err)
	}
	var tbl strings.Builder
	fmt.Fprintf(&tbl, "GET storm at scale, %d CPUs (GOMAXPROCS %d), load generator's open-files limit %d; ratios are within this run\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), fdLimit.Cur)
	fmt.Fprintf(&tbl, "server-cpu and zk-cpu: microseconds of CPU per GET of the target's own process and of ZooKeeper\n")
	fmt.Fprintf(&tbl, "%-6s %-8s %10s %9s %9s %8s %7s %11s %8s\n", "conns", "target", "req/s", "p50", "p99", "refused", "errors", "server-cpu", "zk-cpu")
	// measured loads one target's connections for d, charging its server
	// process and ZooKeeper the CPU time they spent meanwhile.
	measured := func(t string, s *scaleConns, d time.Duration) *scaleResult {
		w := startCPUWindow(e.pids[t], zkServer.CPUTime)
		r := s.load(d)
		w.end(&r.cpu, zkServer.CPUTime)
		return r
	}
	b.ResetTimer()
	for range b.N {
		for _, n := range counts {
			together := uint64(len(targets)*n+512) <= fdLimit.Cur
			res := map[string]*scaleResult{}
			if together {
				sets := map[string]*scaleConns{}
				for _, t := range targets {
					sets[t] = e.open(b, t, n)
				}
				warm := map[string]int{}
				for _, t := range targets {
					warm[t] = sets[t].load(scaleWarm).errors // only the errors count
				}
				for sl := range scaleSlices {
					for k := range targets {
						t := targets[(k+sl)%len(targets)]
						res[t] = res[t].merge(measured(t, sets[t], scaleSlice))
					}
				}
				for _, t := range targets {
					res[t].refused = sets[t].refused
					res[t].errors += warm[t]
					sets[t].close()
				}
			} else {
				for _, t := range targets {
					s := e.open(b, t, n)
					warm := s.load(scaleWarm).errors // only the errors count
					res[t] = measured(t, s, scaleSlices*scaleSlice)
					res[t].refused = s.refused
					res[t].errors += warm
					s.close()
				}
			}
			how := ""
			if !together {
				how = "  (in turn)"
			}
			for _, t := range targets {
				r := res[t]
				fmt.Fprintf(&tbl, "%-6d %-8s %10.0f %9v %9v %8d %7d %11s %8s%s\n", n, t, r.rate(), r.pct(0.5).Round(time.Microsecond),
					r.pct(0.99).Round(time.Microsecond), r.refused, r.errors, fmtCPU(r.serverCPU()), fmtCPU(r.zkCPU()), how)
			}
			nothing := res["nothing"]
			for _, t := range targets[1:] {
				b.ReportMetric(res[t].rate()/nothing.rate(), fmt.Sprintf("c%d-%s/nothing", n, t))
				b.ReportMetric(float64(res[t].refused), fmt.Sprintf("c%d-%s-refused", n, t))
				b.ReportMetric(float64(res[t].errors), fmt.Sprintf("c%d-%s-errors", n, t))
				if ratio := cpuRatio(res[t].serverCPU(), nothing.serverCPU()); ratio > 0 {
					b.ReportMetric(ratio, fmt.Sprintf("c%d-cpu-%s/nothing", n, t))
				}
			}
			for _, t := range targets {
				if v := res[t].serverCPU(); v >= 0 {
					b.ReportMetric(v, fmt.Sprintf("c%d-%s-server-cpu-us/req", n, t))
				}
			}
		}
	}
	b.StopTimer()
	for _, line := range strings.Split(tbl.String(), "\n") {
		fmt.Println("scale|", line)
	}
}

// At thousands of closed-loop connections a GET takes tens to hundreds of
// milliseconds on the 2-CPU host, so the slices are longer than
// BenchmarkGetStorm's: each lasts many round trips of every connection.
const (
	scaleSlice  = 2 * time.Second
	scaleSlices = 4
	scaleWarm   = time.Second
)

// scaleEnv is the storm at scale's servers, each in its own process.
type scaleEnv struct {
	addrs map[string]string // target → address
	pids  map[string]int    // target → its process id
	body  []byte            // the GET request for the storm id
}

func startScaleEnv(b *testing.B) *scaleEnv {
	root := fmt.Sprintf("/scale-%d-%d", os.Getpid(), seq.Add(1))
	env := []string{childZKEnv + "=" + zkAddr, childRootEnv + "=" + root, childDirEnv + "=" + b.TempDir()}
	coord, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(coord.Close)
	e := &scaleEnv{addrs: map[string]string{}, pids: map[string]int{}}
	e.addrs["sidecar"], e.pids["sidecar"] = startChildPID(b, "sidecar", env...)
	e.addrs["proxy"], e.pids["proxy"] = startChildPID(b, "sidecar", append(env, childKVEnv+"="+app.KeyMode+"="+app.ModeProxy+
		";"+app.KeyUpstreamAddress+"="+coord.Addr())...)
	ctx := context.Background()
	c, err := wire.Dial(ctx, e.addrs["sidecar"], wire.ClientOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("storm"), TableOffsets: twoTables()}
	resp := &messages.RegisterProducerOffsetsResponse{}
	if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil || resp.GetResult() != 0 {
		b.Fatalf("register: %v %v", err, resp)
	}
	if e.body, err = proto.Marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String("storm")}); err != nil {
		b.Fatal(err)
	}
	r, err := c.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, e.body)
	if err != nil || r.Type != wire.ResponseSuccess {
		b.Fatalf("get: %v %v", err, r.Err())
	}
	e.addrs["nothing"], e.pids["nothing"] = startChildPID(b, "nothing", childBodyEnv+"="+hex.EncodeToString(r.Body))
	return e
}

// scaleConns is one target's connections, each of which has answered one
// GET; refused counts those that could not. The load generator is lean so
// that the servers, not it, decide the throughput: one goroutine per
// connection writing a prepared frame and reading the answer, no client
// library (wire.Client runs two goroutines and a channel per call).
type scaleConns struct {
	target  string
	req     []byte // the GET frame; one request in flight, so one id will do
	conns   []*scaleConn
	refused int
}

type scaleConn struct {
	nc net.Conn
	br *bufio.Reader
}

// open opens n connections to target, 64 at a time.
func (e *scaleEnv) open(b *testing.B, target string, n int) *scaleConns {
	s := &scaleConns{target: target, conns: make([]*scaleConn, n),
		req: wire.AppendRequest(nil, wire.RequestHeader{APIKey: messages.KeyGetProducerOffsets, RequestID: 1}, e.body)}
	var refused atomic.Int64
	var wg sync.WaitGroup
	next := make(chan int)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d net.Dialer
			for i := range next {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				nc, err := d.DialContext(ctx, "tcp", e.addrs[target])
				cancel()
				var c *scaleConn
				if err == nil {
					c = &scaleConn{nc: nc, br: bufio.NewReaderSize(nc, 4096)}
					nc.SetDeadline(time.Now().Add(time.Minute))
					if err = s.get(c); err != nil {
						nc.Close()
					}
					nc.SetDeadline(time.Time{})
				}
				if err != nil {
					refused.Add(1)
					continue
				}
				s.conns[i] = c
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	s.conns = slices.DeleteFunc(s.conns, func(c *scaleConn) bool { return c == nil })
	s.refused = int(refused.Load())
	return s
}

// get sends one GET on c and reads its answer, which must be a SUCCESS
// with a body.
func (s *scaleConns) get(c *scaleConn) error {
	if _, err := c.nc.Write(s.req); err != nil {
		return err
	}
	payload, err := wire.ReadFrame(c.br, 1<<20)
	if err != nil {
		return err
	}
	r, err := wire.ParseResponse(payload)
	if err != nil {
		return err
	}
	if r.Type != wire.ResponseSuccess || len(r.Body) == 0 {
		return fmt.Errorf("%s: %v %v", s.target, r.Type, r.Err())
	}
	return nil
}

func (s *scaleConns) close() {
	for _, c := range s.conns {
		c.nc.Close()
	}
}

// scaleResult is stormResult with the failures counted.
type scaleResult struct {
	stormResult
	refused, errors int
}

func (r *scaleResult) merge(o *scaleResult) *scaleResult {
	if r == nil {
		return o
	}
	r.reqs += o.reqs
	r.elapsed += o.elapsed
	r.errors += o.errors
	r.cpu.add(o.cpu)
	r.latencies = append(r.latencies, o.latencies...)
	slices.Sort(r.latencies)
	return r
}

// load runs every connection in a closed loop for d and counts what
// failed; a connection whose GET failed stops for the rest of the run (and
// is dropped from later runs).
func (s *scaleConns) load(d time.Duration) *scaleResult {
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		res = &scaleResult{}
	)
	until := time.Now().Add(d)
	failed := make([]bool, len(s.conns))
	for i, c := range s.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 64)
			for {
				t0 := time.Now()
				if !t0.Before(until) {
					break
				}
				if err := s.get(c); err != nil {
					failed[i] = true
					break
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	kept := s.conns[:0]
	for i, c := range s.conns {
		if failed[i] {
			res.errors++
			c.nc.Close()
			continue
		}
		kept = append(kept, c)
	}
	s.conns = kept
	res.reqs = len(res.latencies)
	res.elapsed = d
	slices.Sort(res.latencies)
	return res
}
