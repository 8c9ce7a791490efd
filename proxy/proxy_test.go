package proxy_test

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func registerReq(id string) *messages.RegisterProducerOffsetsRequest {
	return &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String(id),
		TableOffsets: []*messages.PbProducerTableOffsets{{
			TableId: proto.Int64(100),
			BucketOffsets: []*messages.PbBucketOffset{
				{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(42)},
			},
		}},
	}
}

// setup is a proxy in front of a fake coordinator, with the real sidecar
// registry (real ZooKeeper) as its local APIs.
type setup struct {
	fake  *fakecoord.Coordinator
	local *realLocal
	addr  string
	p     *proxy.Proxy
}

func newSetup(t *testing.T, fcfg fakecoord.Config, mod func(*proxy.Config)) *setup {
	t.Helper()
	fake := startFake(t, fcfg)
	ln := listener(t)
	tcp := ln.Addr().(*net.TCPAddr)
	local := newRealLocal(t, config.Listener{Name: "FLUSS", Host: "127.0.0.1", Port: tcp.Port})
	cfg := proxy.Config{Upstream: proxy.StaticUpstream(fake.Addr()), Local: local.mux}
	if mod != nil {
		mod(&cfg)
	}
	p := serveProxy(t, ln, cfg, wire.ServerConfig{ListenerName: "FLUSS"})
	return &setup{fake: fake, local: local, addr: ln.Addr().String(), p: p}
}

func decode(t *testing.T, r wire.Response, m proto.Message) {
	t.Helper()
	if r.Type != wire.ResponseSuccess {
		t.Fatalf("request %d: %v %v", r.RequestID, r.Type, r.Err())
	}
	if err := proto.Unmarshal(r.Body, m); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, r wire.Response, code flusserr.Code, msgPart string) {
	t.Helper()
	if r.Type != wire.ResponseError {
		t.Fatalf("request %d: got %v, want ERROR %d", r.RequestID, r.Type, code)
	}
	fe, ok := flusserr.From(r.Err())
	if !ok || fe.Code != code || !strings.Contains(fe.Message, msgPart) {
		t.Fatalf("request %d: got %v, want code %d with %q", r.RequestID, r.Err(), code, msgPart)
	}
}

