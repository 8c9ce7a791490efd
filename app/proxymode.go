package app

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/assembly"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// startUpstream returns where proxy mode forwards to: the configured
// address, or the active coordinator found in ZooKeeper and followed across
// leader changes for as long as ctx lives.
func (a *App) startUpstream(ctx context.Context, s Settings, zc *zk.Client, log hclog.Logger) (proxy.UpstreamSource, error) {
	if s.UpstreamAddress != "" {
		return proxy.StaticUpstream(s.UpstreamAddress), nil
	}
	disc, err := proxy.NewZKDiscovery(proxy.ZKDiscoveryConfig{ZK: zc, ListenerName: s.UpstreamListenerName, Logger: log})
	if err != nil {
		return nil, err
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := disc.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("coordinator discovery stopped", "error", err)
		}
	}()
	return disc, nil
}

// proxyListener returns the assembly's Adapt for proxy mode: every
// listener forwards what the sidecar does not serve to upstream. Before a
// listener serves, it learns the coordinator's API list, so that
// API_VERSIONS, answered without waiting on the coordinator, lists its
// keys; if the coordinator is down, it says so now and keeps trying for as
// long as runCtx lives. Each listener's proxy is reported to ops, for the
// metadata-bypass gauge and /readyz's warnings.
func (a *App) proxyListener(ctx, runCtx context.Context, s Settings, upstream proxy.UpstreamSource, log hclog.Logger) func(assembly.Listener, wire.ServerConfig) (wire.ServerConfig, error) {
	return func(l assembly.Listener, base wire.ServerConfig) (wire.ServerConfig, error) {
		cfg, p, err := proxyServerConfig(base, s, l.Sidecar, upstream, l.AllBound, l.Advertised, l.Protocol, log)
		if err != nil {
			return base, err
		}
		a.ops.watchProxy(p)
		wctx, wcancel := context.WithTimeout(ctx, proxy.DefaultConnectTimeout)
		werr := p.Warm(wctx)
		wcancel()
		if werr != nil {
			a.wg.Go(func() { p.KeepWarm(runCtx) })
		}
		return cfg, nil
	}
}

// proxyServerConfig turns one listener's server config into proxy mode: the
// sidecar's own APIs stay local, everything else goes upstream. On a SASL
// listener the upstream connection logs in as the client's own user, so the
// coordinator's authorization applies to what is forwarded.
func proxyServerConfig(base wire.ServerConfig, s Settings, sc *sidecar.Sidecar, upstream proxy.UpstreamSource,
	bound []config.Listener, advertised config.Listener, protocol string, log hclog.Logger) (wire.ServerConfig, *proxy.Proxy, error) {
	self := make([]string, 0, 2*len(bound))
	for _, l := range bound {
		self = append(self, l.Address())
	}
	self = append(self, advertised.Address())
	cfg := proxy.Config{
		Upstream:   upstream,
		Local:      sc.ProxyMux(),
		SelfAddrs:  self,
		Advertised: advertised.Address(),
		Logger:     log,
		MaxResends: s.MaxResends,
		// Validated positive.
		ResendTimeout: s.ResendTimeout,
	}
	if s.MaxResends == 0 {
		cfg.MaxResends = proxy.NoResends
	}
	if s.RewriteMetadata {
		cfg.RewriteMetadata = &proxy.RewriteRule{Host: advertised.Host, Port: int32(advertised.Port)}
	}
	if protocol == authz.ProtocolSASL {
		cfg.UpstreamCredentials = func(sess *wire.Session) (string, string, bool) {
			c, ok := authz.PlainCredentialsOf(sess)
			return c.User, c.Password, ok
		}
	}
	p, err := proxy.New(cfg)
	if err != nil {
		return base, nil, fmt.Errorf("proxy mode on listener %s: %w", base.ListenerName, err)
	}
	return p.ServerConfig(base), p, nil
}
