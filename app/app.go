// Package app starts a running sidecar from Fluss configuration: it reads
// Settings through the configuration table (configkeys.go), builds the
// ZooKeeper client, the remote store, the registry and the authorizer, and
// hands them to the assembly (package assembly), which binds the
// listeners, serves and runs the cleanup; in embedded mode it hands the
// same settings to package embedded, which uses the same assembly. The CLI
// and the end-to-end tests both start it.
package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/assembly"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/authz/tables"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/readindex"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/counted"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// App is a running sidecar.
type App struct {
	log      hclog.Logger
	zk       *zk.Client
	files    *remotestore.Store
	registry *producer.Registry
	cache    *snapcache.Cache
	authz    *authz.Authorizer
	tables   *tables.Map
	serving  *assembly.Assembly // listeners, wire servers, cleanup
	addrs    []config.Listener
	emb      *embedded.Server   // embedded mode (embedded.go)
	control  *controlapi.Server // embedded mode's control API, or nil
	ops      *ops
	maxConns int // each listener's connection limit
	// tabletAddrs are the tablet-server listeners.
	tabletAddrs []config.Listener
	// acceptDelay is sidecar.shutdown.accept-delay (Shutdown).
	acceptDelay  time.Duration
	drainTimeout time.Duration // for the log line only

	// cancel stops what runs beside the assembly (proxy mode's coordinator
	// discovery and warming); it is cancelled after the assembly has
	// drained, since forwarded requests need the upstream until then.
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
	a := &App{log: log, maxConns: s.MaxConnections, acceptDelay: s.ShutdownAcceptDelay, drainTimeout: s.ShutdownDrainTimeout}
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
	logZooKeeperSecurity(log, s.ZooKeeper)
	zcfg := s.ZooKeeperConfig(log)
	zcfg.Observer = o.zkObserver()
	zc, err := zk.Connect(ctx, zcfg)
	if err != nil {
		return nil, fmt.Errorf("connect to ZooKeeper %s: %w", s.ZooKeeperAddress, err)
	}
	a.zk = zc
	ropts := s.RemoteOptions(log)
	ropts.Observer = o.remoteObserver()
	// No try of a storage call outlives a request: the SDKs have no
	// deadline of their own, and cleanup's calls have none either.
	ropts.AttemptTimeout = s.RequestTimeout
	files, err := remotestore.Open(ctx, s.RemoteDataDir, ropts)
	if err != nil {
		return nil, fmt.Errorf("open %s %s: %w", s.RemoteDataDirKey, s.RemoteDataDir, err)
	}
	a.files = files
	if err := remote.CheckAtStart(ctx, files, s.RemoteDataDir, s.StorageStartChecks, log); err != nil {
		return nil, err
	}
	// Each backend behind the portable layer, which checks what every store
	// must (storage.CheckedSnapshots); the counts beneath the cache.
	zkSnapshots, remoteFiles := counted.Wrap(storage.CheckedSnapshots(zkstore.New(zc)), storage.CheckedFilesAndOrphans(files), o.storageObserver())
	// The cache goes in front of the counted stores: the storage metrics
	// count what reaches ZooKeeper and remote storage.
	snapshots, fstore, err := a.stores(ctx, s.Cache, zc, zkSnapshots, remoteFiles, log)
	if err != nil {
		return nil, err
	}
	o.watchCache(a.cache)
	// Reads are made current by syncs on the session the cache watches,
	// sent straight to the counted store (the cache's Sync would only pass
	// them through; it keeps its entries): docs/cache.md.
	reads, err := readindex.New(readindex.Config{Sync: zkSnapshots.Sync, SyncTimeout: s.RequestTimeout})
	if err != nil {
		return nil, err
	}
	a.registry, err = producer.New(producer.Config{
		Reads:          reads,
		SequentialGets: s.ReadConsistency == ReadSequential,
		Snapshots:      snapshots,
		Files:          fstore,
		FastPaths:      storage.FastPathsOf(snapshots, fstore),
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

	sec := s.Security
	var authorizer sidecar.Authorizer
	var tableNames sidecar.TableResolver
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
		authorizer, tableNames = a.authz, a.tables
	}

	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	var upstream proxy.UpstreamSource
	var adapt func(assembly.Listener, wire.ServerConfig) (wire.ServerConfig, error)
	if s.Mode == ModeProxy {
		upstream, err = a.startUpstream(runCtx, s, zc, log)
		if err != nil {
			return nil, err
		}
		adapt = a.proxyListener(ctx, runCtx, s, upstream, log)
	}
	a.serving, err = assembly.Start(ctx, assembly.Config{
		Listeners:        s.Listeners,
		Advertised:       s.AdvertisedListeners,
		AnnounceWildcard: announceHostName(log),
		Tablet: assembly.Tablet{
			Off: s.Mode == ModeProxy, Listeners: s.TabletListeners, Advertised: s.TabletAdvertised,
		},
		Limits:     s.Limits(),
		Security:   sec,
		NodeID:     s.NodeID,
		Registry:   a.registry,
		Authorizer: authorizer,
		Tables:     tableNames,
		Cleanup:    cleanupConfig(s, zc, remoteFiles, o.cleanupObserver(), log),
		Health:     o.storesHealth,
		Audit:      s.audit(o.auditObserver()),
		Adapt:      adapt,
		Observer:   o.wireObserver(),
		Mode:       s.Mode,
		Logger:     log,
	})
	if err != nil {
		return nil, err
	}
	a.addrs, a.tabletAddrs = a.serving.Bound(), a.serving.TabletBound()
	o.watch(zc, files, upstream, s.StorageCheckInterval)
	ok = true
	return a, nil
}

// announceHostName announces a listener that binds a wildcard address and
// has no advertised.listeners entry as this machine's host name, which
// clients elsewhere can reach (unlike a loopback address), and says so.
func announceHostName(log hclog.Logger) func(config.Listener) string {
	return func(l config.Listener) string {
		host := assembly.HostName()
		log.Warn("listener binds a wildcard address and has no "+KeyAdvertisedListeners+" entry; announcing the host name",
			"listener", l.Name, "host", host)
		return host
	}
}

// Addr is the bound address of the first listener.
func (a *App) Addr() string { return a.addrs[0].Address() }

// Addrs are the bound listeners.
func (a *App) Addrs() []config.Listener { return append([]config.Listener(nil), a.addrs...) }

// TabletAddrs are the bound tablet-server listeners, in the order of
// Addrs; nil in proxy mode.
func (a *App) TabletAddrs() []config.Listener {
	return append([]config.Listener(nil), a.tabletAddrs...)
}

// MaxConnections is each listener's connection limit: sidecar.max-connections,
// or the limit derived from the open-files limit when it is not set.
func (a *App) MaxConnections() int { return a.maxConns }

// Registry is the running registry, for tests and maintenance.
func (a *App) Registry() *producer.Registry { return a.registry }

// Shutdown stops the sidecar the way a rolling update needs: /readyz
// answers 503 "shutting down" at once, new connections are still accepted
// and served for sidecar.shutdown.accept-delay, so that a load balancer
// following readiness stops sending them before the listeners close; then
// Close drains. When skip is done (a second signal) the rest of the delay
// is skipped. The error is Close's.
func (a *App) Shutdown(skip context.Context) error {
	if a.ops != nil {
		a.ops.shuttingDown.Store(true)
	}
	if d := a.acceptDelay; d > 0 {
		a.log.Info("shutting down: /readyz answers 503; still accepting new connections for the accept delay", "accept_delay", d)
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-skip.Done():
			t.Stop()
			a.log.Info("skipping the rest of the accept delay")
		}
	}
	a.log.Info("draining", "drain_timeout", a.drainTimeout)
	return a.Close()
}

// Close stops accepting, drains in-flight requests and closes the stores.
// It is safe to call more than once.
func (a *App) Close() error {
	a.closeOnce.Do(func() {
		var errs []error
		if a.control != nil {
			errs = append(errs, a.control.Close())
		}
		if a.emb != nil {
			errs = append(errs, a.emb.Close())
		}
		if a.serving != nil {
			// Drains, stops the cleanup and lets outliving writes settle.
			errs = append(errs, a.serving.Close())
		}
		if a.cancel != nil {
			a.cancel()
		}
		a.wg.Wait()
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
