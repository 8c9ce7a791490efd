package metrics

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
)

// TestRegistryRequestsByClient: requests are counted by client software
// name, the first MaxClientNames names each with a series, any later name
// as "other", a connection without API_VERSIONS as "unknown": a client
// cannot grow the label set without bound.
func TestRegistryRequestsByClient(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg, buildinfo.Info{})
	if err != nil {
		t.Fatal(err)
	}
	m.RegistryRequest("register", "fluss", "CREATED")
	m.RegistryRequest("register", "fluss", "CREATED")
	m.RegistryRequest("delete", "", "DELETED")
	for i := 0; i < 3*MaxClientNames; i++ {
		m.RegistryRequest("get", fmt.Sprintf("client-%d", i), "FOUND")
	}
	for _, tt := range []struct {
		op, client, outcome string
		want                float64
	}{
		{"register", "fluss", "CREATED", 2},
		{"delete", "unknown", "DELETED", 1},
		{"get", "client-0", "FOUND", 1},
		{"get", fmt.Sprintf("client-%d", MaxClientNames-2), "FOUND", 1},
		// "fluss" took one of the names: the rest are "other".
		{"get", "other", "FOUND", float64(3*MaxClientNames - (MaxClientNames - 1))},
	} {
		if got := testutil.ToFloat64(m.registryRequests.WithLabelValues(tt.op, tt.client, tt.outcome)); got != tt.want {
			t.Errorf("%s %s %s = %v, want %v", tt.op, tt.client, tt.outcome, got, tt.want)
		}
	}
	if n := testutil.CollectAndCount(m.registryRequests); n > MaxClientNames+3 {
		t.Errorf("%d series, want at most %d", n, MaxClientNames+3)
	}
}
