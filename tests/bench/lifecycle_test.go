package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The two benchmarks run the same producer lifecycle (register a snapshot
// of two tables, get it, delete it) with the same parallelism against the
// same ZooKeeper.
//
// BenchmarkLifecycleBaseline is the storage work a Fluss coordinator does
// for that lifecycle, issued directly with no RPC layer and no checks:
// write two files and create the znode; read the znode and the files; read
// the znode, delete it and the files.
//
// BenchmarkLifecycleSidecar is the whole sidecar, over loopback, through the
// Fluss wire protocol, with its validation, per-id serialization and race
// checks (one more ZooKeeper read on register, a creation-zxid check on
// delete).
//
// Run back to back they drift apart with the disk; the ratio comes from
// BenchmarkLifecyclePair, which alternates them. Each alone is the way to
// profile one side.

var (
	zkAddr   string
	zkServer *zktest.Server
)

func TestMain(m *testing.M) {
	if role := os.Getenv(childRoleEnv); role != "" {
		os.Exit(runChild(role)) // a GET storm server (child_test.go)
	}
	os.Exit(runBenchmarks(m))
}

// runBenchmarks starts the package's ZooKeeper, runs the tests and
// benchmarks, and stops the Fluss cluster some of them start on that
// ZooKeeper (coordinator_test.go) before ZooKeeper itself. Under -short it
// starts nothing.
func runBenchmarks(m *testing.M) int {
	if !flag.Parsed() {
		flag.Parse() // m.Run parses too; testing.Short needs it now
	}
	if testing.Short() {
		return m.Run() // no ZooKeeper: the tests that need it skip (zktest.SkipIfShort)
	}
	s, err := zktest.Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "zktest: cannot start ZooKeeper: %v\n", err)
		return 1
	}
	defer s.Close()
	zkAddr, zkServer = s.Addr, s
	code := m.Run()
	stopCoordinator(code != 0)
	return code
}

var seq atomic.Int64

const parallelism = 8 // goroutines per GOMAXPROCS

func BenchmarkLifecycleSidecar(b *testing.B) {
	a := startApp(b)
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
		if err != nil {
			b.Error(err)
			return
		}
		defer c.Close()
		for pb.Next() {
			if err := sidecarLifecycle(ctx, c); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// sidecarLifecycle registers, gets and deletes one snapshot through the
// sidecar.
func sidecarLifecycle(ctx context.Context, c *wire.Client) error {
	id := fmt.Sprintf("bench-%d", seq.Add(1))
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TableOffsets: twoTables()}
	reg := &messages.RegisterProducerOffsetsResponse{}
	if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, reg); err != nil || reg.GetResult() != 0 {
		return fmt.Errorf("register: %v %v", err, reg)
	}
	got := &messages.GetProducerOffsetsResponse{}
	if err := c.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, got); err != nil || len(got.TableOffsets) != 2 {
		return fmt.Errorf("get: %v %v", err, got)
	}
	if err := c.Call(ctx, messages.KeyDeleteProducerOffsets, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, nil); err != nil {
		return fmt.Errorf("delete: %v", err)
	}
	return nil
}

func BenchmarkLifecycleBaseline(b *testing.B) {
	root := zktest.UniqueRoot()
	dir := b.TempDir()
	conn, _, err := gozk.Connect([]string{zkAddr}, 30*time.Second, gozk.WithLogger(quiet{}))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	conn.Create(root, nil, 0, gozk.WorldACL(gozk.PermAll))
	conn.Create(root+"/producers", nil, 0, gozk.WorldACL(gozk.PermAll))
	bodies := []string{
		`{"version":1,"table_id":1,"bucket_offsets":[10,20]}`,
		`{"version":1,"table_id":2,"partition_offsets":[{"partition_id":3,"bucket_offsets":[30]}]}`,
	}
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := baselineLifecycle(conn, root, dir, bodies); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// baselineLifecycle does a coordinator's storage work for one lifecycle.
func baselineLifecycle(conn *gozk.Conn, root, dir string, bodies []string) error {
	acl := gozk.WorldACL(gozk.PermAll)
	id := fmt.Sprintf("bench-%d", seq.Add(1))
	var paths []string
	for i, body := range bodies {
		p := filepath.Join(dir, "producers", id, fmt.Sprint(i+1), "550e8400-e29b-41d4-a716-446655440000.offsets")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
		paths = append(paths, p)
	}
	znode := fmt.Sprintf(`{"version":1,"expiration_time":1,"tables":[{"table_id":1,"offsets_path":"file:%s"},{"table_id":2,"offsets_path":"file:%s"}]}`, paths[0], paths[1])
	path := root + "/producers/" + id
	if _, err := conn.Create(path, []byte(znode), 0, acl); err != nil {
		return err
	}
	// get: read the znode, then the files.
	if _, _, err := conn.Get(path); err != nil {
		return err
	}
	for _, p := range paths {
		if _, err := os.ReadFile(p); err != nil {
			return err
		}
	}
	// delete: read the znode, delete it, delete the files.
	if _, _, err := conn.Get(path); err != nil {
		return err
	}
	if err := conn.Delete(path, -1); err != nil {
		return err
	}
	for _, p := range paths {
		os.Remove(p)
	}
	return nil
}

func twoTables() []*messages.PbProducerTableOffsets {
	bo := func(p *int64, bucket int32, off int64) *messages.PbBucketOffset {
		return &messages.PbBucketOffset{PartitionId: p, BucketId: proto.Int32(bucket), LogEndOffset: proto.Int64(off)}
	}
	return []*messages.PbProducerTableOffsets{
		{TableId: proto.Int64(1), BucketOffsets: []*messages.PbBucketOffset{bo(nil, 0, 10), bo(nil, 1, 20)}},
		{TableId: proto.Int64(2), BucketOffsets: []*messages.PbBucketOffset{bo(proto.Int64(3), 0, 30)}},
	}
}

// readConsistencyEnv, when set, is the sidecar.read-consistency of the
// lifecycle benchmarks' sidecar (scripts/bench.sh runs them in both modes).
const readConsistencyEnv = "FLUSS_BENCH_READ_CONSISTENCY"

func startApp(tb testing.TB) *app.App {
	tb.Helper()
	kv := map[string]string{}
	if v := os.Getenv(readConsistencyEnv); v != "" {
		kv[app.KeyReadConsistency] = v
	}
	return apptest.Start(tb, zkAddr, kv)
}

// TestLifecyclesWork keeps the benchmarked code paths honest in `make
// test`: one lifecycle through each must succeed.
func TestLifecyclesWork(t *testing.T) {
	a := startApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := sidecarLifecycle(ctx, c); err != nil {
		t.Fatal(err)
	}
	conn, _, err := gozk.Connect([]string{zkAddr}, 30*time.Second, gozk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	root := zktest.UniqueRoot()
	conn.Create(root, nil, 0, gozk.WorldACL(gozk.PermAll))
	conn.Create(root+"/producers", nil, 0, gozk.WorldACL(gozk.PermAll))
	if err := baselineLifecycle(conn, root, t.TempDir(), []string{"{}", "{}"}); err != nil {
		t.Fatal(err)
	}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}
