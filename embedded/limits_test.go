package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/rawconn"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The tests below prove that embedded mode applies every serving key of
// the configuration table (app.ConfigKeys, Serving) as the ZooKeeper-backed
// sidecar does: each starts an embedded server from the key, through the
// same app.FromConfig and app.EmbeddedConfig that `serve --embedded` uses,
// and shows the key in force. Waits are for events; where a key is a time,
// it is set far below the default, so that a key that is not applied fails
// the test at its deadline instead of passing late.

// notApplied bounds the wait for what a key set far below its default
// makes happen; the defaults are 30 s and more.
const notApplied = 20 * time.Second

// servingKeyTests holds one test per serving key.
var servingKeyTests = map[string]func(t *testing.T){
	app.KeyBindListeners:       testBindListeners,
	app.KeyAdvertisedListeners: testAdvertisedListeners,
	app.KeyTabletListeners:     testTabletListeners,
	app.KeyTabletAdvertised:    testTabletAdvertised,
	app.KeyNodeID:              testNodeID,
	app.KeyMaxRequestSize:      testMaxRequestSize,
	app.KeyIdleTimeout:         testIdleTimeout,
	app.KeyRequestTimeout:      testRequestTimeout,
	app.KeyMaxInFlight: func(t *testing.T) {
		srv := startFromKeys(t, map[string]string{app.KeyMaxInFlight: "1"}, nil)
		checkHeldBack(t, srv, 10, 10)
	},
	app.KeyMaxRunningPerConn: func(t *testing.T) {
		srv := startFromKeys(t, map[string]string{app.KeyMaxRunningPerConn: "1"}, nil)
		checkHeldBack(t, srv, 10, 10)
	},
	app.KeyMaxQueuedBytes: func(t *testing.T) {
		// Room for the first request and the witness, not for the second
		// as well. The frame limit must not exceed the budget.
		srv := startFromKeys(t, map[string]string{app.KeyMaxQueuedBytes: "4kb", app.KeyMaxRequestSize: "4kb"}, nil)
		checkHeldBack(t, srv, 3000, 2000)
	},
	app.KeyMaxConnections: testMaxConnections,
	app.KeyDrainTimeout:   testDrainTimeout,
	authz.KeyAuthTimeout:  testAuthTimeout,
}

// TestEmbeddedAppliesEveryServingKey runs one subtest per serving key of
// the configuration table, and fails for a serving key without one.
func TestEmbeddedAppliesEveryServingKey(t *testing.T) {
	serving := map[string]bool{}
	for _, k := range app.ConfigKeys() {
		if !k.Serving {
			continue
		}
		serving[k.Name] = true
		test, ok := servingKeyTests[k.Name]
		if !ok {
			t.Errorf("%s is a serving key, and no test shows it in force in embedded mode", k.Name)
			continue
		}
		t.Run(k.Name, test)
	}
	for k := range servingKeyTests {
		if !serving[k] {
			t.Errorf("%s has a test here but is not a serving key of the configuration table", k)
		}
	}
}

// startFromKeys starts an embedded server from configuration keys as
// `serve --embedded` does, on a free loopback port unless kv binds
// elsewhere; store, when set, holds the data.
func startFromKeys(t *testing.T, kv map[string]string, store *memstore.Store) *embedded.Server {
	t.Helper()
	c := config.New()
	c.Set(app.KeyEmbedded, "true")
	c.Set(app.KeyBindListeners, "FLUSS://127.0.0.1:0")
	for k, v := range kv {
		c.Set(k, v)
	}
	s, err := app.FromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := app.EmbeddedConfig(s, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Store = store
	return start(t, cfg)
}

// stallingStore is a store whose offsets file writes wait, once armed,
// until released: a REGISTER then holds its producer's lock inside the
// registry, as one does on a slow object store.
type stallingStore struct {
	*memstore.Store
	armed    atomic.Bool
	entered  chan struct{} // one value per stalled write
	released chan struct{}
	release  func()
}

func newStallingStore(t *testing.T) *stallingStore {
	s := &stallingStore{entered: make(chan struct{}, 16), released: make(chan struct{})}
	var once atomic.Bool
	s.release = func() {
		if once.CompareAndSwap(false, true) {
			close(s.released)
		}
	}
	s.Store = memstore.New(memstore.Options{NewUUID: func() string {
		if s.armed.Load() {
			s.entered <- struct{}{}
			<-s.released
		}
		return "00000000-0000-4000-8000-000000000000"
	}})
	s.armed.Store(true)
	return s
}

// rawConn speaks frames on a socket, for what wire.Client hides: when a
// request is written, and a connection closed without an answer.
type rawConn = rawconn.Conn[wire.Response]

// dialRaw opens a raw connection whose reads give up after notApplied.
func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c := rawconn.Dial(t, addr, wire.ParseResponse)
	c.SetDeadline(notApplied)
	return c
}

