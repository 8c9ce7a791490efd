// Package assembly runs the serving side of a sidecar, the same way for
// the ZooKeeper-backed server (app.Start) and the in-memory one
// (embedded.Start): it binds every listener and its tablet-server
// listener, builds the API handlers and one wire server per endpoint with
// every limit, shares one request budget
// between them, runs the periodic cleanup, and shuts all of it down in
// order. The caller builds what differs between the two, the registry over
// its stores and the authorizer, and hands them in.
//
// Having one assembly is what keeps a limit from applying in one mode and
// not the other: a key read into Limits is in force on every listener of
// either.
package assembly

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/cleanup"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Limits bound what clients can make the sidecar hold, on every listener;
// each field names the key that sets it. A zero field takes wire's (or,
// for RequestTimeout, sidecar's) default.
type Limits struct {
	MaxFrameSize          int32         // netty.server.max-request-size
	MaxInFlightPerConn    int           // sidecar.max-inflight-per-connection
	MaxRunningPerConn     int           // sidecar.max-running-per-connection
	MaxConns              int           // sidecar.max-connections, per endpoint (each listener and its tablet-server listener)
	MaxQueuedRequestBytes int64         // sidecar.max-queued-request-bytes, shared by every listener
	IdleTimeout           time.Duration // netty.connection.max-idle-time
	RequestTimeout        time.Duration // sidecar.request-timeout
	DrainTimeout          time.Duration // sidecar.shutdown.drain-timeout
}

// apply writes the limits into one listener's server configuration; the
// budget is shared and set apart.
func (l Limits) apply(c wire.ServerConfig) wire.ServerConfig {
	c.MaxFrameSize = l.MaxFrameSize
	c.MaxInFlightPerConn = l.MaxInFlightPerConn
	c.MaxRunningPerConn = l.MaxRunningPerConn
	c.MaxConns = l.MaxConns
	c.IdleTimeout = l.IdleTimeout
	c.DrainTimeout = l.DrainTimeout
	return c
}

// Cleanup says how the periodic cleanup of expired snapshots and orphan
// offsets files runs.
type Cleanup struct {
	// Files is where orphan offsets files are looked for.
	Files storage.OrphanStore
	// Interval is coordinator.producer-offsets.cleanup-interval; Grace is
	// sidecar.orphan-cleanup.grace-period.
	Interval, Grace time.Duration
	// Elect, when set, returns the elector that picks the one instance
	// that runs rounds among those sharing a store; it is given the bound
	// listeners (for the leader's identity), and the assembly runs it.
	// Nil runs every round here.
	Elect    func(bound []config.Listener) (*cleanup.Elector, error)
	Observer cleanup.Observer
}

// Listener is what Adapt is told about one listener.
type Listener struct {
	Bound      config.Listener   // the bound address, port filled in
	Advertised config.Listener   // what GET_METADATA announces for it
	AllBound   []config.Listener // every bound listener, in order
	Protocol   string            // authz.ProtocolPlaintext or authz.ProtocolSASL
	Sidecar    *sidecar.Sidecar  // the API handlers every listener serves
	// Tablet is true for a tablet-server listener, whose server serves
	// Sidecar.TabletMux.
	Tablet bool
}

// Config configures Start.
type Config struct {
	// Listeners are bound in order (port 0 takes a free port): bind.listeners.
	Listeners []config.Listener
	// Advertised are the addresses GET_METADATA announces, by listener
	// name: advertised.listeners. A listener without an entry announces
	// its bound address.
	Advertised []config.Listener
	// AnnounceWildcard returns the host announced for a listener bound to
	// a wildcard address (0.0.0.0, ::) that has no advertised entry. Nil
	// announces this machine's host name (HostName).
	AnnounceWildcard func(config.Listener) string
	// Tablet configures the tablet-server endpoint (tablet.go).
	Tablet Tablet

	Limits Limits
	// Security holds each listener's protocol and SASL users, the login
	// deadline (sidecar.authentication.timeout) and
	// sidecar.authorization.require-table-for-empty.
	Security authz.Settings
	NodeID   int32 // sidecar.node-id

	Registry *producer.Registry
	// Authorizer, when set, checks every producer offsets request; Tables
	// maps table ids to names for it. They go together.
	Authorizer sidecar.Authorizer
	Tables     sidecar.TableResolver

	Cleanup Cleanup

	// Health says whether ZooKeeper and remote storage answer, for
	// GET_CLUSTER_HEALTH; nil answers GREEN (embedded mode).
	Health sidecar.HealthFunc
	// Audit says which registry requests leave an audit line.
	Audit sidecar.AuditConfig

	// Adapt, when set, changes one listener's server configuration after
	// the assembly has filled it in: proxy mode forwards what the sidecar
	// does not serve, embedded mode puts its fault controls in front. The
	// limits are written again afterwards, so Adapt cannot drop one.
	Adapt func(Listener, wire.ServerConfig) (wire.ServerConfig, error)
	// Observer is told about connections and requests (metrics).
	Observer wire.Observer
	// Mode names the mode in each listener's "serving" log line.
	Mode   string
	Logger hclog.Logger
}

