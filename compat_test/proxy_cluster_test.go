package compat_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The proxy in front of a real Fluss cluster whose coordinator lacks the
// registry (flusstest.Fluss070), in the two deployments of docs/proxy.md:
// (a) the coordinator advertises the sidecar for the client listener;
// (b) the sidecar rewrites GET_METADATA answers that pass through it.

// clientListener is the cluster's and the sidecar's client listener;
// proxyListener the cluster's listener for the sidecar alone, found through
// ZooKeeper in deployment "a-zk".
const (
	clientListener = "CLIENT"
	proxyListener  = "PROXY"
)

// proxyUsers are the SASL/PLAIN users of the secured rigs; admin is the
// cluster's super user, alice has no ACL.
var proxyUsers = map[string]string{"admin": "admin-secret", "alice": "alice-secret"}

// proxyRig is a real cluster with a proxy sidecar in front of it.
type proxyRig struct {
	cluster *flusstest.Cluster
	sidecar *app.App
	// addr is the sidecar's client address, the one clients bootstrap from.
	addr string
	sasl bool
	// zkAddr and kv start the sidecar again (restartSidecar), owner is
	// the test that started the rig.
	zkAddr string
	kv     map[string]string
	owner  testing.TB
}

// startProxyRig starts a cluster of release r and a proxy sidecar in the
// deployment, both on one ZooKeeper root, SASL/PLAIN on the client
// listener of both when sasl is set. Deployments: "a" and "b" of
// docs/proxy.md, the upstream a static address; "a-zk" is (a) with the
// upstream read from ZooKeeper, the coordinator's listener PROXY.
func startProxyRig(t *testing.T, r flusstest.Release, deployment string, sasl bool) *proxyRig {
	t.Helper()
	zk := zktest.StartT(t)
	port, err := zktest.FreePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg := flusstest.Config{
		Release:   r,
		ZooKeeper: zk.Addr,
		Root:      zktest.UniqueRoot(),
		Listeners: []flusstest.Listener{{Name: clientListener, SASL: sasl}},
	}
	if sasl {
		cfg.Users, cfg.SuperUsers = proxyUsers, []string{"admin"}
	}
	if deployment != "b" {
		cfg.CoordinatorAdvertised = map[string]string{clientListener: addr}
	}
	if deployment == "a-zk" {
		cfg.Listeners = append(cfg.Listeners, flusstest.Listener{Name: proxyListener, SASL: sasl})
	}
	c := flusstest.StartT(t, cfg)
	kv := map[string]string{
		app.KeyBindListeners:   clientListener + "://" + addr,
		app.KeyZKRoot:          cfg.Root,
		app.KeyMode:            "proxy",
		app.KeyUpstreamAddress: c.Coordinator.Endpoint(clientListener),
		// The operations endpoint, for the metadata-bypass gauge.
		app.KeyMetricsReporters: "prometheus",
		app.KeyPrometheusPort:   "0",
		app.KeyMetricsHost:      "127.0.0.1",
		// Fixed, so a restarted sidecar finds the offsets files again.
		app.KeyRemoteDataDir: "file://" + t.TempDir(),
	}
	switch deployment {
	case "b":
		kv[app.KeyRewriteMetadata] = "true"
	case "a-zk":
		delete(kv, app.KeyUpstreamAddress)
		kv[app.KeyUpstreamListenerName] = proxyListener
	}
	if sasl {
		kv["security.protocol.map"] = clientListener + ":SASL"
		kv["security.sasl.enabled.mechanisms"] = "PLAIN"
		kv["security.sasl.plain.jaas.config"] = `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";`
		kv["authorizer.enabled"] = "true"
		kv["super.users"] = "User:admin"
	}
	a := apptest.Start(t, zk.Addr, kv)
	return &proxyRig{cluster: c, sidecar: a, addr: addr, sasl: sasl, zkAddr: zk.Addr, kv: kv, owner: t}
}

// restartSidecar closes the sidecar (its address refuses connections)
// for down, then starts it again on the same address, ZooKeeper root and
// remote directory. The new sidecar lives until the rig's test ends, so a
// subtest may restart it.
func (r *proxyRig) restartSidecar(t *testing.T, down time.Duration) {
	t.Helper()
	if err := r.sidecar.Close(); err != nil {
		t.Logf("closing the sidecar: %v", err)
	}
	time.Sleep(down) // the sleep is under test: the outage itself, not a wait for a condition
	s, err := app.FromConfig(apptest.Config(t, r.zkAddr, r.kv))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	a, err := app.Start(ctx, s, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.owner.Cleanup(func() { a.Close() })
	r.sidecar = a
}

// dialAs opens a client connection to addr, logged in as user when the
// rig is secured.
func (r *proxyRig) dialAs(t *testing.T, addr, user string) *wire.Client {
	t.Helper()
	ctx := t.Context()
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	if r.sasl {
		resp := &messages.AuthenticateResponse{}
		token := []byte("\x00" + user + "\x00" + proxyUsers[user])
		if err := c.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: token}, resp); err != nil {
			t.Fatalf("login %s at %s: %v", user, addr, err)
		}
	}
	return c
}

