package assembly

import (
	"os"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

func TestAdvertise(t *testing.T) {
	host, _ := os.Hostname()
	bound := []config.Listener{{Name: "A", Host: "127.0.0.1", Port: 1}, {Name: "B", Host: "0.0.0.0", Port: 2}, {Name: "C", Host: "0.0.0.0", Port: 3}, {Name: "D", Host: "::", Port: 4}}
	adv := []config.Listener{{Name: "C", Host: "sidecar.example", Port: 9123}}
	for _, tt := range []struct {
		name     string
		wildcard func(config.Listener) string
		want     string // what B and D announce
	}{
		{"host name by default", nil, host},
		{"as the caller says", func(config.Listener) string { return "127.0.0.1" }, "127.0.0.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := advertise(bound, adv, tt.wildcard)
			want := []config.Listener{{Name: "A", Host: "127.0.0.1", Port: 1}, {Name: "B", Host: tt.want, Port: 2},
				{Name: "C", Host: "sidecar.example", Port: 9123}, {Name: "D", Host: tt.want, Port: 4}}
			if len(got) != len(want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("got %+v\nwant %+v", got, want)
				}
			}
		})
	}
}
