// Package app assembles a running sidecar from Settings: the ZooKeeper
// client, the remote store, the registry, one wire server per listener and
// the periodic cleanup. The CLI and the end-to-end tests both start it.
package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/authz/tables"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/readindex"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/storage/counted"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// App is a running sidecar.
type App struct {
	log       hclog.Logger
	zk        *zk.Client
	files     *remote.Store
	registry  *producer.Registry
	cache     *snapcache.Cache
	authz     *authz.Authorizer
	tables    *tables.Map
	servers   []*wire.Server
	listeners []net.Listener
	addrs     []config.Listener
	emb       *embedded.Server // embedded mode (embedded.go)
	ops       *ops
	maxConns  int // each listener's connection limit

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Options are the parts of a running sidecar that tests replace.
type Options struct {
	Logger hclog.Logger
	// Now is the registry's clock; time.Now when nil.
	Now func() time.Time
	// FileLimit raises and reports the open-files limit when the settings
	// have not been through PrepareStart; RaiseFileLimit when nil.
	FileLimit func() FileLimit
}

// Start connects to ZooKeeper and remote storage, binds every listener and
// starts serving. It returns once the sidecar accepts connections.
func Start(ctx context.Context, s Settings, opts Options) (*App, error) {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if s.FileLimit == nil {
		raise := opts.FileLimit
		if raise == nil {
			raise = RaiseFileLimit
		}
		s.applyFileLimit(raise())
		log.Info("open files", "open_files", s.FileLimit.String(),
			"max_connections", s.MaxConnections, "max_connections_from", s.maxConnectionsNote())
	}
	if s.Embedded {
		return startEmbedded(ctx, s, opts, log)
	}
	a := &App{log: log, maxConns: s.MaxConnections}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()

	o, err := newOps(s, log)
	if err != nil {
		return nil, err
	}
	a.ops = o
	zc, err := zk.Connect(ctx, zk.Config{
		Address:           s.ZooKeeperAddress,
		Root:              s.ZooKeeperRoot,
		SessionTimeout:    s.ZooKeeperSessionTimeout,
		ConnectionTimeout: s.ZooKeeperConnectionTimeout,
		MaxBufferSize:     int(s.ZooKeeperMaxBufferSize),
		ServerMaxBuffer:   int(s.ZooKeeperServerMaxBuffer),
		Logger:            log,
		Observer:          o.zkObserver(),
	})
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper %s: %w", s.ZooKeeperAddress, err)
	}
	a.zk = zc
	ropts := s.RemoteOptions(log)
	ropts.Observer = o.remoteObserver()
	// No try of a storage call outlives a request: the SDKs have no
	// deadline of their own, and cleanup's calls have none either.
	ropts.AttemptTimeout = s.RequestTimeout
	files, err := remote.Open(ctx, s.RemoteDataDir, ropts)
	if err != nil {
		return nil, fmt.Errorf("open %s %s: %w", KeyRemoteDataDir, s.RemoteDataDir, err)
	}
	a.files = files
	if err := checkStorage(ctx, files, s.RemoteDataDir, s.StorageStartChecks, sleepContext, log); err != nil {
		return nil, err
	}
	zkSnapshots, remoteFiles := counted.Wrap(zkstore.New(zc), files, o.storageObserver())
	// The cache goes in front of the counted stores: the storage metrics
	// count what reaches ZooKeeper and remote storage.
	snapshots, fstore, err := a.stores(ctx, s.Cache, zc, zkSnapshots, remoteFiles, log)
	if err != nil {
		return nil, err
	}
	o.watchCache(a.cache)
	// Reads are made current by syncs on the session the cache watches,
	// sent through the counted store (not the cache's Sync, which drops
	// every entry): docs/cache.md.
	reads, err := readindex.New(readindex.Config{Sync: zkSnapshots.Sync, SyncTimeout: s.RequestTimeout})
	if err != nil {
		return nil, err
	}
	a.registry, err = producer.New(producer.Config{
		Reads:          reads,
		SequentialGets: s.ReadConsistency == ReadSequential,
		Snapshots:      snapshots,
		Files:          fstore,
		DefaultTTL:     s.ProducerOffsetsTTL,
		// A write outlives its request until its outcome is settled, for at
		// most one session timeout: by then ZooKeeper has either applied
		// it or expired the session that sent it.
		SettleTimeout: s.ZooKeeperSessionTimeout,
		Now:           opts.Now,
		Logger:        log,
	})
	if err != nil {
		return nil, err
	}

	// Bind first, so that port 0 listeners advertise the port they got.
	for _, l := range s.Listeners {
		ln, err := net.Listen("tcp", l.Address())
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", l.Name, err)
		}
		a.listeners = append(a.listeners, ln)
		bound := l
		bound.Port = ln.Addr().(*net.TCPAddr).Port
		a.addrs = append(a.addrs, bound)
	}
	advertised := advertisedListeners(a.addrs, s.AdvertisedListeners, log)
	sec := s.Security
	authn, err := authz.NewAuthenticator(authz.AuthConfig{Listeners: sec.Listeners, Timeout: sec.AuthTimeout, Logger: log})
	if err != nil {
		return nil, err
	}
	scfg := sidecar.Config{
		NodeID:               s.NodeID,
		Advertised:           advertised,
		Registry:             a.registry,
		RequestTimeout:       s.RequestTimeout,
		Logger:               log,
		Authenticator:        authn,
		RequireTableForEmpty: sec.RequireTableForEmpty,
	}
	if sec.AuthorizerEnabled {
		a.tables, err = tables.New(tables.Config{ZK: zc, Logger: log})
		if err == nil {
			err = a.tables.Start(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("load the table id map from ZooKeeper: %w", err)
		}
		a.authz, err = authz.NewAuthorizer(authz.AuthorizerConfig{
			ZK: zc, InternalListener: sec.InternalListener, SuperUsers: sec.SuperUsers,
			IgnoreCase: sec.IgnoreCase, Logger: log,
		})
		if err == nil {
			err = a.authz.Start(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("load ACLs from ZooKeeper: %w", err)
		}
		scfg.Authorizer, scfg.Tables = a.authz, a.tables
	}
	sc, err := sidecar.New(scfg)
	if err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	// One budget for every listener: request bytes in memory are bounded
	// server-wide, not per listener.
	budgetSize := s.MaxQueuedRequestBytes
	if budgetSize <= 0 {
		budgetSize = wire.DefaultRequestBudget
	}
	budget := wire.NewBudget(budgetSize)
	budget.SetOnDrained(largeRequest, giveMemoryBack(log))
	var upstream proxy.UpstreamSource
	if s.Mode == ModeProxy {
		upstream, err = a.startUpstream(runCtx, s, zc, log)
		if err != nil {
			return nil, err
		}
	}
	for i, ln := range a.listeners {
		base := wire.ServerConfig{
			Mux:                sc.Mux(),
			Logger:             log,
			MaxFrameSize:       int32(s.MaxRequestSize),
			MaxInFlightPerConn: s.MaxInFlightPerConn,
			MaxConns:           s.MaxConnections,
			MaxRunningPerConn:  s.MaxRunningPerConn,
			Budget:             budget,
			IdleTimeout:        s.IdleTimeout,
			DrainTimeout:       s.ShutdownDrainTimeout,
			ListenerName:       a.addrs[i].Name,
			Gate:               authn.Gate,
			OnConnect:          authn.OnConnect,
			Observer:           o.wireObserver(),
		}
		if upstream != nil {
			var p *proxy.Proxy
			base, p, err = proxyServerConfig(base, s, sc, upstream, a.addrs, advertised[i], authn.Protocol(a.addrs[i].Name), log)
			if err != nil {
				return nil, err
			}
			// Learn the coordinator's API list before serving, so that
			// API_VERSIONS, answered without waiting on the coordinator,
			// lists its keys; if it is down, say so now and keep trying.
			wctx, wcancel := context.WithTimeout(ctx, proxy.DefaultConnectTimeout)
			werr := p.Warm(wctx)
			wcancel()
			if werr != nil {
				a.wg.Add(1)
				go func() {
					defer a.wg.Done()
					p.KeepWarm(runCtx)
				}()
			}
		}
		srv := wire.NewServer(base)
		a.servers = append(a.servers, srv)
		a.wg.Add(1)
		go func(ln net.Listener) {
			defer a.wg.Done()
			if err := srv.Serve(runCtx, ln); err != nil && !errors.Is(err, wire.ErrServerClosed) && runCtx.Err() == nil {
				log.Error("listener stopped", "addr", ln.Addr().String(), "error", err)
			}
		}(ln)
		log.Info("serving", "listener", a.addrs[i].Name, "addr", ln.Addr().String(),
			"security_protocol", authn.Protocol(a.addrs[i].Name), "mode", s.Mode)
	}
	o.watch(zc, files, upstream, s.StorageCheckInterval)
	if err := a.startCleanup(runCtx, s, remoteFiles); err != nil {
		return nil, err
	}
	ok = true
	return a, nil
}

// advertisedListeners pairs every bound listener with its advertised
// address: the advertised.listeners entry of the same name, or the bound
// address itself. A wildcard bind address without an advertised entry is
// announced as this machine's host name, which clients elsewhere can reach
// (unlike a loopback address); set advertised.listeners to choose.
func advertisedListeners(bound, advertised []config.Listener, log hclog.Logger) []config.Listener {
	out := make([]config.Listener, 0, len(bound))
	for _, b := range bound {
		l := b
		for _, a := range advertised {
			if a.Name == b.Name {
				l = a
			}
		}
		if l.Host == "" || l.Host == "0.0.0.0" || l.Host == "::" {
			host, err := os.Hostname()
			if err != nil || host == "" {
				host = "localhost"
			}
			log.Warn("listener binds a wildcard address and has no "+KeyAdvertisedListeners+" entry; announcing the host name",
				"listener", l.Name, "host", host)
			l.Host = host
		}
		out = append(out, l)
	}
	return out
}

// Addr is the bound address of the first listener.
func (a *App) Addr() string { return a.addrs[0].Address() }

// Addrs are the bound listeners.
func (a *App) Addrs() []config.Listener { return append([]config.Listener(nil), a.addrs...) }

// MaxConnections is each listener's connection limit: sidecar.max-connections,
// or the limit derived from the open-files limit when it is not set.
func (a *App) MaxConnections() int { return a.maxConns }

// Registry is the running registry, for tests and maintenance.
func (a *App) Registry() *producer.Registry { return a.registry }

// Close stops accepting, drains in-flight requests and closes the stores.
// It is safe to call more than once.
func (a *App) Close() error {
	a.closeOnce.Do(func() {
		var errs []error
		if a.emb != nil {
			errs = append(errs, a.emb.Close())
		}
		for _, s := range a.servers {
			errs = append(errs, s.Close())
		}
		if a.servers == nil {
			for _, ln := range a.listeners {
				ln.Close()
			}
		}
		if a.cancel != nil {
			a.cancel()
		}
		a.wg.Wait()
		if a.registry != nil {
			// Writes that outlived their requests settle before the stores
			// close (bounded by their settle timeout).
			_ = a.registry.Wait(context.Background())
		}
		if a.authz != nil {
			a.authz.Close()
		}
		if a.tables != nil {
			a.tables.Close()
		}
		if a.cache != nil {
			a.cache.Close()
		}
		if a.ops != nil {
			a.ops.close()
		}
		if a.files != nil {
			errs = append(errs, a.files.Close())
		}
		if a.zk != nil {
			a.zk.Close()
		}
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}
