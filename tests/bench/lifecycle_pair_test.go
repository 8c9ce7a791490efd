package bench

import (
	"cmp"
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// BenchmarkLifecyclePair runs the sidecar's lifecycle and the baseline's
// (see BenchmarkLifecycleSidecar and BenchmarkLifecycleBaseline) in
// alternating rounds, pairRounds pairs per iteration, against the same
// ZooKeeper with the same number of workers, so that the disk's and the
// shared machine's changes weigh on both alike: run back to back, the two
// benchmarks drift apart by more than the difference they measure. It
// reports each side's lifecycles per second, their ratio sidecar/baseline
// (the target is at least 0.8), and each side's CPU time per lifecycle:
// this process's (for the sidecar side, the sidecar's and the load
// generator's client together) and ZooKeeper's. Both sides keep the two
// CPUs of the development VM busy, so the ratio follows the CPU time spent
// per lifecycle. Run it with
//
//	go test ./tests/bench -run '^$' -bench LifecyclePair -benchtime 1x
func BenchmarkLifecyclePair(b *testing.B) {
	a := startApp(b)
	ctx := context.Background()
	workers := parallelism * runtime.GOMAXPROCS(0) // as b.SetParallelism(parallelism)
	clients := make([]*wire.Client, workers)
	for i := range clients {
		c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		clients[i] = c
	}
	// The baseline shares one session among its workers, as a coordinator
	// does (and as the sidecar does).
	conn, _, err := gozk.Connect([]string{zkAddr}, 30*time.Second, gozk.WithLogger(quiet{}))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	root := zktest.UniqueRoot()
	dir := b.TempDir()
	conn.Create(root, nil, 0, gozk.WorldACL(gozk.PermAll))
	conn.Create(root+"/producers", nil, 0, gozk.WorldACL(gozk.PermAll))
	bodies := []string{
		`{"version":1,"table_id":1,"bucket_offsets":[10,20]}`,
		`{"version":1,"table_id":2,"partition_offsets":[{"partition_id":3,"bucket_offsets":[30]}]}`,
	}

	type side struct {
		one      func(worker int) error
		ops      int
		wall     time.Duration
		cpu, zk  time.Duration // this process's, ZooKeeper's
		zkCosted bool
	}
	sidecar := &side{one: func(i int) error { return sidecarLifecycle(ctx, clients[i]) }}
	registry := &side{one: func(int) error { return registryLifecycle(ctx, a.Registry()) }}
	baseline := &side{one: func(int) error { return baselineLifecycle(conn, root, dir, bodies) }}
	sides := []*side{sidecar, registry, baseline}

	// Warm every side once, uncounted.
	for _, sd := range sides {
		if _, err := lifecycleRound(workers, pairWarm, sd.one); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		for r := range pairRounds {
			// Rotate which side goes first, so that none always follows
			// the same other's leftovers (ZooKeeper's log, the page cache,
			// the file system's journal).
			for k := range sides {
				sd := sides[(r+k)%len(sides)]
				cpu0 := processCPU()
				zk0, zkOK0 := zkServer.CPUTime()
				t0 := time.Now()
				n, err := lifecycleRound(workers, pairRound, sd.one)
				if err != nil {
					b.Fatal(err)
				}
				sd.wall += time.Since(t0)
				sd.cpu += processCPU() - cpu0
				zk1, zkOK1 := zkServer.CPUTime()
				sd.zk += zk1 - zk0
				sd.zkCosted = zkOK0 && zkOK1
				sd.ops += n
			}
		}
	}
	b.StopTimer()
	s := float64(sidecar.ops) / sidecar.wall.Seconds()
	bl := float64(baseline.ops) / baseline.wall.Seconds()
	rg := float64(registry.ops) / registry.wall.Seconds()
	b.ReportMetric(s, "sidecar-lifecycles/s")
	b.ReportMetric(bl, "baseline-lifecycles/s")
	b.ReportMetric(s/bl, "sidecar/baseline")
	b.ReportMetric(rg/bl, "registry/baseline")
	for _, x := range []struct {
		name string
		sd   *side
	}{{"sidecar", sidecar}, {"registry", registry}, {"baseline", baseline}} {
		b.ReportMetric(float64(x.sd.cpu.Microseconds())/float64(x.sd.ops), x.name+"-cpu-us/lifecycle")
		if x.sd.zkCosted {
			b.ReportMetric(float64(x.sd.zk.Microseconds())/float64(x.sd.ops), x.name+"-zk-cpu-us/lifecycle")
		}
	}
}

// registryLifecycle is sidecarLifecycle without the RPC layer: the same
// registry, called in process.
func registryLifecycle(ctx context.Context, reg *producer.Registry) error {
	id := fmt.Sprintf("bench-%d", seq.Add(1))
	off := [3]int64{10, 20, 30}
	part := int64(3)
	res, err := reg.Register(ctx, producer.RegisterInput{ProducerID: &id, Tables: []producer.TableInput{
		{TableID: 1, Buckets: []producer.BucketInput{{BucketID: 0, LogEndOffset: &off[0]}, {BucketID: 1, LogEndOffset: &off[1]}}},
		{TableID: 2, Buckets: []producer.BucketInput{{PartitionID: &part, BucketID: 0, LogEndOffset: &off[2]}}},
	}})
	if err != nil || res != producer.Created {
		return fmt.Errorf("register: %v %v", res, err)
	}
	snap, found, err := reg.Get(ctx, &id)
	if err != nil || !found || len(snap.Tables) != 2 {
		return fmt.Errorf("get: %v %v %v", found, err, snap)
	}
	return reg.Delete(ctx, &id, nil)
}

const (
	pairRounds = 6                       // pairs of rounds per iteration
	pairRound  = 1500 * time.Millisecond // one side's round
	pairWarm   = 500 * time.Millisecond
)

// lifecycleRound runs one lifecycle after another on workers goroutines
// until d has passed, and returns how many completed. Each worker finishes
// the lifecycle it started, so a round may run a little over d: the caller
// times the round itself.
func lifecycleRound(workers int, d time.Duration, one func(worker int) error) (int, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total int
		first error
	)
	until := time.Now().Add(d)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for time.Now().Before(until) {
				if err := one(w); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
					return
				}
				n++
			}
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total, first
}

// processCPU is this process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
