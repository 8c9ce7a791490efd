package app

import (
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

func TestCheckKeys(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want string // substring of the one warning; "" means no warning
	}{
		{"zookeeper.adress", `did you mean "zookeeper.address"`},
		{"coordinator.producer-offset.ttl", `did you mean "coordinator.producer-offsets.ttl"`},
		{"sidecar.log.levle", `did you mean "sidecar.log.level"`},
		{"Sidecar.mode", `did you mean "sidecar.mode"`},
		{"sidecar.max-conections", `did you mean "sidecar.max-connections"`},
		{"sidecar.frobnicate", `"sidecar.frobnicate" is not one the sidecar reads`},
		{"zookeeper.address", ""},
		{"security.sasl.listener.name.client.plain.jaas.config", ""},
		{"tablet-server.host", ""},
		{"data.dir", ""},
		{"remote.data.dirs", ""},
		{"remote.data.dirs.strategy", ""},
		{"remote.data.dirs.weights", ""},
		{"remote.data.dri", `did you mean "remote.data.dir"`},
		{"remote.data.dirs.weight", `did you mean "remote.data.dirs.weights"`},
	} {
		t.Run(tt.key, func(t *testing.T) {
			c := config.New()
			c.Set(tt.key, "x")
			got := CheckKeys(c)
			if tt.want == "" {
				if len(got) != 0 {
					t.Fatalf("warnings %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], tt.want) {
				t.Fatalf("warnings %q, want one containing %q", got, tt.want)
			}
		})
	}
}