// TestMixedPipeline sends forwarded and local requests on one connection
// with a forwarded one held upstream, so the answers come out of order; each
// id gets exactly its own answer.
func TestMixedPipeline(t *testing.T) {
	s := newSetup(t, fakecoord.Config{}, nil)
	hold := make(chan struct{})
	entered := make(chan fakecoord.Request, 1)
	s.fake.Inject(messages.KeyGetTableInfo, fakecoord.Fault{Hold: hold, Entered: entered})

	c := dialRaw(t, s.addr)
	c.Handshake()
	const heldID = int32(-7)
	heldBody := []byte("\x0a\x03db1\x12\x02t1 opaque bytes never decoded \xff\x00")
	c.Send(messages.KeyGetTableInfo, 1, heldID, heldBody)
	<-entered

	echoBodies := map[int32][]byte{
		2147483647: []byte("list databases"),
		5:          {},
		6:          []byte{0x0a, 0x02, 'd', 'b'},
	}
	c.Send(messages.KeyListDatabases, 0, 2147483647, echoBodies[2147483647])
	c.SendMsg(messages.KeyRegisterProducerOffsets, 0, 3, registerReq("job-mixed"))
	c.SendMsg(messages.KeyGetProducerOffsets, 0, 4, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("job-other")})
	c.Send(messages.KeyDatabaseExists, 0, 5, echoBodies[5])
	c.Send(messages.KeyGetTableInfo, 0, 6, nil) // held too
	c.SendMsg(messages.KeyGetMetadata, 0, 7, &messages.MetadataRequest{})
	<-entered

	got := readN(t, c, 5)
	for _, id := range []int32{2147483647, 5} {
		if r := got[id]; r.Type != wire.ResponseSuccess || !bytes.Equal(r.Body, echoBodies[id]) {
			t.Fatalf("request %d: %v body %x, want the upstream's echo %x", id, r.Type, r.Body, echoBodies[id])
		}
	}
	var reg messages.RegisterProducerOffsetsResponse
	decode(t, got[3], &reg)
	if reg.Result == nil || reg.GetResult() != 0 {
		t.Fatalf("register answered %v: want CREATED from the sidecar (the fake always says 1)", &reg)
	}
	var get messages.GetProducerOffsetsResponse
	decode(t, got[4], &get)
	if get.ProducerId != nil {
		t.Fatalf("get answered %v: want not-found from the sidecar, not %q from upstream", &get, fakecoord.UpstreamProducerID)
	}
	var md messages.MetadataResponse
	decode(t, got[7], &md)
	if md.GetCoordinatorServer().GetPort() != s.fake.Port() {
		t.Fatalf("metadata %v was not the upstream's", &md)
	}
	// The snapshot really is in ZooKeeper.
	if data, _, err := s.local.zc.Get(t.Context(), "/producers/job-mixed"); err != nil || len(data) == 0 {
		t.Fatalf("producer znode: %q %v", data, err)
	}

	close(hold)
	rest := readN(t, c, 2)
	if r := rest[heldID]; r.Type != wire.ResponseSuccess || !bytes.Equal(r.Body, heldBody) {
		t.Fatalf("held request: %v %x", r.Type, r.Body)
	}
	if r := rest[6]; r.Type != wire.ResponseSuccess || len(r.Body) != 0 {
		t.Fatalf("second held request: %v %x", r.Type, r.Body)
	}

	// The sidecar, not the upstream, served 1053-1055, and nothing was sent
	// to authenticate on this PLAINTEXT setup.
	for _, k := range []messages.Key{messages.KeyRegisterProducerOffsets, messages.KeyGetProducerOffsets, messages.KeyDeleteProducerOffsets, messages.KeyAuthenticate} {
		if n := len(s.fake.RequestsFor(k)); n != 0 {
			t.Errorf("upstream saw %d requests of api key %d", n, k)
		}
	}
	// One upstream connection carried everything, with its own request ids.
	conns := map[uint64]bool{}
	for _, r := range s.fake.Requests() {
		if r.APIKey != messages.KeyAPIVersions { // Warm's connection sends only that
			conns[r.ConnID] = true
		}
		if r.RequestID == heldID || r.RequestID == 2147483647 {
			t.Errorf("upstream saw the client's request id %d; ids must be remapped", r.RequestID)
		}
	}
	if len(conns) != 1 {
		t.Errorf("upstream saw %d connections, want 1", len(conns))
	}
}

// TestSlowUpstreamDoesNotDelayLocal holds a forwarded request upstream and
// gets a producer-offsets answer (real ZooKeeper) on the same connection
// before it.
func TestSlowUpstreamDoesNotDelayLocal(t *testing.T) {
	s := newSetup(t, fakecoord.Config{}, nil)
	hold := make(chan struct{})
	entered := make(chan fakecoord.Request, 1)
	s.fake.Inject(messages.KeyListDatabases, fakecoord.Fault{Hold: hold, Entered: entered})
	c := dialRaw(t, s.addr)
	c.Handshake()
	c.Send(messages.KeyListDatabases, 0, 1, []byte("slow"))
	<-entered
	c.SendMsg(messages.KeyRegisterProducerOffsets, 0, 2, registerReq("job-fast"))
	c.SendMsg(messages.KeyGetProducerOffsets, 0, 3, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("job-fast")})
	first := readN(t, c, 2)
	if _, ok := first[1]; ok {
		t.Fatal("the held request was answered before it was released")
	}
	var reg messages.RegisterProducerOffsetsResponse
	decode(t, first[2], &reg)
	if reg.GetResult() != 0 {
		t.Fatalf("register: %v", &reg)
	}
	close(hold)
	if r := c.Read(); r.RequestID != 1 || string(r.Body) != "slow" {
		t.Fatalf("held answer: %+v", r)
	}
}

