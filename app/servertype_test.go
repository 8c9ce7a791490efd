package app_test

import (
	"net"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/strictclient"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

const saslUsers = `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_alice="alice-pw";`

// TestStrictClientZooKeeperMode: a client that checks server types as
// fluss-go and Fluss's Java client do bootstraps against a ZooKeeper-backed
// sidecar, PLAINTEXT and SASL: GET_METADATA names the coordinator endpoint
// and the tablet endpoint, each answers with its own type, and the tablet
// endpoint refuses the producer offsets keys.
func TestStrictClientZooKeeperMode(t *testing.T) {
	for _, tt := range []struct {
		name string
		kv   map[string]string
		opts strictclient.Options
	}{
		{name: "plaintext", kv: map[string]string{}},
		{name: "sasl", kv: map[string]string{"security.protocol.map": "FLUSS:SASL", "security.sasl.plain.jaas.config": saslUsers},
			opts: strictclient.Options{User: "alice", Password: "alice-pw"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := apptest.Start(t, sharedZK, tt.kv)
			cl, err := strictclient.Bootstrap(t.Context(), a.Addr(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if cl.Coordinator.Addr != a.Addr() || len(cl.Tablets) != 1 || cl.Tablets[0].Addr != a.TabletAddrs()[0].Address() {
				t.Fatalf("coordinator at %s, tablet servers %v; want %s and %v", cl.Coordinator.Addr, cl.Metadata.GetTabletServers(), a.Addr(), a.TabletAddrs())
			}
			req := &messages.GetProducerOffsetsRequest{ProducerId: proto.String("p")}
			if err := cl.Coordinator.Call(t.Context(), messages.KeyGetProducerOffsets, 0, req, &messages.GetProducerOffsetsResponse{}); err != nil {
				t.Fatalf("GET on the coordinator: %v", err)
			}
			err = cl.Tablets[0].Call(t.Context(), messages.KeyGetProducerOffsets, 0, req, &messages.GetProducerOffsetsResponse{})
			if fe, ok := flusserr.From(err); !ok || fe.Code != flusserr.UnsupportedVersion || !strings.Contains(fe.Message, "served by the coordinator") {
				t.Fatalf("GET on the tablet server: %v", err)
			}
		})
	}
}

// TestStrictClientProxyMode: through a proxy-mode sidecar, GET_METADATA
// comes from the coordinator: the strict client reaches the coordinator
// (the sidecar itself with sidecar.proxy.rewrite-metadata) and the
// cluster's tablet server, each answering with its own type; API_VERSIONS
// passes the coordinator's type on.
func TestStrictClientProxyMode(t *testing.T) {
	for _, tt := range []struct {
		name    string
		rewrite bool
		users   map[string]string
		kv      map[string]string
		opts    strictclient.Options
	}{
		{name: "forwarded metadata", kv: map[string]string{}},
		{name: "rewritten metadata", rewrite: true, kv: map[string]string{"sidecar.proxy.rewrite-metadata": "true"}},
		{name: "sasl", rewrite: true, users: map[string]string{"alice": "alice-pw"},
			kv:   map[string]string{"sidecar.proxy.rewrite-metadata": "true", "security.protocol.map": "FLUSS:SASL", "security.sasl.plain.jaas.config": saslUsers},
			opts: strictclient.Options{User: "alice", Password: "alice-pw"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake, err := fakecoord.Start(fakecoord.Config{TabletServer: true, Users: tt.users})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			tt.kv["sidecar.upstream.address"] = fake.Addr()
			a := startProxyApp(t, zktest.UniqueRoot(), tt.kv)
			if len(a.TabletAddrs()) != 0 {
				t.Fatalf("proxy mode bound tablet endpoints %v", a.TabletAddrs())
			}
			cl, err := strictclient.Bootstrap(t.Context(), a.Addr(), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			wantCoord := fake.Addr()
			if tt.rewrite {
				wantCoord = a.Addr()
			}
			if cl.Coordinator.Addr != wantCoord || len(cl.Tablets) != 1 || cl.Tablets[0].Addr != fake.TabletAddr() {
				t.Fatalf("coordinator at %s, tablet servers %v; want %s and %s", cl.Coordinator.Addr, cl.Metadata.GetTabletServers(), wantCoord, fake.TabletAddr())
			}
		})
	}
}

// TestProxyModeServerTypeBeforeTheUpstream: while the coordinator has not
// been reached, API_VERSIONS still carries server_type, COORDINATOR.
func TestProxyModeServerTypeBeforeTheUpstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	a := startProxyApp(t, zktest.UniqueRoot(), map[string]string{"sidecar.upstream.address": closed})
	c, err := strictclient.Connect(t.Context(), a.Addr(), messages.ServerTypeCoordinator, strictclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Serves(messages.KeyRegisterProducerOffsets) {
		t.Fatalf("API_VERSIONS without the upstream lists %v", c.Versions.GetApiVersions())
	}
}

// TestMetricsTabletEndpoint: the tablet endpoint's connections are counted
// under the listener label FLUSS/tablet-server, not FLUSS, and a producer
// offsets request refused there under its key and code 2.
func TestMetricsTabletEndpoint(t *testing.T) {
	a := apptest.Start(t, sharedZK, reporterOn(map[string]string{}))
	c := dial(t, a.TabletAddrs()[0].Address())
	err := registerTTL(t.Context(), c, "on-the-tablet", 60000)
	if fe, ok := flusserr.From(err); !ok || fe.Code != flusserr.UnsupportedVersion {
		t.Fatalf("register on the tablet endpoint: %v", err)
	}
	c.Close()
	var fams map[string]*dto.MetricFamily
	eventually.True(t, "no open tablet-server connection", func() bool {
		fams = scrape(t, a)
		return value(fams, "fluss_sidecar_connection_open", "listener=FLUSS/tablet-server") == 0
	})
	for _, tt := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"fluss_sidecar_connection_acceptedTotal", []string{"listener=FLUSS/tablet-server"}, 1},
		{"fluss_sidecar_connection_open", []string{"listener=FLUSS/tablet-server"}, 0},
		{"fluss_sidecar_connection_acceptedTotal", []string{"listener=FLUSS"}, -1},
		{"fluss_sidecar_request_errorsTotal", []string{"request=registerProducerOffsets", "error_code=2"}, 1},
	} {
		if got := value(fams, tt.name, tt.labels...); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
}
