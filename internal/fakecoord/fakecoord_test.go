package fakecoord

import (
	"bytes"
	"context"
	"maps"
	"net"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func start(t *testing.T, cfg Config) *Coordinator {
	t.Helper()
	c, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func dial(t *testing.T, addr string) (*wire.Client, context.Context) {
	t.Helper()
	ctx := t.Context()
	cl, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl, ctx
}

func TestPlaintextServes(t *testing.T) {
	c := start(t, Config{NodeID: 7})
	cl, ctx := dial(t, c.Addr())
	v, err := cl.Handshake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v.GetServerType() != ServerTypeCoordinator || len(v.GetApiVersions()) != 10 {
		t.Fatalf("api versions %v", v)
	}
	var md messages.MetadataResponse
	if err := cl.Call(ctx, messages.KeyGetMetadata, 0, nil, &md); err != nil {
		t.Fatal(err)
	}
	if md.GetCoordinatorServer().GetNodeId() != 7 || md.GetCoordinatorServer().GetPort() != c.Port() {
		t.Fatalf("metadata %v", &md)
	}
	r, err := cl.CallRaw(ctx, messages.KeyGetTableInfo, 1, []byte{1, 2, 3})
	if err != nil || r.Type != wire.ResponseSuccess || !bytes.Equal(r.Body, []byte{1, 2, 3}) {
		t.Fatalf("echo %+v %v", r, err)
	}
	var get messages.GetProducerOffsetsResponse
	if err := cl.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("x")}, &get); err != nil {
		t.Fatal(err)
	}
	if get.GetProducerId() != UpstreamProducerID {
		t.Fatalf("get %v", &get)
	}
	err = cl.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: []byte{}}, nil)
	if fe, ok := flusserr.From(err); !ok || fe.Code != flusserr.AuthenticateException {
		t.Fatalf("authenticate on plaintext: %v", err)
	}
	if n := len(c.RequestsFor(messages.KeyGetTableInfo)); n != 1 {
		t.Fatalf("recorded %d GET_TABLE_INFO", n)
	}
}

// TestAdvertised: GET_METADATA names Config.Advertised as coordinator,
// then what Advertise sets, then the fake itself again.
func TestAdvertised(t *testing.T) {
	c := start(t, Config{Advertised: "sidecar.example:9123"})
	cl, ctx := dial(t, c.Addr())
	coord := func() string {
		t.Helper()
		var md messages.MetadataResponse
		if err := cl.Call(ctx, messages.KeyGetMetadata, 0, nil, &md); err != nil {
			t.Fatal(err)
		}
		cs := md.GetCoordinatorServer()
		return net.JoinHostPort(cs.GetHost(), strconv.Itoa(int(cs.GetPort())))
	}
	if got := coord(); got != "sidecar.example:9123" {
		t.Fatalf("coordinator %s, want the configured sidecar.example:9123", got)
	}
	if err := c.Advertise("10.0.0.5:9125"); err != nil {
		t.Fatal(err)
	}
	if got := coord(); got != "10.0.0.5:9125" {
		t.Fatalf("coordinator %s after Advertise, want 10.0.0.5:9125", got)
	}
	if err := c.Advertise(""); err != nil {
		t.Fatal(err)
	}
	if got := coord(); got != c.Addr() {
		t.Fatalf("coordinator %s after Advertise(\"\"), want the fake's own %s", got, c.Addr())
	}
	if err := c.Advertise("no-port"); err == nil {
		t.Fatal("Advertise accepted an address without a port")
	}
	if _, err := Start(Config{Advertised: "h:99999"}); err == nil {
		t.Fatal("Start accepted an advertised port out of range")
	}
}

func TestSASL(t *testing.T) {
	c := start(t, Config{Users: map[string]string{"alice": "secret"}})
	tests := []struct {
		name     string
		token    string
		wantCode flusserr.Code
	}{
		{"wrong password", "\x00alice\x00nope", flusserr.AuthenticateException},
		{"unknown user", "\x00bob\x00secret", flusserr.AuthenticateException},
		{"malformed", "alice", flusserr.AuthenticateException},
		{"ok", "\x00alice\x00secret", flusserr.None},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl, ctx := dial(t, c.Addr())
			if _, err := cl.Handshake(ctx); err != nil {
				t.Fatal(err)
			}
			// Before authentication only 1000 and 1038 are served.
			_, err := cl.CallRaw(ctx, messages.KeyListDatabases, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = cl.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: []byte(tt.token)}, nil)
			if tt.wantCode != flusserr.None {
				if fe, ok := flusserr.From(err); !ok || fe.Code != tt.wantCode {
					t.Fatalf("got %v, want code %d", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r, err := cl.CallRaw(ctx, messages.KeyListDatabases, 0, []byte{9})
			if err != nil || r.Type != wire.ResponseSuccess {
				t.Fatalf("after auth: %+v %v", r, err)
			}
			reqs := c.RequestsFor(messages.KeyListDatabases)
			if last := reqs[len(reqs)-1]; last.Principal != "alice" {
				t.Fatalf("principal %q", last.Principal)
			}
		})
	}
}