func TestUpstreamFailureFailsInFlight(t *testing.T) {
	tests := []struct {
		name  string
		fault fakecoord.Fault
		msg   string
	}{
		{"disconnect", fakecoord.Fault{Disconnect: true}, "was lost"},
		{"server failure", fakecoord.Fault{ServerFailure: true}, "failed the connection (UNKNOWN_SERVER_ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, fakecoord.Config{}, nil)
			other := dialRaw(t, s.addr)
			other.Handshake()

			hold := make(chan struct{})
			defer close(hold)
			entered := make(chan fakecoord.Request, 2)
			s.fake.Inject(messages.KeyGetTableInfo, fakecoord.Fault{Hold: hold, Entered: entered})
			c := dialRaw(t, s.addr)
			c.Handshake()
			c.Send(messages.KeyGetTableInfo, 0, 10, nil)
			c.Send(messages.KeyGetTableInfo, 0, 11, nil)
			<-entered
			<-entered
			s.fake.Inject(messages.KeyDatabaseExists, tt.fault)
			c.Send(messages.KeyDatabaseExists, 0, 12, nil)
			got := readN(t, c, 3)
			for _, id := range []int32{10, 11, 12} {
				wantCode(t, got[id], flusserr.NetworkException, tt.msg)
			}
			c.ExpectClosed("the proxy closes it")

			// Other connections are untouched.
			s.fake.Clear(messages.KeyDatabaseExists)
			other.Send(messages.KeyDatabaseExists, 0, 1, []byte("still here"))
			if r := other.Read(); r.Type != wire.ResponseSuccess || string(r.Body) != "still here" {
				t.Fatalf("other connection: %v %v", r.Type, r.Err())
			}
			// And new ones open a fresh upstream connection.
			fresh := dialRaw(t, s.addr)
			fresh.Handshake()
			fresh.SendMsg(messages.KeyRegisterProducerOffsets, 0, 1, registerReq("job-after"))
			var reg messages.RegisterProducerOffsetsResponse
			decode(t, fresh.Read(), &reg)
		})
	}
}

func TestUpstreamUnreachable(t *testing.T) {
	dead := listener(t)
	deadAddr := dead.Addr().String()
	dead.Close()
	ln := listener(t)
	local := newRealLocal(t, config.Listener{Name: "FLUSS", Host: "127.0.0.1", Port: 1})
	serveProxy(t, ln, proxy.Config{Upstream: proxy.StaticUpstream(deadAddr), Local: local.mux}, wire.ServerConfig{})
	c := dialRaw(t, ln.Addr().String())
	// API_VERSIONS is answered locally; the forwarded request fails, and
	// the connection stays open for the local APIs.
	c.Handshake()
	c.Send(messages.KeyListDatabases, 0, 1, nil)
	wantCode(t, c.Read(), flusserr.NetworkException, "cannot connect to the upstream coordinator at "+deadAddr)
	c.SendMsg(messages.KeyRegisterProducerOffsets, 0, 2, registerReq("job-unreachable"))
	var reg messages.RegisterProducerOffsetsResponse
	decode(t, c.Read(), &reg)
	// Every forwarded request tries again.
	c.Send(messages.KeyListDatabases, 0, 3, nil)
	wantCode(t, c.Read(), flusserr.NetworkException, "cannot connect to the upstream coordinator at "+deadAddr)
}

