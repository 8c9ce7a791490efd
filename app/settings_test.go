package app

import (
	"os"
	"reflect"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

func TestAdvertisedListeners(t *testing.T) {
	host, _ := os.Hostname()
	bound := []config.Listener{{Name: "A", Host: "127.0.0.1", Port: 1}, {Name: "B", Host: "0.0.0.0", Port: 2}, {Name: "C", Host: "0.0.0.0", Port: 3}}
	adv := []config.Listener{{Name: "C", Host: "sidecar.example", Port: 9123}}
	got := advertisedListeners(bound, adv, hclog.NewNullLogger())
	want := []config.Listener{{Name: "A", Host: "127.0.0.1", Port: 1}, {Name: "B", Host: host, Port: 2}, {Name: "C", Host: "sidecar.example", Port: 9123}}
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

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
