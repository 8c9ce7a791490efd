package app_test

import (
	"fmt"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// clusterHealth asks GET_CLUSTER_HEALTH on a fresh connection to addr.
func clusterHealth(t *testing.T, addr string) (*messages.GetClusterHealthResponse, error) {
	t.Helper()
	c := dialProxy(t, addr)
	var resp messages.GetClusterHealthResponse
	err := c.Call(t.Context(), messages.KeyGetClusterHealth, 0, &messages.GetClusterHealthRequest{}, &resp)
	return &resp, err
}

// TestClusterHealthFollowsZooKeeper: a standalone sidecar, with the
// Prometheus reporter off, answers GET_CLUSTER_HEALTH on both endpoints
// from the state /readyz reads: GREEN once ZooKeeper and remote storage
// answer, RED while ZooKeeper is down, GREEN again after it returns; the
// replica counts are 0 throughout.
func TestClusterHealthFollowsZooKeeper(t *testing.T) {
	srv := zktest.StartT(t)
	a := apptest.Start(t, srv.Addr, map[string]string{})
	endpoints := []string{a.Addr(), a.TabletAddrs()[0].Address()}
	waitStatus := func(want int32) {
		t.Helper()
		for _, addr := range endpoints {
			eventually.Nil(t, "GET_CLUSTER_HEALTH status", func() error {
				r, err := clusterHealth(t, addr)
				if err != nil {
					return err
				}
				if r.GetNumReplicas() != 0 || r.GetInSyncReplicas() != 0 || r.GetNumLeaderReplicas() != 0 || r.GetActiveLeaderReplicas() != 0 {
					t.Fatalf("replica counts %v, want 0", r)
				}
				if r.GetStatus() != want {
					return &statusError{got: r.GetStatus(), want: want}
				}
				return nil
			})
		}
	}
	waitStatus(0)
	srv.Stop()
	waitStatus(2)
	if err := srv.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitStatus(0)
}

type statusError struct{ got, want int32 }

func (e *statusError) Error() string { return fmt.Sprintf("status %d, want %d", e.got, e.want) }

// TestProxyForwardsClusterHealth: in proxy mode GET_CLUSTER_HEALTH is the
// coordinator's. Listed in API_VERSIONS exactly when the upstream lists it
// (a coordinator without it, as Fluss 0.9.1, gets no such request from a
// Java client), and answered by the upstream: here an embedded sidecar as
// coordinator, made to fail the next GET_CLUSTER_HEALTH with a code only it
// would send.
func TestProxyForwardsClusterHealth(t *testing.T) {
	fake, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	up, err := embedded.Start(t.Context(), embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	for _, tt := range []struct {
		name     string
		upstream string
		listed   bool
	}{
		{"upstream without 1062", fake.Addr(), false},
		{"upstream with 1062", up.Addr(), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := startProxyApp(t, zktest.UniqueRoot(), map[string]string{"sidecar.upstream.address": tt.upstream})
			// The merged list holds the upstream's keys once it was reached.
			eventually.Nil(t, "API_VERSIONS merged with the upstream's", func() error {
				c := dialProxy(t, a.Addr())
				av, err := c.Handshake(t.Context())
				if err != nil {
					return err
				}
				listed, upstreamKnown := false, false
				for _, v := range av.GetApiVersions() {
					listed = listed || v.GetApiKey() == int32(messages.KeyGetClusterHealth)
					upstreamKnown = upstreamKnown || v.GetApiKey() == int32(messages.KeyListDatabases) || v.GetApiKey() == int32(messages.KeyGetClusterHealth)
				}
				if !upstreamKnown && tt.upstream == fake.Addr() {
					return errString("the fake's keys are not merged yet")
				}
				if !tt.listed && upstreamKnown && listed {
					t.Fatal("API_VERSIONS lists GET_CLUSTER_HEALTH though the upstream does not")
				}
				if tt.listed && !listed {
					return errString("GET_CLUSTER_HEALTH not listed yet")
				}
				return nil
			})
			if !tt.listed {
				return
			}
			up.FailNext(messages.KeyGetClusterHealth, flusserr.Code(48), "from the upstream")
			_, err := clusterHealth(t, a.Addr())
			if fe, ok := flusserr.From(err); !ok || fe.Code != 48 || fe.Message != "from the upstream" {
				t.Fatalf("GET_CLUSTER_HEALTH through the proxy: %v, want the upstream's own error 48", err)
			}
			if r, err := clusterHealth(t, a.Addr()); err != nil || r.GetStatus() != 0 {
				t.Fatalf("GET_CLUSTER_HEALTH through the proxy: %v %v, want the upstream's GREEN", r, err)
			}
		})
	}
}

type errString string

func (e errString) Error() string { return string(e) }