// TestLocalAPIsWithUpstreamDown: with the coordinator stopped, clients
// still handshake (with the last known merged list) and register, get and
// delete producer offsets; only forwarded requests fail, with the
// retriable NETWORK_EXCEPTION, and the connection stays open.
func TestLocalAPIsWithUpstreamDown(t *testing.T) {
	s := newSetup(t, fakecoord.Config{}, nil)
	s.fake.Close()

	cl, err := wire.Dial(t.Context(), s.addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	v, err := cl.Handshake(t.Context())
	if err != nil {
		t.Fatalf("API_VERSIONS with the coordinator down: %v", err)
	}
	keys := map[int32]bool{}
	for _, a := range v.GetApiVersions() {
		keys[a.GetApiKey()] = true
	}
	if !keys[int32(messages.KeyListDatabases)] || !keys[int32(messages.KeyRegisterProducerOffsets)] {
		t.Fatalf("want the last merged list (upstream and local keys), got %v", keys)
	}
	ctx := t.Context()
	var reg messages.RegisterProducerOffsetsResponse
	if err := cl.Call(ctx, messages.KeyRegisterProducerOffsets, 0, registerReq("job-down"), &reg); err != nil || reg.GetResult() != 0 {
		t.Fatalf("register: %v %v", &reg, err)
	}
	var got messages.GetProducerOffsetsResponse
	if err := cl.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("job-down")}, &got); err != nil || got.GetProducerId() != "job-down" {
		t.Fatalf("get: %v %v", &got, err)
	}
	r, err := cl.CallRaw(ctx, messages.KeyListDatabases, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fe, ok := flusserr.From(r.Err()); !ok || fe.Code != flusserr.NetworkException {
		t.Fatalf("forwarded request: %v %v", r.Type, r.Err())
	}
	if err := cl.Call(ctx, messages.KeyDeleteProducerOffsets, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String("job-down")}, &messages.DeleteProducerOffsetsResponse{}); err != nil {
		t.Fatalf("delete after a failed forward, same connection: %v", err)
	}
}

func TestRefusesToForwardToItself(t *testing.T) {
	tests := []struct {
		name     string
		upstream func(port string) string
		self     func(port string) []string
	}{
		{"same address", func(p string) string { return "127.0.0.1:" + p }, nil},
		{"localhost", func(p string) string { return "localhost:" + p }, nil},
		{"bound on all addresses", func(p string) string { return "127.0.0.1:" + p }, func(p string) []string { return []string{"0.0.0.0:" + p} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln := listener(t)
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			local := newRealLocal(t, config.Listener{Name: "FLUSS", Host: "127.0.0.1", Port: 1})
			cfg := proxy.Config{Upstream: proxy.StaticUpstream(tt.upstream(port)), Local: local.mux}
			if tt.self != nil {
				cfg.SelfAddrs = tt.self(port)
			}
			serveProxy(t, ln, cfg, wire.ServerConfig{})
			c := dialRaw(t, ln.Addr().String())
			c.Send(messages.KeyListDatabases, 0, 9, nil)
			wantCode(t, c.Read(), flusserr.NetworkException, "is this sidecar itself")
			c.Handshake() // the local APIs are still served
		})
	}
}

