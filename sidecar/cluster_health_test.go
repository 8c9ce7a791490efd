package sidecar_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// TestClusterHealthGolden pins GET_CLUSTER_HEALTH's answers on both
// endpoints, byte for byte: GREEN while the health check answers nil (or
// there is none), RED when it names something missing, UNKNOWN when it
// does not answer within the bound.
func TestClusterHealthGolden(t *testing.T) {
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	for _, tt := range []struct {
		name   string
		health sidecar.HealthFunc
		want   string
	}{
		{"no check", nil, "cluster_health_response_green"},
		{"stores answer", func(context.Context) error { return nil }, "cluster_health_response_green"},
		{"zookeeper away", func(context.Context) error { return errors.New("zookeeper: no connected session") }, "cluster_health_response_red"},
		// A check that ignores its context and never answers: the answer
		// does not wait for it.
		{"check hangs", func(context.Context) error { <-never; return nil }, "cluster_health_response_unknown"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := startSidecar(t, sidecarOpts{health: tt.health, requestTimeout: 50 * time.Millisecond})
			for _, addr := range []string{ts.addr, ts.tablet} {
				nc := rawConnTo(t, addr)
				nc.Write(golden(t, "cluster_health_request"))
				if got, want := nc.ReadFrame(), golden(t, tt.want); !bytes.Equal(got, want) {
					t.Fatalf("%s at %s:\n got % x\nwant % x", tt.name, addr, got, want)
				}
			}
		})
	}
}

// TestClusterHealthFlussLayout reads the answer as Fluss's
// GetClusterHealthResponse lays it out (docs/protocol.md §6): fields 1 to
// 5, each a required varint int32 (num_replicas, in_sync_replicas,
// num_leader_replicas, active_leader_replicas, status), each present once
// and nothing else; an absent required field would fail a Java client's
// parse.
func TestClusterHealthFlussLayout(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	c := ts.dial(t)
	var resp messages.GetClusterHealthResponse
	if err := c.Call(t.Context(), messages.KeyGetClusterHealth, 0, &messages.GetClusterHealthRequest{}, &resp); err != nil {
		t.Fatal(err)
	}
	body, err := proto.Marshal(&resp)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[protowire.Number]int{}
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		if n < 0 || typ != protowire.VarintType {
			t.Fatalf("field %d has wire type %d, want varint", num, typ)
		}
		body = body[n:]
		v, m := protowire.ConsumeVarint(body)
		if m < 0 {
			t.Fatalf("field %d: bad varint", num)
		}
		body = body[m:]
		seen[num]++
		want := uint64(0)
		if v != want {
			t.Errorf("field %d = %d, want %d (replica counts 0, status GREEN)", num, v, want)
		}
	}
	for num := protowire.Number(1); num <= 5; num++ {
		if seen[num] != 1 {
			t.Errorf("field %d present %d times, want once", num, seen[num])
		}
	}
	if len(seen) != 5 {
		t.Errorf("fields %v, want exactly 1 to 5", seen)
	}
}

// TestProxyMuxForwardsClusterHealth: proxy mode answers the registry's keys
// itself but leaves GET_CLUSTER_HEALTH to the coordinator.
func TestProxyMuxForwardsClusterHealth(t *testing.T) {
	sc := newBareSidecar(t)
	if _, ok := sc.Mux().Lookup(messages.KeyGetClusterHealth); !ok {
		t.Fatal("the coordinator endpoint does not serve GET_CLUSTER_HEALTH")
	}
	if _, ok := sc.ProxyMux().Lookup(messages.KeyGetClusterHealth); ok {
		t.Fatal("proxy mode would answer GET_CLUSTER_HEALTH itself instead of forwarding it")
	}
	for _, k := range sidecar.CoordinatorOnlyKeys() {
		if _, ok := sc.ProxyMux().Lookup(k); !ok {
			t.Errorf("proxy mode does not serve %s itself", k.Name())
		}
	}
}

func newBareSidecar(t testing.TB) *sidecar.Sidecar {
	t.Helper()
	mem := memstore.New(memstore.Options{})
	reg, err := producer.New(producer.Config{Snapshots: mem, Files: mem})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sidecar.New(sidecar.Config{
		Advertised: []config.Listener{{Name: "FLUSS", Host: "127.0.0.1", Port: 9123}},
		Registry:   reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// FuzzClusterHealthRequest: any body sent as a GET_CLUSTER_HEALTH request
// either fails to decode with an error or is answered with every required
// field of the response set; nothing panics.
func FuzzClusterHealthRequest(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x08, 0x01})
	f.Add([]byte{0x0b})
	f.Add([]byte{0x0a, 0x05, 'f', 'l', 'u', 's', 's'})
	sc := newBareSidecar(f)
	api, ok := sc.Mux().Lookup(messages.KeyGetClusterHealth)
	if !ok {
		f.Fatal("GET_CLUSTER_HEALTH is not served")
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req := api.NewRequest()
		if err := wire.DecodeBody(api, 0, body, req); err != nil {
			return
		}
		resp, err := api.Handle(context.Background(), &wire.Session{}, &wire.Request{Body: body, Msg: req})
		if err != nil {
			t.Fatalf("answered an error: %v", err)
		}
		b, err := proto.Marshal(resp)
		if err != nil {
			t.Fatalf("answer does not encode (a required field unset?): %v", err)
		}
		if !bytes.Equal(b, []byte{0x08, 0, 0x10, 0, 0x18, 0, 0x20, 0, 0x28, 0}) {
			t.Fatalf("answer % x", b)
		}
	})
}