// apiVersions is an API_VERSIONS request of about pad bytes.
func apiVersions(pad int) *messages.ApiVersionsRequest {
	return &messages.ApiVersionsRequest{ClientSoftwareName: proto.String(strings.Repeat("x", pad)), ClientSoftwareVersion: proto.String("1")}
}

func testBindListeners(t *testing.T) {
	srv := startFromKeys(t, map[string]string{app.KeyBindListeners: "FLUSS://127.0.0.1:0,CLIENT://127.0.0.1:0"}, nil)
	ls := srv.Listeners()
	if len(ls) != 2 || ls[0].Name != "FLUSS" || ls[1].Name != "CLIENT" {
		t.Fatalf("bound %v, want FLUSS and CLIENT", ls)
	}
	for _, l := range ls {
		if _, err := dial(t, l.Address()).Handshake(t.Context()); err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
	}
}

func metadata(t *testing.T, addr string) *messages.PbServerNode {
	t.Helper()
	var md messages.MetadataResponse
	if err := dial(t, addr).Call(t.Context(), messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, &md); err != nil {
		t.Fatal(err)
	}
	return md.GetCoordinatorServer()
}

func testAdvertisedListeners(t *testing.T) {
	srv := startFromKeys(t, map[string]string{app.KeyAdvertisedListeners: "FLUSS://sidecar.example:9999"}, nil)
	if n := metadata(t, srv.Addr()); n.GetHost() != "sidecar.example" || n.GetPort() != 9999 {
		t.Fatalf("GET_METADATA announces %s:%d, want sidecar.example:9999", n.GetHost(), n.GetPort())
	}
}

