// Package embedded runs a whole Fluss-speaking sidecar in memory: the same
// API handlers (sidecar), the same producer offsets registry (producer) and
// the same authentication as a normal sidecar, over memstore instead of
// ZooKeeper and remote storage. It needs nothing installed, starts in
// milliseconds, and is meant for the test suites of Fluss clients, in the
// same process (Start, in a Go test) or as a binary (fluss-sidecar serve
// --embedded).
//
// Like franz-go's kfake, a Server lets a test change the answer to the next
// request of an api key (ControlKey): fail it with a chosen Fluss error
// code, stall it, or drop the connection.
//
// Nothing here is durable: stopping the server loses every snapshot.
package embedded

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
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// DefaultListenerName names the listener of a Config without Listeners,
// which binds a free loopback port (127.0.0.1:0).
const DefaultListenerName = "FLUSS"

// Config configures a Server. The zero value is a PLAINTEXT server on a free
// loopback port with Fluss's defaults.
type Config struct {
	// Listeners are bound in order (port 0 picks a free port); default
	// one DefaultListenerName listener on 127.0.0.1:0.
	Listeners []config.Listener
	// Advertised are the addresses GET_METADATA announces, by listener
	// name; a listener without an entry announces its bound address.
	Advertised []config.Listener
	// Security sets each listener's protocol and SASL/PLAIN users; a
	// listener it does not name is PLAINTEXT. Users returns the common
	// case.
	Security authz.Settings
	// Authorizer, when set, checks every producer offsets request; Tables
	// then maps table ids to names. FileACLs implements both.
	Authorizer sidecar.Authorizer
	Tables     sidecar.TableResolver

	NodeID int32
	// TTL is coordinator.producer-offsets.ttl (default 24h).
	TTL time.Duration
	// CleanupInterval runs expired-snapshot and orphan-file cleanup
	// (default 1h, as a coordinator does).
	CleanupInterval time.Duration
	// OrphanGracePeriod keeps unreferenced files this long (default 1h).
	OrphanGracePeriod time.Duration
	// RequestTimeout bounds each producer offsets operation (default 30s).
	RequestTimeout time.Duration

	// Limits of each wire server; zero values take wire's defaults.
	MaxFrameSize       int32
	MaxInFlightPerConn int
	MaxConns           int
	IdleTimeout        time.Duration
	DrainTimeout       time.Duration

	// Store holds the data; a new empty store when nil. Pass one to share
	// it, preload it or look into it.
	Store *memstore.Store
	// Now is the registry's clock (default time.Now).
	Now    func() time.Time
	Logger hclog.Logger
}

// Users returns authz.Settings in which every listener in names uses SASL
// with PLAIN logins for users (user name to password).
func Users(users map[string]string, names ...string) authz.Settings {
	if len(names) == 0 {
		names = []string{DefaultListenerName}
	}
	s := authz.Settings{Listeners: map[string]authz.ListenerSecurity{}, AuthTimeout: authz.DefaultAuthTimeout}
	for _, n := range names {
		s.Listeners[n] = authz.ListenerSecurity{
			Protocol:   authz.ProtocolSASL,
			Mechanisms: []string{authz.MechanismPlain},
			Users:      authz.NewCredentials(users),
		}
	}
	return s
}

