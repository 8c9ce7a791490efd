package proxy

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// bypassWatch is what the proxy last learnt from a forwarded GET_METADATA
// answer: the coordinator address it names, and whether that address is
// not this sidecar. A Fluss server answers GET_METADATA with the endpoints
// of the listener the request arrived on, so the answer tells which
// listener the proxy's upstream connections arrive on (docs/proxy.md,
// deployment (a)).
type bypassWatch struct {
	mu     sync.Mutex
	seen   bool
	coord  string
	bypass bool
}

// MetadataBypass reports the coordinator address named by the last
// GET_METADATA answer the proxy checked, and whether it is not this
// sidecar: then clients that refresh their metadata leave the sidecar and
// send the producer-offsets APIs to that address. The first GET_METADATA
// answer of each upstream connection is checked, none while
// Config.RewriteMetadata is set (the rewrite names the sidecar) or while
// the sidecar has no address of its own (SelfAddrs and Advertised empty):
// then, and before any check, it returns "" and false.
func (p *Proxy) MetadataBypass() (coordinator string, bypass bool) {
	p.bypass.mu.Lock()
	defer p.bypass.mu.Unlock()
	return p.bypass.coord, p.bypass.bypass
}

// checkMetadata reads the coordinator address of a forwarded GET_METADATA
// answer (body) and, when it differs from the last one checked, tells
// whether it is this sidecar: one WARN when it is not, one INFO when it is
// again. It runs once per upstream connection, on the ordinary path of
// forwarding, before the answer goes back; a host name is looked up only
// when the address differs from the last one checked, bounded by
// ConnectTimeout.
func (p *Proxy) checkMetadata(ctx context.Context, connID uint64, up *upstreamConn, body []byte) {
	if len(p.self.self) == 0 {
		return // no address of its own to compare with
	}
	coord, ok, err := MetadataCoordinator(body)
	if err != nil || !ok {
		p.log.Debug("the coordinator's GET_METADATA answer names no coordinator address; not checked", "conn", connID, "error", err)
		return
	}
	w := &p.bypass
	w.mu.Lock()
	same := w.seen && w.coord == coord
	w.mu.Unlock()
	if same {
		return
	}
	lctx, cancel := context.WithTimeout(ctx, p.cfg.ConnectTimeout)
	self := p.self.isSelf(lctx, coord)
	cut := lctx.Err() != nil
	cancel()
	if cut {
		return // the lookup may have been cut short: decide on a later answer
	}
	w.mu.Lock()
	if w.seen && w.coord == coord {
		w.mu.Unlock()
		return
	}
	was := w.bypass
	w.seen, w.coord, w.bypass = true, coord, !self
	w.mu.Unlock()
	switch {
	case !self:
		p.log.Warn(fmt.Sprintf("the coordinator's GET_METADATA answer names %s as coordinator, not this sidecar: "+
			"clients that refresh metadata will send producer-offsets requests to %s, not to this sidecar; see docs/proxy.md", coord, coord),
			"coordinator", coord, "sidecar", p.advertised(), "upstream", up.addr, "upstream_listener", p.upstreamListener(),
			"hint", "a Fluss server names the endpoints of the listener a request arrives on: forward to the coordinator "+
				"listener advertised as this sidecar (sidecar.upstream.address: its bind address), or set sidecar.proxy.rewrite-metadata: true")
	case was:
		p.log.Info("the coordinator's GET_METADATA answer names this sidecar as coordinator again",
			"coordinator", coord, "sidecar", p.advertised(), "upstream", up.addr)
	}
}

// advertised is the sidecar's own address for log lines: Config.Advertised,
// else the self addresses.
func (p *Proxy) advertised() string {
	if p.cfg.Advertised != "" {
		return p.cfg.Advertised
	}
	return strings.Join(p.cfg.SelfAddrs, ",")
}

// upstreamListener names the coordinator listener the upstream connections
// arrive on, as far as the configuration tells.
func (p *Proxy) upstreamListener() string {
	switch u := p.cfg.Upstream.(type) {
	case *ZKDiscovery:
		if u.listener == "" {
			return "the first listener the coordinator registered (sidecar.upstream.listener-name is empty)"
		}
		return u.listener + " (sidecar.upstream.listener-name)"
	case StaticUpstream:
		return "the one bound at " + string(u) + " (sidecar.upstream.address)"
	}
	return "unknown"
}
