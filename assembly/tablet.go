package assembly

import (
	"fmt"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// TabletServerLabel is appended to a listener's name, after a slash, in the
// listener label of the tablet endpoint's connection metrics: FLUSS's tablet
// endpoint is counted as "FLUSS/tablet-server".
const TabletServerLabel = "tablet-server"

// Tablet configures the tablet-server endpoint: beside each coordinator
// listener, a second port that answers API_VERSIONS as a TABLET_SERVER and
// is the one alive tablet server GET_METADATA names. A Fluss client needs
// one at bootstrap, and checks that each node it connects to answers with
// the type GET_METADATA gave it, so the coordinator's own port cannot
// stand for it.
type Tablet struct {
	// Off runs no tablet endpoint and names no tablet server in
	// GET_METADATA: proxy mode, whose metadata comes from the upstream
	// coordinator.
	Off bool
	// Listeners are bound after the coordinator listeners, one per
	// coordinator listener and under the same names
	// (sidecar.tablet-server.listeners). Nil: each coordinator listener's
	// host on a free port the system picks.
	Listeners []config.Listener
	// Advertised are the addresses GET_METADATA names for the tablet
	// endpoint, by listener name (sidecar.tablet-server.advertised.listeners).
	// A listener without an entry announces the host its coordinator
	// listener announces when that one has an advertised entry, else its
	// bound host (a wildcard as for coordinator listeners), with the bound
	// tablet port.
	Advertised []config.Listener
}

// TabletListeners returns the tablet listeners for coordinator listeners:
// tablet, checked against them, or one per coordinator listener on its
// host with port 0 when tablet is empty.
func TabletListeners(coordinator, tablet []config.Listener) ([]config.Listener, error) {
	if len(tablet) == 0 {
		out := make([]config.Listener, len(coordinator))
		for i, l := range coordinator {
			out[i] = config.Listener{Name: l.Name, Host: l.Host}
		}
		return out, nil
	}
	if err := sameNames(coordinator, tablet); err != nil {
		return nil, err
	}
	// In the coordinator listeners' order, so that the first tablet
	// listener goes with the first coordinator listener.
	out := make([]config.Listener, 0, len(tablet))
	for _, c := range coordinator {
		for _, t := range tablet {
			if t.Name == c.Name {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// CheckTabletAdvertised reports an advertised tablet listener whose name no
// coordinator listener has.
func CheckTabletAdvertised(coordinator, advertised []config.Listener) error {
	var unknown []string
	for _, a := range advertised {
		if !hasName(coordinator, a.Name) {
			unknown = append(unknown, a.Name)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("no listener is named %s; the names are those of the coordinator listeners (%s)",
			strings.Join(unknown, ", "), names(coordinator))
	}
	return nil
}

// sameNames reports tablet listeners whose names are not exactly the
// coordinator listeners' names.
func sameNames(coordinator, tablet []config.Listener) error {
	var missing, unknown []string
	for _, c := range coordinator {
		if !hasName(tablet, c.Name) {
			missing = append(missing, c.Name)
		}
	}
	for _, t := range tablet {
		if !hasName(coordinator, t.Name) {
			unknown = append(unknown, t.Name)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "no tablet-server listener for "+strings.Join(missing, ", "))
	}
	if len(unknown) > 0 {
		parts = append(parts, "no coordinator listener named "+strings.Join(unknown, ", "))
	}
	if len(parts) > 0 {
		return fmt.Errorf("%s: each coordinator listener (%s) needs one tablet-server listener of the same name",
			strings.Join(parts, "; "), names(coordinator))
	}
	return nil
}

func hasName(ls []config.Listener, name string) bool {
	for _, l := range ls {
		if l.Name == name {
			return true
		}
	}
	return false
}

func names(ls []config.Listener) string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	return strings.Join(out, ", ")
}

// advertiseTablet pairs every bound tablet listener with its advertised
// address (see Tablet.Advertised). coordinatorAdvertised are the explicit
// advertised entries of the coordinator listeners.
func advertiseTablet(bound, advertised, coordinatorAdvertised []config.Listener, wildcard func(config.Listener) string) []config.Listener {
	explicit := make([]config.Listener, 0, len(bound))
	for _, b := range bound {
		for _, a := range advertised {
			if a.Name == b.Name {
				explicit = append(explicit, a)
			}
		}
		if hasName(advertised, b.Name) {
			continue
		}
		for _, c := range coordinatorAdvertised {
			if c.Name == b.Name && c.Host != "" && c.Host != "0.0.0.0" && c.Host != "::" {
				explicit = append(explicit, config.Listener{Name: b.Name, Host: c.Host, Port: b.Port})
			}
		}
	}
	return advertise(bound, explicit, wildcard)
}

// tabletObserver counts the tablet endpoint's connections under the
// listener label "<NAME>/tablet-server", so that each endpoint's
// connections (and its own max-connections limit) show apart.
type tabletObserver struct{ wire.Observer }

func tabletLabel(listener string) string { return listener + "/" + TabletServerLabel }

func (o tabletObserver) ConnAccepted(l string)        { o.Observer.ConnAccepted(tabletLabel(l)) }
func (o tabletObserver) ConnRefused(l, reason string) { o.Observer.ConnRefused(tabletLabel(l), reason) }
func (o tabletObserver) ConnClosed(l string)          { o.Observer.ConnClosed(tabletLabel(l)) }
func (o tabletObserver) RequestStarted(l string, h wire.RequestHeader, size int) {
	o.Observer.RequestStarted(tabletLabel(l), h, size)
}
func (o tabletObserver) RequestDone(l string, d wire.RequestDone) {
	o.Observer.RequestDone(tabletLabel(l), d)
}
