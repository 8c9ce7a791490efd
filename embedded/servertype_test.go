package embedded_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/strictclient"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// TestStrictClientBootstraps: a client that checks server types as
// fluss-go and Fluss's Java client do bootstraps against an embedded
// server, PLAINTEXT and SASL, on each of two listeners: GET_METADATA names
// the listener's coordinator endpoint and its tablet endpoint, each
// answers with its own type, the producer offsets keys are served by the
// coordinator and refused by the tablet server.
func TestStrictClientBootstraps(t *testing.T) {
	listeners := []config.Listener{{Name: "FLUSS", Host: "127.0.0.1"}, {Name: "CLIENT", Host: "127.0.0.1"}}
	for _, tt := range []struct {
		name string
		sec  func() embedded.Config
		opts strictclient.Options
	}{
		{name: "plaintext", sec: func() embedded.Config { return embedded.Config{Listeners: listeners} }},
		{name: "sasl", sec: func() embedded.Config {
			return embedded.Config{Listeners: listeners, Security: embedded.Users(map[string]string{"alice": "a-pw"}, "FLUSS", "CLIENT")}
		}, opts: strictclient.Options{User: "alice", Password: "a-pw"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, tt.sec())
			for i, l := range srv.Listeners() {
				tablet := srv.TabletListeners()[i]
				if tablet.Name != l.Name || tablet.Port == l.Port {
					t.Fatalf("listener %v has tablet endpoint %v", l, tablet)
				}
				cl, err := strictclient.Bootstrap(t.Context(), l.Address(), tt.opts)
				if err != nil {
					t.Fatalf("%s: %v", l.Name, err)
				}
				t.Cleanup(cl.Close)
				if cl.Coordinator.Addr != l.Address() || len(cl.Tablets) != 1 || cl.Tablets[0].Addr != tablet.Address() {
					t.Fatalf("%s: coordinator at %s, tablet servers %v; want %s and %s", l.Name, cl.Coordinator.Addr, cl.Metadata.GetTabletServers(), l.Address(), tablet.Address())
				}
				checkEndpoints(t, cl)
			}
			if srv.TabletAddr() != srv.TabletListeners()[0].Address() {
				t.Fatalf("TabletAddr %s, first tablet listener %v", srv.TabletAddr(), srv.TabletListeners()[0])
			}
		})
	}
}

// checkEndpoints: the coordinator lists and serves the producer offsets
// keys; the tablet server lists none of them and refuses each with
// UNSUPPORTED_VERSION naming the key and the coordinator.
func checkEndpoints(t *testing.T, cl *strictclient.Cluster) {
	t.Helper()
	co, ts := cl.Coordinator, cl.Tablets[0]
	for _, k := range []messages.Key{messages.KeyAPIVersions, messages.KeyGetMetadata, messages.KeyAuthenticate} {
		if !co.Serves(k) || !ts.Serves(k) {
			t.Fatalf("%v: listed by the coordinator %v, by the tablet server %v; want both", k, co.Serves(k), ts.Serves(k))
		}
	}
	req := &messages.GetProducerOffsetsRequest{ProducerId: proto.String("p")}
	if err := co.Call(t.Context(), messages.KeyGetProducerOffsets, 0, req, &messages.GetProducerOffsetsResponse{}); err != nil {
		t.Fatalf("GET on the coordinator: %v", err)
	}
	for _, k := range []messages.Key{messages.KeyRegisterProducerOffsets, messages.KeyGetProducerOffsets, messages.KeyDeleteProducerOffsets} {
		if !co.Serves(k) || ts.Serves(k) {
			t.Fatalf("%v: listed by the coordinator %v, by the tablet server %v", k, co.Serves(k), ts.Serves(k))
		}
		// The body is never read: the key is refused first.
		err := ts.Call(t.Context(), k, 0, req, &messages.GetProducerOffsetsResponse{})
		fe, ok := flusserr.From(err)
		if !ok || fe.Code != flusserr.UnsupportedVersion || !strings.Contains(fe.Message, k.Name()) || !strings.Contains(fe.Message, "served by the coordinator") {
			t.Fatalf("%v on the tablet server: %v", k, err)
		}
	}
	// The refusals leave the tablet connection up.
	var md messages.MetadataResponse
	if err := ts.Call(t.Context(), messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, &md); err != nil {
		t.Fatalf("GET_METADATA on the tablet server after the refusals: %v", err)
	}
	if !proto.Equal(&md, cl.Metadata) {
		t.Fatalf("the tablet server's GET_METADATA %v differs from the coordinator's %v", &md, cl.Metadata)
	}
}
