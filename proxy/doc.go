// Package proxy is the sidecar's proxy mode: it sits on a Fluss
// coordinator's client-facing address, answers the producer-offsets APIs
// (1053-1055) itself and streams every other request to the real
// coordinator, so unchanged clients get producer offsets from any cluster.
//
// # Behaviour
//
//   - One upstream connection per client connection, opened on the first
//     forwarded request (so on a SASL listener only after the client has
//     logged in). A failure to open it fails that request with
//     NETWORK_EXCEPTION and keeps the client connection, whose local APIs
//     still work; the next forwarded request tries again. Forwarded
//     requests are not decoded: the 8-byte header is parsed, the body is
//     copied as bytes, the request id is replaced by the upstream
//     connection's own counter, and the upstream's SUCCESS or ERROR answer
//     goes back byte-identical except for the request id, in whatever order
//     it arrives. Once the upstream connection is open (and logged in),
//     forwarding takes a fast path (the Try of Proxy.Forwarder): the
//     client connection's reader writes the request to the upstream socket
//     and the upstream reader writes the answer back, with no goroutine or
//     channel per request, batching what arrives together.
//   - API_VERSIONS (1000) is answered at once, without the upstream: its
//     last known list (from Warm, or any connection's handshake) merged
//     with the locally served keys (the local range wins) and its
//     server_type, or the local list alone while none is known. GET_METADATA (1012) is always forwarded, and rewritten
//     only when Config.RewriteMetadata is set (see RewriteMetadata).
//   - Without the rewrite, the first GET_METADATA answer of each upstream
//     connection is read for its coordinator_server (MetadataCoordinator;
//     until then GET_METADATA takes the ordinary path, later ones the fast
//     path unread). A Fluss server names the endpoints of the listener the
//     request arrived on, so an address that is not the sidecar's (SelfAddrs,
//     Advertised) means the upstream is the wrong listener and clients that
//     refresh their metadata leave the sidecar: one WARN per address, and
//     MetadataBypass reports it (the app's proxy_metadataBypass gauge).
//   - The first error on an open upstream connection (disconnect,
//     SERVER_FAILURE, a refused login) closes it;
//     every forwarded request in flight, and any forwarded later on that
//     client connection, is answered ERROR NETWORK_EXCEPTION (code 1,
//     retriable) with a message naming the cause (a refused login passes
//     the coordinator's own code on). The client connection is then closed
//     once all of its requests in flight, local ones included, have been
//     answered, so the client reconnects (to the current leader). When the
//     client connection closes, its upstream connection is closed.
//   - Local requests run on their own goroutines (wire.Server), so a slow
//     upstream never delays them.
//   - With Config.UpstreamCredentials, the upstream connection logs in with
//     SASL PLAIN as the client's user (after API_VERSIONS, before the first
//     forwarded request), so the coordinator's own authorization applies to
//     everything forwarded. Without it nothing is sent: PLAINTEXT passes
//     through.
//   - The upstream is a StaticUpstream (sidecar.upstream.address) or a
//     *ZKDiscovery following /coordinators/active and picking one listener
//     (sidecar.upstream.listener-name). It is asked when each upstream
//     connection opens: after a leader change new client connections go to
//     the new leader while existing ones keep theirs until it fails or
//     answers NOT_COORDINATOR_LEADER (see the next item). An
//     upstream that resolves to one of Config.SelfAddrs or Advertised is
//     refused. Discovery suits deployment (b) of docs/proxy.md only: the
//     listener it dials is advertised as the coordinator, whose metadata
//     then names itself.
//   - A forwarded request answered NOT_COORDINATOR_LEADER (65, raised
//     before any handler runs, so nothing was executed) is sent again
//     (failover.go): the active coordinator is read anew (ZKDiscovery's
//     Active, after a ZooKeeper sync), the client connection's upstream
//     moves there (logged in again on SASL listeners), and the requests
//     waiting for the move go out in arrival order. Bounded by
//     Config.MaxResends and ResendTimeout, after which the client gets
//     the 65 as it came; FailoverStats counts it all.
//
// # Plugging it in
//
//	p, err := proxy.New(proxy.Config{
//		// The coordinator's client listener, advertised as the sidecar
//		// (deployment (a)). Or, with RewriteMetadata (deployment (b)):
//		// a *ZKDiscovery from proxy.NewZKDiscovery, run with go disc.Run(ctx).
//		Upstream:   proxy.StaticUpstream("127.0.0.1:9124"),
//		Local:      sc.Mux(),                  // the sidecar's APIs; 1000 and 1012 in it are ignored
//		SelfAddrs:  []string{"0.0.0.0:9123"},  // bind
//		Advertised: "sidecar.example:9123",    // what clients bootstrap from
//		UpstreamCredentials: creds,            // only on a SASL listener; nil on PLAINTEXT
//		Logger:     log,
//	})
//	srv := wire.NewServer(p.ServerConfig(wire.ServerConfig{Gate: securityGate, ListenerName: "FLUSS", ...}))
//
// ServerConfig sets Mux (Local without GET_METADATA, plus the proxy's
// API_VERSIONS) and Forward (Proxy.Forwarder), and keeps the rest of the base
// config. The security layer stays in front: its Gate runs before
// forwarding (on the connection's reader goroutine, so it must not block),
// and its AUTHENTICATE handler must be in Local (on a SASL listener) so
// that the client authenticates against the sidecar; creds then returns
// that user's name and password from the session. The proxy relies on
// wire.Server passing the connection's context to handlers.
package proxy