// metadataCoordinator asks addr for GET_METADATA and returns the
// coordinator and the tablet servers it names, as "host:port".
func metadataCoordinator(ctx context.Context, c *wire.Client) (string, []string, error) {
	md := &messages.MetadataResponse{}
	if err := c.Call(ctx, messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, md); err != nil {
		return "", nil, err
	}
	var tablets []string
	for _, ts := range md.GetTabletServers() {
		tablets = append(tablets, net.JoinHostPort(ts.GetHost(), strconv.Itoa(int(ts.GetPort()))))
	}
	cs := md.GetCoordinatorServer()
	return net.JoinHostPort(cs.GetHost(), strconv.Itoa(int(cs.GetPort()))), tablets, nil
}

// bypassGauge scrapes fluss_sidecar_proxy_metadataBypass from the sidecar.
func (r *proxyRig) bypassGauge(t *testing.T) float64 {
	t.Helper()
	code, body := apptest.HTTPGet(t, "http://"+r.sidecar.MetricsAddr()+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics answered %d", code)
	}
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, "fluss_sidecar_proxy_metadataBypass "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatalf("metadataBypass %q: %v", v, err)
			}
			return f
		}
	}
	t.Fatal("the sidecar exports no fluss_sidecar_proxy_metadataBypass")
	return 0
}

// offsetsRoundTrip registers a snapshot of id through c, reads it back and
// deletes it, and fails the test on any difference.
func offsetsRoundTrip(t *testing.T, c *wire.Client, id string) {
	t.Helper()
	if err := roundTripErr(t.Context(), c, id); err != nil {
		t.Fatal(err)
	}
}

func firstTable(r *messages.GetProducerOffsetsResponse) *messages.PbProducerTableOffsets {
	if len(r.GetTableOffsets()) != 1 {
		return nil
	}
	return r.GetTableOffsets()[0]
}

// TestProxyRealClusterRouting: where GET_METADATA sends a client in each
// deployment, asked through the sidecar and asked of a tablet server (the
// refresh a Fluss client makes later), and whether producer-offsets calls
// then reach a server that serves them; and whether the sidecar reports
// the answer it forwarded as sending clients around it (only in "a-zk":
// "b" rewrites, so it is not checked).
func TestProxyRealClusterRouting(t *testing.T) {
	for _, deployment := range []string{"a", "b", "a-zk"} {
		t.Run(deployment, func(t *testing.T) {
			r := startProxyRig(t, flusstest.Fluss070, deployment, false)
			ctx := t.Context()
			viaSidecar := r.dialAs(t, r.addr, "")
			coord, tablets, err := metadataCoordinator(ctx, viaSidecar)
			if err != nil {
				t.Fatal(err)
			}
			wantBypass := 0.0
			if deployment == "a-zk" {
				wantBypass = 1
			}
			if got := r.bypassGauge(t); got != wantBypass {
				t.Errorf("fluss_sidecar_proxy_metadataBypass %v after GET_METADATA naming %s, want %v", got, coord, wantBypass)
			}
			if deployment == "a-zk" {
				// Fluss answers GET_METADATA with the endpoints of the
				// listener the request came in on: the sidecar's upstream
				// connection arrives on PROXY, so the client is sent to
				// the coordinator's and the tablet servers' PROXY
				// endpoints, around the sidecar.
				wantCoord := r.cluster.Coordinator.Endpoint(proxyListener)
				wantTablet := r.cluster.Tablets[0].Endpoint(proxyListener)
				if coord != wantCoord || len(tablets) != 1 || tablets[0] != wantTablet {
					t.Fatalf("(a) through a PROXY listener: GET_METADATA names coordinator %s and tablet servers %v, measured before: %s and [%s]", coord, tablets, wantCoord, wantTablet)
				}
				t.Logf("(a) with the upstream found in ZooKeeper on listener PROXY: clients are sent to %s, the real coordinator", coord)
				return
			}
			if coord != r.addr {
				t.Errorf("GET_METADATA through the sidecar names coordinator %s, want the sidecar %s", coord, r.addr)
			}
			if want := r.cluster.Tablets[0].Endpoint(clientListener); len(tablets) != 1 || tablets[0] != want {
				t.Errorf("GET_METADATA through the sidecar names tablet servers %v, want [%s]", tablets, want)
			}
			offsetsRoundTrip(t, viaSidecar, "route-"+deployment)

			// The refresh: a tablet server's own answer.
			// A tablet server names a coordinator once the coordinator
			// has sent it the cluster's metadata.
			viaTablet := r.dialAs(t, r.cluster.Tablets[0].Endpoint(clientListener), "")
			var refreshed string
			eventually.Nil(t, "a tablet server naming a coordinator", func() error {
				var err error
				refreshed, _, err = metadataCoordinator(ctx, viaTablet)
				if err == nil && refreshed == ":0" {
					err = errors.New("no coordinator in the tablet server's GET_METADATA")
				}
				return err
			})
			real := r.cluster.Coordinator.Endpoint(clientListener)
			switch deployment {
			case "a", "a-zk":
				if refreshed != r.addr {
					t.Fatalf("(a) a tablet server names coordinator %s, want the sidecar %s", refreshed, r.addr)
				}
				// Producer-offsets calls keep reaching the sidecar.
				offsetsRoundTrip(t, r.dialAs(t, refreshed, ""), "route-a-refreshed")
			case "b":
				if refreshed != real {
					t.Fatalf("(b) a tablet server names coordinator %s, want the real one %s", refreshed, real)
				}
				// A client that follows it sends 1053 to a coordinator
				// without the registry.
				// Fluss 0.7.0 never answers an api key it does not know:
				// the call waits until its own deadline (and a Java
				// client, which has no request timeout, waits for ever).
				bounded, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				cl := r.dialAs(t, refreshed, "")
				err := cl.Call(bounded, messages.KeyGetProducerOffsets, 0,
					&messages.GetProducerOffsetsRequest{ProducerId: proto.String("route-b")}, &messages.GetProducerOffsetsResponse{})
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("(b) GET_PRODUCER_OFFSETS at the real 0.7.0 coordinator: %v, want no answer", err)
				}
				t.Logf("(b) after a refresh from a tablet server, GET_PRODUCER_OFFSETS goes to %s, which never answers", real)
			}
		})
	}
}

