package proxy_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/rawconn"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var sharedZK string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { sharedZK = addr })
}

// testTimeout only keeps a broken test from hanging; nothing is timed.
const testTimeout = 60 * time.Second

// testLogger writes to the test log until the test ends.
func testLogger(tb testing.TB) hclog.Logger {
	w := &logWriter{tb: tb}
	tb.Cleanup(w.stop)
	return hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: w})
}

type logWriter struct {
	mu      sync.Mutex
	tb      testing.TB
	stopped bool
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.tb.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *logWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
}

func startFake(tb testing.TB, cfg fakecoord.Config) *fakecoord.Coordinator {
	tb.Helper()
	c, err := fakecoord.Start(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

// connectZK opens a client of the shared ZooKeeper under a fresh root,
// closed when the test ends; it skips the test in -short mode.
func connectZK(t *testing.T) *zk.Client {
	t.Helper()
	zktest.SkipIfShort(t)
	zc, err := zk.Connect(t.Context(), zk.Config{Address: sharedZK, Root: zktest.UniqueRoot(), ConnectionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	return zc
}

// runDiscovery builds a ZKDiscovery from cfg (logging to the test when
// cfg.Logger is nil) and runs it until the test ends.
func runDiscovery(t *testing.T, cfg proxy.ZKDiscoveryConfig) *proxy.ZKDiscovery {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	disc, err := proxy.NewZKDiscovery(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- disc.Run(runCtx) }()
	t.Cleanup(func() { stop(); <-ran })
	return disc
}

// realLocal is the sidecar's own Mux over a real ZooKeeper (fresh root)
// and a local remote dir.
type realLocal struct {
	mux *wire.Mux
	zc  *zk.Client
}

func newRealLocal(t *testing.T, advertised config.Listener) *realLocal {
	t.Helper()
	ctx := t.Context()
	zc := connectZK(t)
	files, err := remotestore.Open(ctx, "file://"+t.TempDir(), remotestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	snaps := zkstore.New(zc)
	reg, err := producer.New(producer.Config{
		Snapshots: snaps,
		Files:     files,
		FastPaths: storage.FastPathsOf(snaps, files),
	})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sidecar.New(sidecar.Config{Advertised: []config.Listener{advertised}, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return &realLocal{mux: sc.ProxyMux(), zc: zc}
}

// listener reserves a 127.0.0.1 port for a proxy so its address is known
// before the proxy is built.
func listener(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ln
}

// serveProxy builds a proxy from cfg and serves it on ln.
func serveProxy(tb testing.TB, ln net.Listener, cfg proxy.Config, base wire.ServerConfig) *proxy.Proxy {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(tb)
	}
	if cfg.SelfAddrs == nil {
		cfg.SelfAddrs = []string{ln.Addr().String()}
	}
	p, err := proxy.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if base.Logger == nil {
		base.Logger = cfg.Logger
	}
	p.Warm(context.Background()) // best effort, as app.Start's KeepWarm
	srv := wire.NewServer(p.ServerConfig(base))
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(context.Background(), ln) }()
	tb.Cleanup(func() { srv.Close(); <-done })
	return p
}

// rawConn is the raw connection of the proxy's tests; see package rawconn.
type rawConn = rawconn.Conn[wire.Response]

// dialRaw opens a raw connection whose reads give up after testTimeout.
func dialRaw(tb testing.TB, addr string) *rawConn {
	tb.Helper()
	r := rawconn.Dial(tb, addr, wire.ParseResponse)
	r.SetDeadline(testTimeout)
	return r
}

// readN reads n answers and returns them by request id, failing on a
// duplicate id.
func readN(tb testing.TB, r *rawConn, n int) map[int32]wire.Response {
	tb.Helper()
	out := make(map[int32]wire.Response, n)
	for range n {
		resp := r.Read()
		if _, dup := out[resp.RequestID]; dup {
			tb.Fatalf("request id %d answered twice", resp.RequestID)
		}
		out[resp.RequestID] = resp
	}
	return out
}
