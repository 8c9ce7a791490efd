package app_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func startProxyApp(t *testing.T, root string, kv map[string]string) *app.App {
	t.Helper()
	kv["sidecar.mode"] = "proxy"
	kv["zookeeper.path.root"] = root
	return apptest.Start(t, sharedZK, kv)
}

func dialProxy(t *testing.T, addr string) *wire.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestProxyModeStaticUpstream: the configured sidecar forwards what it does
// not serve to the coordinator at sidecar.upstream.address and serves the
// producer offsets APIs itself.
func TestProxyModeStaticUpstream(t *testing.T) {
	fake, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	a := startProxyApp(t, zktest.UniqueRoot(), map[string]string{"sidecar.upstream.address": fake.Addr()})
	c := dialProxy(t, a.Addr())

	av, err := c.Handshake(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	keys := map[int32]bool{}
	for _, v := range av.GetApiVersions() {
		keys[v.GetApiKey()] = true
	}
	if !keys[1003] || !keys[1053] || !keys[1054] || !keys[1055] || av.GetServerType() != fakecoord.ServerTypeCoordinator {
		t.Fatalf("merged api versions %v, server_type %d", keys, av.GetServerType())
	}
	resp, err := c.CallRaw(t.Context(), messages.KeyListDatabases, 0, []byte{0x0a, 0x01, 'x'})
	if err != nil || resp.Type != wire.ResponseSuccess || !bytes.Equal(resp.Body, []byte{0x0a, 0x01, 'x'}) {
		t.Fatalf("forwarded request: %v %+v", err, resp)
	}
	reg := &messages.RegisterProducerOffsetsResponse{}
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("via-proxy"), TableOffsets: []*messages.PbProducerTableOffsets{
		{TableId: proto.Int64(1), BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(5)}}},
	}}
	if err := c.Call(t.Context(), 1053, 0, req, reg); err != nil || reg.GetResult() != 0 {
		t.Fatalf("local register: %v %v", err, reg)
	}
	if n := len(fake.RequestsFor(1053)); n != 0 {
		t.Fatalf("the coordinator saw %d producer-offsets requests; the sidecar must serve them", n)
	}
	if n := len(fake.RequestsFor(messages.KeyListDatabases)); n != 1 {
		t.Fatalf("the coordinator saw %d LIST_DATABASES, want 1", n)
	}
	md := &messages.MetadataResponse{}
	if err := c.Call(t.Context(), 1012, 0, &messages.MetadataRequest{}, md); err != nil {
		t.Fatal(err)
	}
	if md.GetCoordinatorServer().GetNodeId() != fake.NodeID() || md.GetCoordinatorServer().GetPort() != fake.Port() {
		t.Fatalf("metadata must come from the coordinator unchanged: %v", md.GetCoordinatorServer())
	}
}

// TestProxyModeDiscoverySASLAndRewrite: the upstream is found in ZooKeeper,
// the client logs in to the sidecar with PLAIN and the coordinator sees the
// same user, and GET_METADATA names the sidecar.
func TestProxyModeDiscoverySASLAndRewrite(t *testing.T) {
	zktest.SkipIfShort(t)
	fake, err := fakecoord.Start(fakecoord.Config{Users: map[string]string{"alice": "alice-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	root := zktest.UniqueRoot()
	conn, _, err := gozk.Connect([]string{sharedZK}, 10*time.Second, gozk.WithLogger(quietZK{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	acl := gozk.WorldACL(gozk.PermAll)
	conn.Create(root, nil, 0, acl)
	conn.Create(root+"/coordinators", nil, 0, acl)
	active := fmt.Sprintf(`{"version":2,"id":"1","listeners":"INTERNAL://127.0.0.1:1,CLIENT://%s"}`, fake.Addr())
	if _, err := conn.Create(root+"/coordinators/active", []byte(active), 0, acl); err != nil {
		t.Fatal(err)
	}
	a := startProxyApp(t, root, map[string]string{
		"sidecar.upstream.listener-name":   "CLIENT",
		"sidecar.proxy.rewrite-metadata":   "true",
		"security.protocol.map":            "FLUSS:SASL",
		"security.sasl.plain.jaas.config":  `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_alice="alice-pw";`,
		"security.sasl.enabled.mechanisms": "PLAIN",
	})
	c := dialProxy(t, a.Addr())
	if _, err := c.Handshake(t.Context()); err != nil {
		t.Fatal(err)
	}
	auth := &messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: []byte("\x00alice\x00alice-pw")}
	if err := c.Call(t.Context(), 1038, 0, auth, &messages.AuthenticateResponse{}); err != nil {
		t.Fatalf("login: %v", err)
	}
	if _, err := c.CallRaw(t.Context(), messages.KeyListDatabases, 0, nil); err != nil {
		t.Fatal(err)
	}
	reqs := fake.RequestsFor(messages.KeyListDatabases)
	if len(reqs) != 1 || reqs[0].Principal != "alice" {
		t.Fatalf("the coordinator must see the client's user: %+v", reqs)
	}
	md := &messages.MetadataResponse{}
	if err := c.Call(t.Context(), 1012, 0, &messages.MetadataRequest{}, md); err != nil {
		t.Fatal(err)
	}
	addr := a.Addrs()[0]
	if cs := md.GetCoordinatorServer(); cs.GetHost() != addr.Host || int(cs.GetPort()) != addr.Port || cs.GetNodeId() != fake.NodeID() {
		t.Fatalf("rewritten coordinator %v, want the sidecar at %s with the coordinator's node id", cs, addr.Address())
	}
}

func TestProxyModeSettings(t *testing.T) {
	c := config.New()
	c.Set("zookeeper.address", "127.0.0.1:1")
	c.Set("remote.data.dir", "/tmp/x")
	c.Set("sidecar.mode", "sideways")
	if _, err := app.FromConfig(c); err == nil {
		t.Fatal("an unknown sidecar.mode was accepted")
	}
}

type quietZK struct{}

func (quietZK) Printf(string, ...any) {}
