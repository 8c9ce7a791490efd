package sidecar_test

import (
	"context"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/rawconn"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
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

// testClock is the fixed clock of the golden frames: 2024-12-30T06:37:48Z.
var testClock = time.UnixMilli(1735538268000)

// gatedFiles holds WriteOffsets for one producer id until the test opens
// the gate, to make response order deterministic.
type gatedFiles struct {
	storage.FileStore
	id      string
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedFiles) WriteOffsets(ctx context.Context, id string, t offsets.TableOffsets) (string, error) {
	if g.id != "" && id == g.id {
		g.entered <- struct{}{}
		select {
		case <-g.gate:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return g.FileStore.WriteOffsets(ctx, id, t)
}

type testSidecar struct {
	addr     string
	tablet   string // the tablet endpoint's address
	zkAddr   string
	root     string
	dir      string
	zc       *zk.Client
	files    *remotestore.Store
	gated    *gatedFiles
	registry *producer.Registry
}

type sidecarOpts struct {
	zkAddr         string
	gateID         string
	requestTimeout time.Duration
	maxFrame       int32
	// advertise and advertiseTablet replace the bound addresses in
	// GET_METADATA answers.
	advertise, advertiseTablet *config.Listener
	// health is the stores' health check GET_CLUSTER_HEALTH asks.
	health sidecar.HealthFunc
	// logger and audit: where and which audit lines go.
	logger hclog.Logger
	audit  sidecar.AuditConfig
}

// startSidecar runs the sidecar's APIs on a wire server over a real
// ZooKeeper (own root) and a local remote dir.
func startSidecar(t *testing.T, o sidecarOpts) *testSidecar {
	t.Helper()
	zktest.SkipIfShort(t)
	if o.zkAddr == "" {
		o.zkAddr = sharedZK
	}
	ts := &testSidecar{zkAddr: o.zkAddr, root: zktest.UniqueRoot(), dir: t.TempDir()}
	ctx := t.Context()
	zc, err := zk.Connect(ctx, zk.Config{Address: o.zkAddr, Root: ts.root, ConnectionTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	files, err := remotestore.Open(ctx, "file://"+ts.dir, remotestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	ts.zc, ts.files = zc, files
	ts.gated = &gatedFiles{FileStore: files, id: o.gateID, entered: make(chan struct{}, 16), gate: make(chan struct{})}
	snaps := zkstore.New(zc)
	ts.registry, err = producer.New(producer.Config{
		Snapshots: snaps,
		Files:     ts.gated,
		FastPaths: storage.FastPathsOf(snaps, ts.gated),
		Now:       func() time.Time { return testClock },
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	port := ln.Addr().(*net.TCPAddr).Port
	adv := config.Listener{Name: "FLUSS", Host: "127.0.0.1", Port: port}
	if o.advertise != nil {
		adv = *o.advertise
	}
	tln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.tablet = tln.Addr().String()
	tadv := config.Listener{Name: "FLUSS", Host: "127.0.0.1", Port: tln.Addr().(*net.TCPAddr).Port}
	if o.advertiseTablet != nil {
		tadv = *o.advertiseTablet
	}
	sc, err := sidecar.New(sidecar.Config{
		NodeID:           0,
		Advertised:       []config.Listener{adv},
		TabletAdvertised: []config.Listener{tadv},
		Registry:         ts.registry,
		RequestTimeout:   o.requestTimeout,
		Health:           o.health,
		Logger:           o.logger,
		Audit:            o.audit,
	})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, ln, wire.ServerConfig{Mux: sc.Mux(), ListenerName: "FLUSS", MaxFrameSize: o.maxFrame})
	serve(t, tln, wire.ServerConfig{Mux: sc.TabletMux(), ListenerName: "FLUSS", MaxFrameSize: o.maxFrame})
	return ts
}

// serve runs a wire server on ln until the test ends.
func serve(t *testing.T, ln net.Listener, cfg wire.ServerConfig) {
	srv := wire.NewServer(cfg)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
}

func (ts *testSidecar) dial(t *testing.T) *wire.Client {
	t.Helper()
	c, err := wire.Dial(t.Context(), ts.addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Handshake(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// rawConn is a raw connection to the coordinator endpoint for byte-level
// tests.
func (ts *testSidecar) rawConn(t *testing.T) *rawconn.Conn[wire.Response] {
	t.Helper()
	return rawConnTo(t, ts.addr)
}

// rawConnTo is a raw connection to addr.
func rawConnTo(t *testing.T, addr string) *rawconn.Conn[wire.Response] {
	t.Helper()
	return rawconn.Dial(t, addr, wire.ParseResponse)
}

// offsetsFiles lists the offsets files on disk.
func (ts *testSidecar) offsetsFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	filepath.Walk(filepath.Join(ts.dir, "producers"), func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func golden(t *testing.T, name string) []byte {
	t.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.Join(strings.Fields(string(text)), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