func TestAPIVersionsMerge(t *testing.T) {
	s := newSetup(t, fakecoord.Config{Versions: map[messages.Key][2]int32{
		messages.KeyAPIVersions:             {0, 3},
		messages.KeyGetMetadata:             {0, 2},
		messages.KeyAuthenticate:            {0, 4},
		messages.KeyRegisterProducerOffsets: {0, 5},
		messages.KeyGetTableInfo:            {1, 3},
	}}, nil)
	cl, err := wire.Dial(t.Context(), s.addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	v, err := cl.Handshake(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[int32][2]int32{}
	var order []int32
	for _, a := range v.GetApiVersions() {
		got[a.GetApiKey()] = [2]int32{a.GetMinVersion(), a.GetMaxVersion()}
		order = append(order, a.GetApiKey())
	}
	want := map[int32][2]int32{
		1000: {0, 0}, // answered by the proxy
		1001: {0, 0}, 1003: {0, 0}, 1004: {0, 0},
		1007: {1, 3}, // upstream only
		1012: {0, 2}, // forwarded: the upstream's range
		1038: {0, 0}, // local AUTHENTICATE wins
		1053: {0, 0}, 1054: {0, 0}, 1055: {0, 0},
	}
	if len(got) != len(want) {
		t.Fatalf("got keys %v, want %v", got, want)
	}
	for k, r := range want {
		if got[k] != r {
			t.Errorf("key %d: got %v, want %v", k, got[k], r)
		}
	}
	for i := 1; i < len(order); i++ {
		if order[i-1] >= order[i] {
			t.Fatalf("keys not sorted: %v", order)
		}
	}
	if v.ServerType == nil || v.GetServerType() != fakecoord.ServerTypeCoordinator {
		t.Fatalf("server_type %v, want the upstream's 1", v.ServerType)
	}
}

func TestMergeAPIVersions(t *testing.T) {
	local := []wire.API{{Key: 1053, MaxVersion: 0}, {Key: 1099, MinVersion: 1, MaxVersion: 2}}
	pv := func(k, lo, hi int32) *messages.PbApiVersion {
		return &messages.PbApiVersion{ApiKey: proto.Int32(k), MinVersion: proto.Int32(lo), MaxVersion: proto.Int32(hi)}
	}
	tests := []struct {
		name     string
		upstream *messages.ApiVersionsResponse
		want     *messages.ApiVersionsResponse
	}{
		{
			name:     "no server_type stays absent",
			upstream: &messages.ApiVersionsResponse{ApiVersions: []*messages.PbApiVersion{pv(1012, 0, 0)}},
			want:     &messages.ApiVersionsResponse{ApiVersions: []*messages.PbApiVersion{pv(1012, 0, 0), pv(1053, 0, 0), pv(1099, 1, 2)}},
		},
		{
			name: "local range wins, server_type kept",
			upstream: &messages.ApiVersionsResponse{ServerType: proto.Int32(1),
				ApiVersions: []*messages.PbApiVersion{pv(1053, 0, 7), pv(1001, 0, 0)}},
			want: &messages.ApiVersionsResponse{ServerType: proto.Int32(1),
				ApiVersions: []*messages.PbApiVersion{pv(1001, 0, 0), pv(1053, 0, 0), pv(1099, 1, 2)}},
		},
		{
			name:     "empty upstream",
			upstream: &messages.ApiVersionsResponse{},
			want:     &messages.ApiVersionsResponse{ApiVersions: []*messages.PbApiVersion{pv(1053, 0, 0), pv(1099, 1, 2)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := proto.Clone(tt.upstream)
			got := proxy.MergeAPIVersions(tt.upstream, local)
			if !proto.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			if !proto.Equal(before, tt.upstream) {
				t.Fatal("the upstream answer was modified")
			}
		})
	}
}

func TestMetadataRewriteThroughProxy(t *testing.T) {
	rule := &proxy.RewriteRule{Host: "sidecar.example", Port: 19123}
	s := newSetup(t, fakecoord.Config{NodeID: 3}, func(c *proxy.Config) { c.RewriteMetadata = rule })
	c := dialRaw(t, s.addr)
	c.Handshake()
	c.SendMsg(messages.KeyGetMetadata, 0, 1, &messages.MetadataRequest{})
	var md messages.MetadataResponse
	decode(t, c.Read(), &md)
	want := s.fake.Metadata()
	want.CoordinatorServer.Host = proto.String(rule.Host)
	want.CoordinatorServer.Port = proto.Int32(rule.Port)
	if !proto.Equal(&md, want) {
		t.Fatalf("got %v, want %v", &md, want)
	}
	// An ERROR answer to GET_METADATA passes through unchanged.
	s.fake.Inject(messages.KeyGetMetadata, fakecoord.Fault{Err: flusserr.New(flusserr.NotCoordinatorLeader, "not the leader")})
	c.SendMsg(messages.KeyGetMetadata, 0, 2, &messages.MetadataRequest{})
	r := c.Read()
	if r.Type != wire.ResponseError || !bytes.Equal(r.Body, wire.AppendErrorResponse(nil, flusserr.NotCoordinatorLeader, "not the leader")) {
		t.Fatalf("error answer changed: %v %x", r.Type, r.Body)
	}
}