// Server is a running embedded sidecar.
type Server struct {
	log       hclog.Logger
	store     *memstore.Store
	registry  *producer.Registry
	controls  *controls
	listeners []net.Listener
	bound     []config.Listener
	servers   []*wire.Server

	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Start binds every listener and serves until Close. ctx bounds only the
// start.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if len(cfg.Listeners) == 0 {
		cfg.Listeners = []config.Listener{{Name: DefaultListenerName, Host: "127.0.0.1"}}
	}
	if cfg.CleanupInterval <= 0 {
		cfg.CleanupInterval = time.Hour
	}
	if cfg.OrphanGracePeriod <= 0 {
		cfg.OrphanGracePeriod = time.Hour
	}
	if cfg.Store == nil {
		cfg.Store = memstore.New(memstore.Options{Now: cfg.Now})
	}
	if (cfg.Authorizer == nil) != (cfg.Tables == nil) {
		return nil, errors.New("embedded: Authorizer and Tables go together")
	}
	s := &Server{log: cfg.Logger.Named("embedded"), store: cfg.Store, controls: newControls()}
	ok := false
	defer func() {
		if !ok {
			s.Close()
		}
	}()
	var err error
	s.registry, err = producer.New(producer.Config{
		Snapshots:  cfg.Store,
		Files:      cfg.Store,
		DefaultTTL: cfg.TTL,
		Now:        cfg.Now,
		Logger:     cfg.Logger,
		// One process holds the only copy: every read of it is current,
		// so a GET has no sync to wait for.
		SequentialGets: true,
	})
	if err != nil {
		return nil, err
	}
	for _, l := range cfg.Listeners {
		ln, err := net.Listen("tcp", l.Address())
		if err != nil {
			return nil, fmt.Errorf("embedded: listen %s: %w", l.Name, err)
		}
		s.listeners = append(s.listeners, ln)
		b := l
		b.Port = ln.Addr().(*net.TCPAddr).Port
		s.bound = append(s.bound, b)
	}
	authn, err := authz.NewAuthenticator(authz.AuthConfig{
		Listeners: cfg.Security.Listeners, Timeout: cfg.Security.AuthTimeout, Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	sc, err := sidecar.New(sidecar.Config{
		NodeID:               cfg.NodeID,
		Advertised:           advertised(s.bound, cfg.Advertised),
		Registry:             s.registry,
		RequestTimeout:       cfg.RequestTimeout,
		Logger:               cfg.Logger,
		Authenticator:        authn,
		Authorizer:           cfg.Authorizer,
		Tables:               cfg.Tables,
		RequireTableForEmpty: cfg.Security.RequireTableForEmpty,
	})
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	for i, ln := range s.listeners {
		srv := wire.NewServer(wire.ServerConfig{
			Mux:                sc.Mux().WithoutQuick(), // the controls' gate may stall
			Logger:             cfg.Logger,
			MaxFrameSize:       cfg.MaxFrameSize,
			MaxInFlightPerConn: cfg.MaxInFlightPerConn,
			MaxConns:           cfg.MaxConns,
			IdleTimeout:        cfg.IdleTimeout,
			DrainTimeout:       cfg.DrainTimeout,
			ListenerName:       s.bound[i].Name,
			Gate:               s.controls.gate(authn.Gate),
			OnConnect:          authn.OnConnect,
		})
		s.servers = append(s.servers, srv)
		s.wg.Add(1)
		go func(ln net.Listener) {
			defer s.wg.Done()
			if err := srv.Serve(runCtx, ln); err != nil && !errors.Is(err, wire.ErrServerClosed) && runCtx.Err() == nil {
				s.log.Error("listener stopped", "addr", ln.Addr().String(), "error", err)
			}
		}(ln)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// One in-memory store has one server: no leader to elect.
		cleanup.Run(runCtx, cleanup.Config{
			Registry: s.registry, Files: s.store,
			Interval: cfg.CleanupInterval, Grace: cfg.OrphanGracePeriod, Logger: s.log,
		})
	}()
	ok = true
	return s, nil
}

// advertised pairs each bound listener with its advertised address: the
// entry of the same name, or the bound address (a wildcard host is
// announced as 127.0.0.1: an embedded server is for local tests).
func advertised(bound, adv []config.Listener) []config.Listener {
	out := make([]config.Listener, 0, len(bound))
	for _, b := range bound {
		l := b
		for _, a := range adv {
			if a.Name == b.Name {
				l = a
			}
		}
		if l.Host == "" || l.Host == "0.0.0.0" || l.Host == "::" {
			l.Host = "127.0.0.1"
		}
		out = append(out, l)
	}
	return out
}

// Addr is the bound host:port of the first listener.
func (s *Server) Addr() string { return s.bound[0].Address() }

// Listeners are the bound listeners, ports filled in.
func (s *Server) Listeners() []config.Listener { return append([]config.Listener(nil), s.bound...) }

// Store is the server's data.
func (s *Server) Store() *memstore.Store { return s.store }

// Registry is the server's producer offsets registry.
func (s *Server) Registry() *producer.Registry { return s.registry }

// Close stops accepting, drains requests in flight and stops the cleanup.
// It is safe to call more than once. Controls that stall a request are
// released.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.controls.close()
		var errs []error
		for _, srv := range s.servers {
			errs = append(errs, srv.Close())
		}
		if s.servers == nil {
			for _, ln := range s.listeners {
				ln.Close()
			}
		}
		if s.cancel != nil {
			s.cancel()
		}
		s.wg.Wait()
		if s.registry != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			errs = append(errs, s.registry.Wait(ctx))
			cancel()
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}
