package app

import (
	"os"
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