// TestProxyRealClusterCoordinatorRestart: while the real coordinator
// restarts, producer-offsets calls through the sidecar keep working,
// forwarded requests fail retriably (NETWORK_EXCEPTION), and forwarding
// recovers once the coordinator is back.
func TestProxyRealClusterCoordinatorRestart(t *testing.T) {
	r := startProxyRig(t, flusstest.Fluss070, "a", false)
	ctx := t.Context()
	c := r.dialAs(t, r.addr, "")
	if _, err := c.CallRaw(ctx, messages.KeyListDatabases, 0, nil); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	done := make(chan error, 1)
	var calls int
	go func() {
		// One producer-offsets round trip after another while the
		// coordinator is down and back; each must succeed.
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			cl, err := wire.Dial(ctx, r.addr, wire.ClientOptions{})
			if err == nil {
				_, err = cl.Handshake(ctx)
			}
			if err == nil {
				err = roundTripErr(ctx, cl, fmt.Sprintf("restart-%d", i))
				cl.Close()
			}
			if err != nil {
				done <- fmt.Errorf("producer-offsets round trip %d during the restart: %w", i, err)
				return
			}
			calls++
		}
	}()

	r.cluster.Coordinator.Stop()
	// The connection whose upstream connection broke is closed, so the
	// client reconnects (a Fluss client retries on a lost connection).
	select {
	case <-c.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the client connection stayed open after its coordinator stopped")
	}
	// A new connection's forwarded request is answered at once,
	// retriably, while the coordinator is down.
	down := r.dialAs(t, r.addr, "")
	resp, err := down.CallRaw(ctx, messages.KeyListDatabases, 0, nil)
	if err == nil {
		err = resp.Err()
	}
	var fe *flusserr.Error
	if !errors.As(err, &fe) || fe.Code != flusserr.NetworkException {
		t.Fatalf("LIST_DATABASES with the coordinator down: %v, want NETWORK_EXCEPTION", err)
	}
	if err := r.cluster.Restart(ctx, r.cluster.Coordinator); err != nil {
		t.Fatal(err)
	}
	// The client reconnects, as a Fluss client does after a retriable error.
	eventually.Nil(t, "a forwarded request after the coordinator restarted", func() error {
		cl, err := wire.Dial(ctx, r.addr, wire.ClientOptions{})
		if err != nil {
			return err
		}
		defer cl.Close()
		resp, err := cl.CallRaw(ctx, messages.KeyListDatabases, 0, nil)
		if err != nil {
			return err
		}
		return resp.Err()
	})
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if calls == 0 {
		t.Fatal("no producer-offsets call ran during the restart")
	}
	t.Logf("%d producer-offsets round trips through the sidecar during the coordinator's restart", calls)
}

