package app

import (
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

func baseConfig(kv map[string]string) *config.Config {
	c := config.New()
	c.Set(KeyZKAddress, "127.0.0.1:2181")
	c.Set(KeyRemoteDataDir, "file:///tmp/fluss-remote")
	for k, v := range kv {
		c.Set(k, v)
	}
	return c
}

// TestBadConfigurations: every value that parses but cannot work refuses
// the start with one line naming the key.
func TestBadConfigurations(t *testing.T) {
	for _, tt := range []struct {
		name string
		kv   map[string]string
		want string // substring of the one error line; "" means accepted
	}{
		{"defaults", nil, ""},
		{"negative ttl", map[string]string{KeyTTL: "-5s"}, "coordinator.producer-offsets.ttl must be positive, got -5s: every snapshot would be born expired"},
		{"zero ttl", map[string]string{KeyTTL: "0"}, "coordinator.producer-offsets.ttl must be positive"},
		{"negative max connections", map[string]string{KeyMaxConnections: "-1"}, "sidecar.max-connections must be at least 1, got -1"},
		{"zero max connections", map[string]string{KeyMaxConnections: "0"}, "sidecar.max-connections must be at least 1, got 0"},
		{"zero running per connection", map[string]string{KeyMaxRunningPerConn: "0"}, "sidecar.max-running-per-connection must be at least 1"},
		{"zero in-flight", map[string]string{KeyMaxInFlight: "0"}, "sidecar.max-inflight-per-connection must be at least 1"},
		{"unknown log level", map[string]string{KeyLogLevel: "verbose"}, `sidecar.log.level: "verbose" is not a log level (want one of trace, debug, info, warn, error)`},
		{"log level in capitals", map[string]string{KeyLogLevel: "DEBUG"}, ""},
		{"bad mode", map[string]string{KeyMode: "sideways"}, `sidecar.mode: "sideways" is neither "standalone" nor "proxy"`},
		{"negative session timeout", map[string]string{KeyZKSessionTimeout: "-1s"}, "zookeeper.client.session-timeout must be positive"},
		{"zero connection timeout", map[string]string{KeyZKConnTimeout: "0"}, "zookeeper.client.connection-timeout must be positive"},
		{"zero idle timeout", map[string]string{KeyIdleTimeout: "0 s"}, "netty.connection.max-idle-time must be positive"},
		{"negative request timeout", map[string]string{KeyRequestTimeout: "-1 s"}, "sidecar.request-timeout must be positive"},
		{"negative drain timeout", map[string]string{KeyDrainTimeout: "-1s"}, "sidecar.shutdown.drain-timeout must not be negative"},
		{"zero drain timeout is allowed", map[string]string{KeyDrainTimeout: "0"}, ""},
		{"negative accept delay", map[string]string{KeyAcceptDelay: "-1s"}, "sidecar.shutdown.accept-delay must not be negative"},
		{"zero accept delay is allowed", map[string]string{KeyAcceptDelay: "0"}, ""},
		{"negative orphan grace", map[string]string{KeyOrphanGrace: "-1h"}, "'sidecar.orphan-cleanup.grace-period' (-1h0m0s) must be at least twice"},
		{"budget below the frame limit", map[string]string{KeyMaxQueuedBytes: "1mb"}, "sidecar.max-queued-request-bytes (1048576 bytes) must be at least netty.server.max-request-size (104857600 bytes)"},
		{"budget and frame limit lowered together", map[string]string{KeyMaxQueuedBytes: "1mb", KeyMaxRequestSize: "1mb"}, ""},
		{"zero storage checks", map[string]string{KeyStorageStartChecks: "0"}, "sidecar.storage.start-check-attempts must be at least 1"},
		{"not a number", map[string]string{KeyMaxConnections: "many"}, `sidecar.max-connections: "many" is not an integer`},
		{"authorizer with only the internal listener", map[string]string{"authorizer.enabled": "true"},
			"authorizer.enabled is true but the only listener, FLUSS, is the internal listener (internal.listener.name=FLUSS), which skips authorization, so nothing would be enforced; add a client listener"},
		{"authorizer with a renamed internal listener", map[string]string{"authorizer.enabled": "true", KeyBindListeners: "CLIENT://127.0.0.1:9123", "internal.listener.name": "CLIENT"},
			"the only listener, CLIENT, is the internal listener"},
		{"authorizer with a client listener", map[string]string{"authorizer.enabled": "true",
			KeyBindListeners: "FLUSS://127.0.0.1:9123,CLIENT://127.0.0.1:9124"}, ""},
		{"tablet listeners of the same names", map[string]string{KeyBindListeners: "FLUSS://127.0.0.1:9123,CLIENT://127.0.0.1:9125",
			KeyTabletListeners: "CLIENT://127.0.0.1:9126,FLUSS://127.0.0.1:9124", KeyTabletAdvertised: "CLIENT://tablet.example:9126"}, ""},
		{"a tablet listener missing", map[string]string{KeyBindListeners: "FLUSS://127.0.0.1:9123,CLIENT://127.0.0.1:9125",
			KeyTabletListeners: "FLUSS://127.0.0.1:9124"},
			"sidecar.tablet-server.listeners: no tablet-server listener for CLIENT: each coordinator listener (FLUSS, CLIENT) needs one tablet-server listener of the same name (bind.listeners)"},
		{"a tablet listener of no listener", map[string]string{KeyTabletListeners: "FLUSS://127.0.0.1:9124,OTHER://127.0.0.1:9126"},
			"sidecar.tablet-server.listeners: no coordinator listener named OTHER: each coordinator listener (FLUSS) needs one tablet-server listener of the same name"},
		{"a tablet listener named twice", map[string]string{KeyTabletListeners: "FLUSS://127.0.0.1:9124,FLUSS://127.0.0.1:9126"},
			`sidecar.tablet-server.listeners: listener name "FLUSS" appears twice`},
		{"an advertised tablet listener of no listener", map[string]string{KeyTabletAdvertised: "OTHER://tablet.example:9124"},
			"sidecar.tablet-server.advertised.listeners: no listener is named OTHER; the names are those of the coordinator listeners (FLUSS)"},
		{"tablet listeners in proxy mode", map[string]string{KeyMode: "proxy", KeyUpstreamAddress: "127.0.0.1:9123", KeyTabletListeners: "FLUSS://127.0.0.1:9124"},
			"sidecar.tablet-server.listeners is set, but sidecar.mode: proxy has no tablet-server endpoint of its own"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromConfig(baseConfig(tt.kv))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want %q", tt.want)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q, want one line containing %q", msg, tt.want)
			}
		})
	}
}
