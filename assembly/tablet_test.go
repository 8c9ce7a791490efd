package assembly

import (
	"slices"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func TestTabletListeners(t *testing.T) {
	coord := []config.Listener{{Name: "FLUSS", Host: "127.0.0.1", Port: 9123}, {Name: "CLIENT", Host: "0.0.0.0", Port: 9125}}
	for _, tt := range []struct {
		name   string
		tablet []config.Listener
		want   []config.Listener
		err    string
	}{
		{name: "default: each listener's host, a free port", want: []config.Listener{{Name: "FLUSS", Host: "127.0.0.1"}, {Name: "CLIENT", Host: "0.0.0.0"}}},
		{name: "in the listeners' order",
			tablet: []config.Listener{{Name: "CLIENT", Host: "0.0.0.0", Port: 9126}, {Name: "FLUSS", Host: "127.0.0.1", Port: 9124}},
			want:   []config.Listener{{Name: "FLUSS", Host: "127.0.0.1", Port: 9124}, {Name: "CLIENT", Host: "0.0.0.0", Port: 9126}}},
		{name: "one missing", tablet: []config.Listener{{Name: "FLUSS", Port: 9124}},
			err: "no tablet-server listener for CLIENT: each coordinator listener (FLUSS, CLIENT) needs one"},
		{name: "an unknown name", tablet: []config.Listener{{Name: "FLUSS"}, {Name: "CLIENT"}, {Name: "OTHER"}},
			err: "no coordinator listener named OTHER"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := TabletListeners(coord, tt.tablet)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
	if err := CheckTabletAdvertised(coord, []config.Listener{{Name: "CLIENT", Host: "h", Port: 1}}); err != nil {
		t.Fatal(err)
	}
	if err := CheckTabletAdvertised(coord, []config.Listener{{Name: "X", Host: "h", Port: 1}}); err == nil {
		t.Fatal("an advertised tablet listener of no listener was accepted")
	}
}

// TestAdvertiseTablet: an explicit entry wins; else the listener's
// advertised host with the tablet's bound port; else the bound address,
// a wildcard as for listeners.
func TestAdvertiseTablet(t *testing.T) {
	bound := []config.Listener{{Name: "A", Host: "127.0.0.1", Port: 1}, {Name: "B", Host: "0.0.0.0", Port: 2}, {Name: "C", Host: "0.0.0.0", Port: 3}, {Name: "D", Host: "0.0.0.0", Port: 4}}
	tabletAdv := []config.Listener{{Name: "C", Host: "tablet.example", Port: 9124}}
	coordAdv := []config.Listener{{Name: "B", Host: "sidecar.example", Port: 9123}, {Name: "C", Host: "other.example", Port: 9123}, {Name: "D", Host: "0.0.0.0", Port: 9123}}
	got := advertiseTablet(bound, tabletAdv, coordAdv, func(config.Listener) string { return "wild" })
	want := []config.Listener{{Name: "A", Host: "127.0.0.1", Port: 1}, {Name: "B", Host: "sidecar.example", Port: 2},
		{Name: "C", Host: "tablet.example", Port: 9124}, {Name: "D", Host: "wild", Port: 4}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// labels records the listener labels an Observer is given.
type labels struct{ got []string }

func (l *labels) ConnAccepted(n string)                                { l.got = append(l.got, n) }
func (l *labels) ConnRefused(n, _ string)                              { l.got = append(l.got, n) }
func (l *labels) ConnClosed(n string)                                  { l.got = append(l.got, n) }
func (l *labels) RequestStarted(n string, _ wire.RequestHeader, _ int) { l.got = append(l.got, n) }
func (l *labels) RequestDone(n string, _ wire.RequestDone)             { l.got = append(l.got, n) }

func TestTabletObserverLabel(t *testing.T) {
	rec := &labels{}
	o := tabletObserver{rec}
	o.ConnAccepted("FLUSS")
	o.ConnRefused("FLUSS", "limit")
	o.ConnClosed("FLUSS")
	o.RequestStarted("FLUSS", wire.RequestHeader{}, 1)
	o.RequestDone("FLUSS", wire.RequestDone{})
	if len(rec.got) != 5 || slices.ContainsFunc(rec.got, func(s string) bool { return s != "FLUSS/tablet-server" }) {
		t.Fatalf("labels %v, want FLUSS/tablet-server for each", rec.got)
	}
}