// Assembly is a serving sidecar: its listeners, wire servers and cleanup.
type Assembly struct {
	log       hclog.Logger
	registry  *producer.Registry
	listeners []net.Listener // the coordinator listeners, then the tablet ones
	bound     []config.Listener
	tablet    []config.Listener // the bound tablet-server listeners
	servers   []*wire.Server    // in the order of listeners

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Start binds every listener, then serves on all of them and runs the
// cleanup until Close. ctx bounds only the start. On an error everything
// started is stopped again.
func Start(ctx context.Context, cfg Config) (*Assembly, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	if cfg.Registry == nil {
		return nil, errors.New("assembly: a registry is required")
	}
	if (cfg.Authorizer == nil) != (cfg.Tables == nil) {
		return nil, errors.New("assembly: Authorizer and Tables go together")
	}
	a := &Assembly{log: log, registry: cfg.Registry}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()

	// Bind first, so that port 0 listeners advertise the port they got.
	for _, l := range cfg.Listeners {
		ln, err := net.Listen("tcp", l.Address())
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", l.Name, err)
		}
		a.listeners = append(a.listeners, ln)
		bound := l
		bound.Port = ln.Addr().(*net.TCPAddr).Port
		a.bound = append(a.bound, bound)
	}
	if len(a.bound) == 0 {
		return nil, errors.New("assembly: no listener to bind")
	}
	advertised := advertise(a.bound, cfg.Advertised, cfg.AnnounceWildcard)
	var tabletAdvertised []config.Listener
	if !cfg.Tablet.Off {
		if err := a.bindTablet(cfg); err != nil {
			return nil, err
		}
		tabletAdvertised = advertiseTablet(a.tablet, cfg.Tablet.Advertised, cfg.Advertised, cfg.AnnounceWildcard)
	}
	sec := cfg.Security
	authn, err := authz.NewAuthenticator(authz.AuthConfig{Listeners: sec.Listeners, Timeout: sec.AuthTimeout, Logger: log})
	if err != nil {
		return nil, err
	}
	sc, err := sidecar.New(sidecar.Config{
		NodeID:               cfg.NodeID,
		Advertised:           advertised,
		TabletAdvertised:     tabletAdvertised,
		Registry:             cfg.Registry,
		RequestTimeout:       cfg.Limits.RequestTimeout,
		Logger:               log,
		Authenticator:        authn,
		Authorizer:           cfg.Authorizer,
		Tables:               cfg.Tables,
		RequireTableForEmpty: sec.RequireTableForEmpty,
		Health:               cfg.Health,
		Audit:                cfg.Audit,
	})
	if err != nil {
		return nil, err
	}
	var elector *cleanup.Elector
	if cfg.Cleanup.Elect != nil {
		if elector, err = cfg.Cleanup.Elect(a.Bound()); err != nil {
			return nil, err
		}
	}

	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	// One budget for every listener: request bytes in memory are bounded
	// server-wide, not per listener.
	budgetSize := cfg.Limits.MaxQueuedRequestBytes
	if budgetSize <= 0 {
		budgetSize = wire.DefaultRequestBudget
	}
	budget := wire.NewBudget(budgetSize)
	budget.SetOnDrained(largeRequest, giveMemoryBack(log))
	for i, ln := range a.listeners {
		tablet := i >= len(a.bound)
		var bound, adv config.Listener
		mux, obs, endpoint := sc.Mux(), cfg.Observer, "coordinator"
		if tablet {
			j := i - len(a.bound)
			bound, adv, mux, endpoint = a.tablet[j], tabletAdvertised[j], sc.TabletMux(), TabletServerLabel
			if obs != nil {
				obs = tabletObserver{obs}
			}
		} else {
			bound, adv = a.bound[i], advertised[i]
		}
		protocol := authn.Protocol(bound.Name)
		scfg := wire.ServerConfig{
			Mux:    mux,
			Logger: log,
			Budget: budget,
			// The tablet listener goes by its coordinator listener's name,
			// so that the same security protocol, users and internal
			// listener rule apply to it.
			ListenerName: bound.Name,
			Gate:         authn.Gate,
			OnConnect:    authn.OnConnect,
			Observer:     obs,
		}
		if cfg.Adapt != nil {
			scfg, err = cfg.Adapt(Listener{
				Bound: bound, Advertised: adv, AllBound: a.Bound(), Protocol: protocol, Sidecar: sc, Tablet: tablet,
			}, scfg)
			if err != nil {
				return nil, err
			}
			scfg.Budget = budget
		}
		srv := wire.NewServer(cfg.Limits.apply(scfg))
		a.servers = append(a.servers, srv)
		a.wg.Add(1)
		go func(ln net.Listener) {
			defer a.wg.Done()
			if err := srv.Serve(runCtx, ln); err != nil && !errors.Is(err, wire.ErrServerClosed) && runCtx.Err() == nil {
				log.Error("listener stopped", "addr", ln.Addr().String(), "error", err)
			}
		}(ln)
		log.Info("serving", "listener", bound.Name, "endpoint", endpoint, "addr", ln.Addr().String(),
			"advertised", adv.Address(), "security_protocol", protocol, "mode", cfg.Mode)
	}
	a.startCleanup(runCtx, cfg.Cleanup, elector)
	ok = true
	return a, nil
}