// roundTripErr registers a snapshot of id through c (want CREATED), reads
// it back (want the registered offsets) and deletes it, and returns the
// first error or difference.
func roundTripErr(ctx context.Context, c *wire.Client, id string) error {
	reg := &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String(id),
		TtlMs:      proto.Int64(60_000),
		TableOffsets: []*messages.PbProducerTableOffsets{{
			TableId: proto.Int64(7),
			BucketOffsets: []*messages.PbBucketOffset{
				{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(100)},
				{BucketId: proto.Int32(1), LogEndOffset: proto.Int64(42)},
			},
		}},
	}
	rr := &messages.RegisterProducerOffsetsResponse{}
	if err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, reg, rr); err != nil {
		return fmt.Errorf("register %s: %w", id, err)
	}
	if rr.GetResult() != 0 {
		return fmt.Errorf("register %s: result %d, want 0 (CREATED)", id, rr.GetResult())
	}
	got := &messages.GetProducerOffsetsResponse{}
	if err := c.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, got); err != nil {
		return fmt.Errorf("get %s: %w", id, err)
	}
	// Bucket 1 first: the order of a coordinator's Java HashMap
	// (docs/storage-format.md §7.3), which the sidecar answers in.
	want := &messages.PbProducerTableOffsets{TableId: proto.Int64(7), BucketOffsets: []*messages.PbBucketOffset{
		reg.TableOffsets[0].BucketOffsets[1], reg.TableOffsets[0].BucketOffsets[0]}}
	if !proto.Equal(want, firstTable(got)) {
		return fmt.Errorf("get %s: %v, want the registered offsets %v", id, got, want)
	}
	if err := c.Call(ctx, messages.KeyDeleteProducerOffsets, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, &messages.DeleteProducerOffsetsResponse{}); err != nil {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return nil
}

// TestProxyRealClusterJavaClient: Fluss's released 0.9.1 Java client,
// unchanged, bootstraps through the sidecar in front of a real 0.7.0
// cluster, does table work (database, log table, rows written and read
// back, listings) and the producer-offsets calls, all through the sidecar;
// then writes rows (the writer asks a tablet server for the table's
// metadata) and calls the registry again.
func TestProxyRealClusterJavaClient(t *testing.T) {
	client := buildFlussClient(t)
	for _, tc := range []struct {
		deployment string
		sasl       bool
	}{{"a", false}, {"a", true}, {"b", false}} {
		name := "deployment-" + tc.deployment
		if tc.sasl {
			name += "-sasl"
		}
		t.Run(name, func(t *testing.T) {
			r := startProxyRig(t, flusstest.Fluss070, tc.deployment, tc.sasl)
			user := ""
			if tc.sasl {
				user = "admin"
			}
			run := client.run(t, r.addr, user, "--id-suffix", "p"+tc.deployment, "tables", "offsets", "refresh")
			// In (b) as in (a), every step passes through the sidecar,
			// the registry calls after the rows were written included:
			// measured, this client kept the rewritten coordinator
			// (docs/proxy.md, deployment (b)).
			if !run.passed {
				t.Fatalf("the Java client failed through the sidecar in deployment (%s):\n%s\n%s", tc.deployment, run.stdout, run.stderr)
			}
			for _, step := range []string{"tables.read", "offsets.register", "offsets.get", "refresh.write", "refresh.get-after-write", "refresh.register-after-write"} {
				if l := run.line(step); !strings.HasPrefix(l, "PASS ") {
					t.Errorf("step %s: %q, want PASS", step, l)
				}
			}
		})
	}
}

// TestProxyRealClusterACLs: on a SASL cluster the proxy logs in upstream
// as the client's user, so the coordinator's own authorization decides
// what is forwarded: alice, without ACLs, may not create a database.
func TestProxyRealClusterACLs(t *testing.T) {
	client := buildFlussClient(t)
	r := startProxyRig(t, flusstest.Fluss070, "a", true)
	run := client.run(t, r.addr, "alice", "--id-suffix", "acl", "tables")
	if l := run.line("tables.create-database"); !strings.HasPrefix(l, "FAIL ") || !strings.Contains(l, "Authorization") {
		t.Fatalf("alice's CREATE_DATABASE through the sidecar: %q, want the coordinator's authorization error\n%s", l, run.stdout)
	}
	if wrong := client.run(t, r.addr, "alice", "--password", "wrong", "ping"); wrong.passed {
		t.Fatalf("a wrong password logged in through the sidecar:\n%s", wrong.stdout)
	}
}
