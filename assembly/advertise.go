package assembly

import (
	"os"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// advertise pairs every bound listener with its advertised address: the
// advertised entry of the same name, or the bound address itself. A
// wildcard address without an advertised entry is announced as wildcard
// says, or as this machine's host name when wildcard is nil.
func advertise(bound, advertised []config.Listener, wildcard func(config.Listener) string) []config.Listener {
	if wildcard == nil {
		wildcard = func(config.Listener) string { return HostName() }
	}
	out := make([]config.Listener, 0, len(bound))
	for _, b := range bound {
		l := b
		for _, a := range advertised {
			if a.Name == b.Name {
				l = a
			}
		}
		if l.Host == "" || l.Host == "0.0.0.0" || l.Host == "::" {
			l.Host = wildcard(l)
		}
		out = append(out, l)
	}
	return out
}

// HostName is this machine's host name, or "localhost" when it has none.
func HostName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "localhost"
	}
	return host
}