// startCleanup runs the periodic cleanup, and the election of the instance
// that runs it when there is one.
func (a *Assembly) startCleanup(ctx context.Context, c Cleanup, elector *cleanup.Elector) {
	if elector != nil {
		a.wg.Go(func() { elector.Run(ctx) })
	}
	a.wg.Go(func() {
		cleanup.Run(ctx, cleanup.Config{
			Registry: a.registry, Files: c.Files, Interval: c.Interval, Grace: c.Grace,
			Leader: elector, Observer: c.Observer, Logger: a.log,
		})
	})
}

// Addr is the bound host:port of the first listener.
func (a *Assembly) Addr() string { return a.bound[0].Address() }

// Bound are the bound coordinator listeners, ports filled in.
func (a *Assembly) Bound() []config.Listener { return append([]config.Listener(nil), a.bound...) }

// TabletBound are the bound tablet-server listeners, ports filled in, in
// the order of Bound; nil when Tablet.Off.
func (a *Assembly) TabletBound() []config.Listener {
	return append([]config.Listener(nil), a.tablet...)
}

// bindTablet binds the tablet-server listeners after the coordinator ones.
func (a *Assembly) bindTablet(cfg Config) error {
	tablet, err := TabletListeners(a.bound, cfg.Tablet.Listeners)
	if err != nil {
		return fmt.Errorf("assembly: %w", err)
	}
	if err := CheckTabletAdvertised(a.bound, cfg.Tablet.Advertised); err != nil {
		return fmt.Errorf("assembly: advertised tablet-server listeners: %w", err)
	}
	for _, l := range tablet {
		ln, err := net.Listen("tcp", l.Address())
		if err != nil {
			return fmt.Errorf("listen %s (tablet server): %w", l.Name, err)
		}
		a.listeners = append(a.listeners, ln)
		l.Port = ln.Addr().(*net.TCPAddr).Port
		a.tablet = append(a.tablet, l)
	}
	return nil
}

// Close stops accepting, drains the requests in flight (for up to
// Limits.DrainTimeout), stops the cleanup and waits for writes that
// outlived their requests to settle (bounded by the registry's settle
// timeout), so that the caller can close its stores next. It is safe to
// call more than once. The error wraps wire.ErrDrainTimeout when requests
// were cut.
func (a *Assembly) Close() error {
	a.closeOnce.Do(func() {
		// Every listener drains at once: one after another, a shutdown
		// could take the drain timeout once per listener.
		errs := make([]error, len(a.servers))
		var drains sync.WaitGroup
		for i, s := range a.servers {
			drains.Go(func() { errs[i] = s.Close() })
		}
		drains.Wait()
		// Listeners bound but not yet served are closed here; a server
		// closes its own.
		for _, ln := range a.listeners[len(a.servers):] {
			ln.Close()
		}
		if a.cancel != nil {
			a.cancel()
		}
		a.wg.Wait()
		// Writes that outlived their requests settle before the stores
		// close.
		_ = a.registry.Wait(context.Background())
		a.closeErr = errors.Join(errs...)
	})
	return a.closeErr
}