// testTabletListeners: the tablet endpoints bind where the key says, in
// the listeners' order whatever the key's, and each answers as a
// TABLET_SERVER.
func testTabletListeners(t *testing.T) {
	port := zktest.LoopbackPort(t)
	srv := startFromKeys(t, map[string]string{
		app.KeyBindListeners:   "FLUSS://127.0.0.1:0,CLIENT://127.0.0.1:0",
		app.KeyTabletListeners: fmt.Sprintf("CLIENT://127.0.0.1:0,FLUSS://127.0.0.1:%d", port),
	}, nil)
	ls := srv.TabletListeners()
	if len(ls) != 2 || ls[0].Name != "FLUSS" || ls[0].Port != port || ls[1].Name != "CLIENT" {
		t.Fatalf("tablet endpoints %v, want FLUSS on port %d, then CLIENT", ls, port)
	}
	for _, l := range ls {
		av, err := dial(t, l.Address()).Handshake(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
		if av.GetServerType() != int32(messages.ServerTypeTabletServer) {
			t.Fatalf("%s tablet endpoint answers server_type %v, want 2", l.Name, av.ServerType)
		}
	}
}

// testTabletAdvertised: GET_METADATA names the tablet server at the
// advertised address.
func testTabletAdvertised(t *testing.T) {
	srv := startFromKeys(t, map[string]string{app.KeyTabletAdvertised: "FLUSS://tablet.example:9998"}, nil)
	var md messages.MetadataResponse
	if err := dial(t, srv.Addr()).Call(t.Context(), messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, &md); err != nil {
		t.Fatal(err)
	}
	if n := md.GetTabletServers(); len(n) != 1 || n[0].GetHost() != "tablet.example" || n[0].GetPort() != 9998 {
		t.Fatalf("GET_METADATA names tablet servers %v, want tablet.example:9998", n)
	}
}

func testNodeID(t *testing.T) {
	srv := startFromKeys(t, map[string]string{app.KeyNodeID: "7"}, nil)
	if n := metadata(t, srv.Addr()); n.GetNodeId() != 7 {
		t.Fatalf("GET_METADATA announces node %d, want 7", n.GetNodeId())
	}
}

// testMaxRequestSize: a frame above the limit is refused with
// SERVER_FAILURE and the connection closed; one below is answered.
func testMaxRequestSize(t *testing.T) {
	srv := startFromKeys(t, map[string]string{app.KeyMaxRequestSize: "1kb"}, nil)
	c := dialRaw(t, srv.Addr())
	c.SendMsg(messages.KeyAPIVersions, 0, 1, apiVersions(900))
	if r := c.Read(); r.Type != wire.ResponseSuccess {
		t.Fatalf("a 0.9 KiB request: %v %v", r.Type, r.Err())
	}
	c.SendMsg(messages.KeyAPIVersions, 0, 2, apiVersions(2000))
	if r := c.Read(); r.Type != wire.ResponseServerFailure {
		t.Fatalf("a 2 KiB request: %v %v, want SERVER_FAILURE", r.Type, r.Err())
	}
	c.ExpectClosed("after SERVER_FAILURE")
}

// testIdleTimeout: a connection that sends nothing is closed.
func testIdleTimeout(t *testing.T) {
	srv := startFromKeys(t, map[string]string{app.KeyIdleTimeout: "100 ms"}, nil)
	c := dialRaw(t, srv.Addr())
	c.SendMsg(messages.KeyAPIVersions, 0, 1, apiVersions(1))
	c.Read()
	c.ExpectClosed("idle")
}

// testRequestTimeout: a REGISTER whose store write does not return is
// answered REQUEST_TIME_OUT.
func testRequestTimeout(t *testing.T) {
	store := newStallingStore(t)
	srv := startFromKeys(t, map[string]string{app.KeyRequestTimeout: "100 ms"}, store.Store)
	t.Cleanup(store.release) // before the server closes: Close waits for the write
	ctx, cancel := context.WithTimeout(context.Background(), notApplied)
	defer cancel()
	_, err := register(ctx, dial(t, srv.Addr()), "slow", 1)
	if code(err) != flusserr.RequestTimeOut {
		t.Fatalf("register on a stalled store: %v, want REQUEST_TIME_OUT", err)
	}
}

// testMaxConnections: the connection beyond the limit is closed without
// an answer; the one within it is served.
func testMaxConnections(t *testing.T) {
	srv := startFromKeys(t, map[string]string{app.KeyMaxConnections: "1"}, nil)
	first := dialRaw(t, srv.Addr())
	first.SendMsg(messages.KeyAPIVersions, 0, 1, apiVersions(1))
	first.Read() // accepted and counted
	second := dialRaw(t, srv.Addr())
	second.SendMsg(messages.KeyAPIVersions, 0, 1, apiVersions(1))
	second.ExpectClosed("the second connection")
	first.SendMsg(messages.KeyAPIVersions, 0, 2, apiVersions(1))
	if r := first.Read(); r.RequestID != 2 {
		t.Fatalf("first connection: answer %d", r.RequestID)
	}
}

// testDrainTimeout: Close cuts a request still running when the drain
// timeout ends, rather than waiting for it.
func testDrainTimeout(t *testing.T) {
	store := newStallingStore(t)
	srv := startFromKeys(t, map[string]string{app.KeyDrainTimeout: "100 ms"}, store.Store)
	t.Cleanup(store.release)
	ctx, cancel := context.WithTimeout(context.Background(), notApplied)
	defer cancel()
	c := dial(t, srv.Addr())
	answered := make(chan error, 1)
	go func() {
		_, err := register(ctx, c, "slow", 1)
		answered <- err
	}()
	select { // the register is running, and will not end by itself
	case <-store.entered:
	case err := <-answered:
		t.Fatalf("register answered before reaching the store: %v", err)
	}
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	if err := <-answered; errors.Is(err, context.DeadlineExceeded) || err == nil {
		t.Fatalf("the running register got %v; want it cut by the drain timeout", err)
	}
	store.release() // the write settles; Close waits for that
	if err := <-closed; !errors.Is(err, wire.ErrDrainTimeout) {
		t.Fatalf("Close: %v, want the drain timeout", err)
	}
}

// testAuthTimeout: a connection to a SASL listener that does not log in
// is closed.
func testAuthTimeout(t *testing.T) {
	srv := startFromKeys(t, map[string]string{
		authz.KeyProtocolMap: "FLUSS:SASL",
		authz.KeyPlainJAAS:   `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_a="pw";`,
		authz.KeyAuthTimeout: "100 ms",
	}, nil)
	dialRaw(t, srv.Addr()).ExpectClosed("not logged in")
}

// checkHeldBack shows that a request is held back while an earlier request
// of its connection holds what the limit under test bounds (an in-flight
// slot, a running slot, request bytes): request 1 is stalled at the gate,
// request 2 is written behind it, and a witness request on another
// connection makes a round trip meanwhile. Only after that is request 1
// released. Request 2 must reach the gate after the release, and both are
// answered. Without the limit, request 2 would pass the gate
// while request 1 is held, in the time of the witness's round trip.
func checkHeldBack(t *testing.T, srv *embedded.Server, padFirst, padSecond int) {
	t.Helper()
	type seen struct {
		conn     uint64
		id       int32
		released bool
	}
	var released atomic.Bool
	gate := make(chan seen, 16)
	srv.ControlKey(embedded.AnyKey, func(r embedded.Request) embedded.Action {
		gate <- seen{r.ConnID, r.RequestID, released.Load()}
		return embedded.Pass()
	})
	release := srv.StallNext(messages.KeyAPIVersions)
	defer release()
	next := func(what string) seen {
		t.Helper()
		select {
		case s := <-gate:
			return s
		case <-time.After(notApplied):
			t.Fatalf("waiting for %s at the gate", what)
			return seen{}
		}
	}

	c := dialRaw(t, srv.Addr())
	witness := dialRaw(t, srv.Addr())
	c.SendMsg(messages.KeyAPIVersions, 0, 1, apiVersions(padFirst))
	first := next("request 1")
	c.SendMsg(messages.KeyAPIVersions, 0, 2, apiVersions(padSecond))
	witness.SendMsg(messages.KeyAPIVersions, 0, 3, apiVersions(1))
	if r := witness.Read(); r.RequestID != 3 || r.Type != wire.ResponseSuccess {
		t.Fatalf("witness: %v %d", r.Type, r.RequestID)
	}
	released.Store(true)
	release()
	// Both are answered. Not necessarily in order: a handler gives its
	// running slot back before its answer is written, so request 2 may run
	// and be answered first, as Fluss's servers may answer out of order.
	// What the limit holds back is when request 2 reaches the gate, below.
	answered := map[int32]bool{}
	for range 2 {
		r := c.Read()
		if (r.RequestID != 1 && r.RequestID != 2) || answered[r.RequestID] || r.Type != wire.ResponseSuccess {
			t.Fatalf("answer %d (%v), want one each for requests 1 and 2", r.RequestID, r.Type)
		}
		answered[r.RequestID] = true
	}
	for {
		s := next("request 2")
		if s.conn != first.conn {
			continue // the witness
		}
		if s.id != 2 {
			t.Fatalf("request %d at the gate, want 2", s.id)
		}
		if !s.released {
			t.Fatal("request 2 passed the gate while request 1 was held: the limit is not in force")
		}
		return
	}
}