func TestFaults(t *testing.T) {
	c := start(t, Config{})
	cl, ctx := dial(t, c.Addr())

	c.Inject(messages.KeyDatabaseExists, Fault{Err: flusserr.New(flusserr.NotCoordinatorLeader, "")})
	r, err := cl.CallRaw(ctx, messages.KeyDatabaseExists, 0, nil)
	if err != nil || r.Type != wire.ResponseError {
		t.Fatalf("%+v %v", r, err)
	}
	if fe, _ := flusserr.From(r.Err()); fe.Code != flusserr.NotCoordinatorLeader {
		t.Fatalf("code %v", r.Err())
	}
	c.Clear(messages.KeyDatabaseExists)

	hold := make(chan struct{})
	entered := make(chan Request, 1)
	c.Inject(messages.KeyGetTableInfo, Fault{Hold: hold, Entered: entered})
	res := make(chan wire.Response, 1)
	go func() {
		r, _ := cl.CallRaw(ctx, messages.KeyGetTableInfo, 0, []byte("held"))
		res <- r
	}()
	<-entered
	// Another request passes the held one.
	if r, err := cl.CallRaw(ctx, messages.KeyListDatabases, 0, []byte("x")); err != nil || string(r.Body) != "x" {
		t.Fatalf("%+v %v", r, err)
	}
	close(hold)
	if r := <-res; string(r.Body) != "held" {
		t.Fatalf("held answer %+v", r)
	}

	c.Inject(messages.KeyListDatabases, Fault{Disconnect: true})
	if _, err := cl.CallRaw(ctx, messages.KeyListDatabases, 0, nil); err == nil {
		t.Fatal("call on a cut connection succeeded")
	}

	c.Clear(messages.KeyListDatabases)
	cl2, ctx2 := dial(t, c.Addr())
	c.Inject(messages.KeyListDatabases, Fault{ServerFailure: true})
	_, err = cl2.CallRaw(ctx2, messages.KeyListDatabases, 0, nil)
	if _, ok := err.(*wire.ServerFailureError); !ok {
		t.Fatalf("want a server failure, got %v", err)
	}
}

// TestStandbyRefusesAllButHandshake: a standby answers 65 to everything but
// API_VERSIONS and AUTHENTICATE and applies nothing; the leader applies
// writes to the ledger it shares with the standby, once per request.
func TestStandbyRefusesAllButHandshake(t *testing.T) {
	ledger := &Ledger{}
	standby := start(t, Config{Ledger: ledger})
	leader := start(t, Config{Ledger: ledger})
	standby.SetStandby(true)
	cl, ctx := dial(t, standby.Addr())
	if _, err := cl.Handshake(ctx); err != nil {
		t.Fatalf("a standby refused API_VERSIONS: %v", err)
	}
	for _, key := range []messages.Key{messages.KeyCreateDatabase, messages.KeyListDatabases, messages.KeyGetMetadata, messages.KeyGetProducerOffsets} {
		r, err := cl.CallRaw(ctx, key, 0, []byte("w1"))
		if err != nil {
			t.Fatal(err)
		}
		fe, ok := flusserr.From(r.Err())
		if !ok || fe.Code != flusserr.NotCoordinatorLeader || fe.Message != NotLeaderMessage {
			t.Errorf("standby answered %d with %v, want 65", key, r.Err())
		}
	}
	lc, lctx := dial(t, leader.Addr())
	for _, body := range []string{"w1", "w2", "w1"} {
		r, err := lc.CallRaw(lctx, messages.KeyCreateDatabase, 0, []byte(body))
		if err != nil || r.Type != wire.ResponseSuccess || string(r.Body) != body {
			t.Fatalf("leader answered %q with %v %v", body, r, err)
		}
	}
	standby.SetStandby(false)
	if r, err := cl.CallRaw(ctx, messages.KeyCreateDatabase, 0, []byte("w3")); err != nil || r.Type != wire.ResponseSuccess {
		t.Fatalf("the former standby answered %v %v", r, err)
	}
	got := ledger.Applied()
	want := map[string]int{"w1": 2, "w2": 1, "w3": 1}
	if !maps.Equal(got, want) {
		t.Fatalf("ledger %v, want %v", got, want)
	}
}
