package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// BenchmarkLifecycleCoordinator runs the producer lifecycle of
// sidecarLifecycle (register a two-table snapshot, get it, delete it) with
// the same workers and client code through two servers, each a process of
// its own on the same ZooKeeper: the sidecar (a child process, as in the
// GET storm, with FLUSS_BENCH_READ_CONSISTENCY as its read mode when set)
// and the real Fluss 0.9.1 coordinator (coordinator_test.go), which serves
// the lifecycle for coordinatorWarm, uncounted, before the first counted
// round of the process. The two alternate in rounds as in
// BenchmarkLifecyclePair, pairRounds of each per iteration. It reports
// each side's lifecycles per second and their ratio, and each side's CPU
// time per lifecycle: its server process's and ZooKeeper's. Any failed
// call fails the benchmark. Run it with
//
//	go test ./tests/bench -run '^$' -bench LifecycleCoordinator -benchtime 1x
func BenchmarkLifecycleCoordinator(b *testing.B) {
	p := startCoordinator(b)
	env := []string{childZKEnv + "=" + zkAddr, childRootEnv + "=" + zktest.UniqueRoot(), childDirEnv + "=" + b.TempDir()}
	if v := os.Getenv(readConsistencyEnv); v != "" {
		env = append(env, childKVEnv+"="+app.KeyReadConsistency+"="+v)
	}
	sidecarAddr, sidecarPID := startChildPID(b, "sidecar", env...)
	ctx := context.Background()
	workers := parallelism * runtime.GOMAXPROCS(0) // as BenchmarkLifecyclePair
	type side struct {
		name  string
		conns []*wire.Client
		pid   int
		ops   int
		wall  time.Duration
		cost  cpuCost
	}
	dial := func(addr string) []*wire.Client {
		out := make([]*wire.Client, workers)
		for i := range out {
			c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			out[i] = c
		}
		return out
	}
	sidecar := &side{name: "sidecar", conns: dial(sidecarAddr), pid: sidecarPID}
	coord := &side{name: peerTarget, conns: dial(p.addr), pid: p.pid}
	sides := []*side{sidecar, coord}
	one := func(sd *side) func(int) error {
		return func(w int) error { return sidecarLifecycle(ctx, sd.conns[w]) }
	}

	checkSameLifecycle(b, sidecar.conns[0], coord.conns[0])
	warmth := warmCoordinator(b, p, "lifecycle", func(_ int, d time.Duration) error {
		_, err := lifecycleRound(workers, d, one(coord))
		return err
	})
	for _, sd := range sides {
		if _, err := lifecycleRound(workers, pairWarm, one(sd)); err != nil {
			b.Fatalf("%s: %v", sd.name, err)
		}
	}
	b.ResetTimer()
	for range b.N {
		for r := range pairRounds {
			for k := range sides {
				sd := sides[(r+k)%len(sides)]
				w := startCPUWindow(sd.pid, zkServer.CPUTime)
				t0 := time.Now()
				n, err := lifecycleRound(workers, pairRound, one(sd))
				sd.wall += time.Since(t0)
				w.end(&sd.cost, zkServer.CPUTime)
				if err != nil {
					b.Fatalf("%s: %v", sd.name, err)
				}
				sd.ops += n
			}
		}
	}
	b.StopTimer()
	rate := func(sd *side) float64 { return float64(sd.ops) / sd.wall.Seconds() }
	b.ReportMetric(rate(sidecar), "sidecar-lifecycles/s")
	b.ReportMetric(rate(coord), "coordinator-lifecycles/s")
	b.ReportMetric(rate(sidecar)/rate(coord), "sidecar/coordinator")
	b.ReportMetric(warmth.took.Seconds(), "coordinator-jit-warm-s")
	if !warmth.quiet {
		fmt.Printf("lifecycle| the coordinator's JIT was still compiling after %s\n", warmth)
	}
	for _, sd := range sides {
		if v := perRequest(sd.cost.server, sd.cost.serverOK, sd.ops); v >= 0 {
			b.ReportMetric(v, sd.name+"-cpu-us/lifecycle")
		}
		if v := perRequest(sd.cost.zk, sd.cost.zkOK, sd.ops); v >= 0 {
			b.ReportMetric(v, sd.name+"-zk-cpu-us/lifecycle")
		}
	}
	s := perRequest(sidecar.cost.server, sidecar.cost.serverOK, sidecar.ops)
	if ratio := cpuRatio(s, perRequest(coord.cost.server, coord.cost.serverOK, coord.ops)); ratio > 0 {
		b.ReportMetric(ratio, "cpu-sidecar/coordinator")
	}
}

// checkSameLifecycle runs one lifecycle of one id through both servers and
// fails unless their GET answers are the same bytes but for the expiration
// (each server sets its own), and each answers a GET after the delete with
// the empty message of a missing snapshot.
func checkSameLifecycle(tb testing.TB, a, b *wire.Client) {
	tb.Helper()
	ctx := context.Background()
	id := fmt.Sprintf("lifecycle-check-%d", seq.Add(1))
	get, err := proto.Marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)})
	if err != nil {
		tb.Fatal(err)
	}
	answer := func(c *wire.Client) []byte {
		r, err := c.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, get)
		if err != nil || r.Type != wire.ResponseSuccess {
			tb.Fatalf("get %s: %v %v", id, err, r.Err())
		}
		return r.Body
	}
	var got [2][]byte
	for i, c := range []*wire.Client{a, b} {
		req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TableOffsets: twoTables()}
		reg := &messages.RegisterProducerOffsetsResponse{}
		if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, reg); err != nil || reg.GetResult() != 0 {
			tb.Fatalf("register %s: %v %v", id, err, reg)
		}
		body := answer(c)
		if err := isTwoTables(get, body); err != nil {
			tb.Fatal(err)
		}
		var m messages.GetProducerOffsetsResponse
		if err := proto.Unmarshal(body, &m); err != nil {
			tb.Fatal(err)
		}
		m.ExpirationTime = proto.Int64(0)
		if got[i], err = proto.Marshal(&m); err != nil {
			tb.Fatal(err)
		}
		if err := c.Call(ctx, messages.KeyDeleteProducerOffsets, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, nil); err != nil {
			tb.Fatalf("delete %s: %v", id, err)
		}
		if body := answer(c); len(body) != 0 {
			tb.Fatalf("get %s after its delete: %x, want the empty message", id, body)
		}
	}
	if !bytes.Equal(got[0], got[1]) {
		tb.Fatalf("the lifecycle's GET: sidecar %x, coordinator %x (expirations zeroed)", got[0], got[1])
	}
}

// TestLifecycleCoordinatorWorks keeps the lifecycle against the
// coordinator honest in `make test`: its check passes, and one lifecycle
// through the coordinator succeeds.
func TestLifecycleCoordinatorWorks(t *testing.T) {
	p := startCoordinator(t)
	a := startApp(t)
	ctx := context.Background()
	sc, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	cc, err := wire.Dial(ctx, p.addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	checkSameLifecycle(t, sc, cc)
	if err := sidecarLifecycle(ctx, cc); err != nil {
		t.Fatal(err)
	}
}
