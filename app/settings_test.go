package app

import (
	"reflect"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// TestLimitsCarryEveryKey: every limit the assembly applies comes from its
// key, none is left at zero (a zero limit is wire's default, not the key).
func TestLimitsCarryEveryKey(t *testing.T) {
	s, err := FromConfig(baseConfig(map[string]string{KeyMaxConnections: "7"}))
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(s.Limits())
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("Limits.%s is not set from Settings", v.Type().Field(i).Name)
		}
	}
	if l := s.Limits(); l.MaxConns != 7 || l.MaxRunningPerConn != int(defaultInt(KeyMaxRunningPerConn)) {
		t.Errorf("limits %+v", l)
	}
}

// TestAcceptDelayDefaults: a shutdown keeps accepting for 5 s by default,
// long enough for Kubernetes to take the pod out of its endpoints; in
// embedded mode, which no load balancer fronts, for nothing unless set.
func TestAcceptDelayDefaults(t *testing.T) {
	embedded := func(kv map[string]string) *config.Config {
		c := config.New()
		c.Set(KeyEmbedded, "true")
		for k, v := range kv {
			c.Set(k, v)
		}
		return c
	}
	for _, tt := range []struct {
		name string
		cfg  *config.Config
		want time.Duration
	}{
		{"default", baseConfig(nil), 5 * time.Second},
		{"set", baseConfig(map[string]string{KeyAcceptDelay: "20 s"}), 20 * time.Second},
		{"none", baseConfig(map[string]string{KeyAcceptDelay: "0"}), 0},
		{"embedded default", embedded(nil), 0},
		{"embedded set", embedded(map[string]string{KeyAcceptDelay: "2 s"}), 2 * time.Second},
	} {
		s, err := FromConfig(tt.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if s.ShutdownAcceptDelay != tt.want {
			t.Errorf("%s: accept delay %v, want %v", tt.name, s.ShutdownAcceptDelay, tt.want)
		}
	}
}
