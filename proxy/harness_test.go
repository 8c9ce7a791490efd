package proxy_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remote"
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

func ctxT(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	tb.Cleanup(cancel)
	return ctx
}

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

// realLocal is the sidecar's own Mux over a real ZooKeeper (fresh root)
// and a local remote dir.
type realLocal struct {
	mux *wire.Mux
	zc  *zk.Client
}

func newRealLocal(t *testing.T, advertised config.Listener) *realLocal {
	t.Helper()
	ctx := ctxT(t)
	zc, err := zk.Connect(ctx, zk.Config{Address: sharedZK, Root: zktest.UniqueRoot(), ConnectionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	files, err := remote.Open(ctx, "file://"+t.TempDir(), remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	reg, err := producer.New(producer.Config{
		Snapshots: zkstore.New(zc),
		Files:     files,
	})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sidecar.New(sidecar.Config{Advertised: []config.Listener{advertised}, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return &realLocal{mux: sc.Mux(), zc: zc}
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

// rawConn is a bare client connection that sends chosen request ids and
// sees answers in arrival order.
type rawConn struct {
	tb testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(tb testing.TB, addr string) *rawConn {
	tb.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testTimeout))
	tb.Cleanup(func() { nc.Close() })
	return &rawConn{tb: tb, nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawConn) send(key messages.Key, version int16, id int32, msg proto.Message) []byte {
	r.tb.Helper()
	var body []byte
	if msg != nil {
		var err error
		if body, err = proto.Marshal(msg); err != nil {
			r.tb.Fatal(err)
		}
	}
	r.sendRaw(key, version, id, body)
	return body
}

func (r *rawConn) sendRaw(key messages.Key, version int16, id int32, body []byte) {
	r.tb.Helper()
	if _, err := r.nc.Write(wire.AppendRequest(nil, wire.RequestHeader{APIKey: key, APIVersion: version, RequestID: id}, body)); err != nil {
		r.tb.Fatal(err)
	}
}

func (r *rawConn) read() wire.Response {
	r.tb.Helper()
	payload, err := wire.ReadFrame(r.br, 0)
	if err != nil {
		r.tb.Fatalf("read response: %v", err)
	}
	resp, err := wire.ParseResponse(payload)
	if err != nil {
		r.tb.Fatalf("parse response: %v", err)
	}
	return resp
}

// readN reads n answers and returns them by request id, failing on a
// duplicate id.
func (r *rawConn) readN(n int) map[int32]wire.Response {
	r.tb.Helper()
	out := make(map[int32]wire.Response, n)
	for range n {
		resp := r.read()
		if _, dup := out[resp.RequestID]; dup {
			r.tb.Fatalf("request id %d answered twice", resp.RequestID)
		}
		out[resp.RequestID] = resp
	}
	return out
}

// expectClosed fails unless the peer closes the connection without sending
// anything more.
func (r *rawConn) expectClosed() {
	r.tb.Helper()
	var b [1]byte
	n, err := r.br.Read(b[:])
	if n != 0 || err == nil {
		r.tb.Fatalf("expected the connection to be closed, read %d bytes, err %v", n, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		r.tb.Fatalf("connection was not closed: %v", err)
	}
}

func (r *rawConn) handshake() {
	r.tb.Helper()
	r.send(messages.KeyAPIVersions, 0, 0, &apiVersionsReq)
	if resp := r.read(); resp.Type != wire.ResponseSuccess || resp.RequestID != 0 {
		r.tb.Fatalf("handshake: %v %v", resp.Type, resp.Err())
	}
}
