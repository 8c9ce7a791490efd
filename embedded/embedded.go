// Package embedded runs a whole Fluss-speaking sidecar in memory: the same
// API handlers (sidecar), the same producer offsets registry (producer) and
// the same authentication as a normal sidecar, over memstore instead of
// ZooKeeper and remote storage. It needs nothing installed, starts in
// milliseconds, and is meant for the test suites of Fluss clients, in the
// same process (Start, in a Go test) or as a binary (fluss-sidecar serve
// --embedded).
//
// Like franz-go's kfake, a Server lets a test change the answer to the next
// requests of an api key (ControlKey, AddRule): fail them with a chosen
// Fluss error code, stall, delay or drop them, or apply them and then fail
// or drop them (an unknown outcome), optionally for one producer or one
// connection. It keeps a log of the requests it answered (Log), has a
// clock a test advances to expire snapshots (Clock, ExpireNow), and can
// be listed and reset (ListStore, Reset). Package controlapi serves all of
// this over HTTP for tests in other languages.
//
// Nothing here is durable: stopping the server loses every snapshot.
package embedded

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/assembly"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
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
	// TabletListeners are the tablet-server endpoint's listeners, one per
	// listener and of the same names: the one alive tablet server
	// GET_METADATA names, which answers API_VERSIONS as a TABLET_SERVER.
	// Default: each listener's host on a free port (TabletAddr says which).
	TabletListeners []config.Listener
	// TabletAdvertised are the addresses GET_METADATA announces for the
	// tablet endpoint, by listener name; default as for Advertised (see
	// assembly.Tablet).
	TabletAdvertised []config.Listener
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

	// Limits are those of a ZooKeeper-backed sidecar, applied by the same
	// assembly: frame size, requests in flight and running per
	// connection, connections per listener, the request-byte budget,
	// idle, request and drain timeouts. Zero values take the defaults.
	assembly.Limits

	// Store holds the data; a new empty store when nil. Pass one to share
	// it, preload it or look into it.
	Store *memstore.Store
	// Now is the base of the server's Clock, which the registry and the
	// default store read for TTLs (default time.Now).
	Now    func() time.Time
	Logger hclog.Logger
	// Audit says which registry requests leave an audit line on Logger's
	// "audit" sub-logger; nil: every REGISTER and DELETE, no GET (the
	// defaults of sidecar.audit.writes and sidecar.audit.reads).
	Audit *sidecar.AuditConfig
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
	store    *memstore.Store
	clock    *Clock
	registry *producer.Registry
	controls *controls
	serving  *assembly.Assembly

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
	clock := NewClock(cfg.Now)
	if cfg.Store == nil {
		cfg.Store = memstore.New(memstore.Options{Now: clock.Now})
	}
	if (cfg.Authorizer == nil) != (cfg.Tables == nil) {
		return nil, errors.New("embedded: Authorizer and Tables go together")
	}
	s := &Server{store: cfg.Store, clock: clock, controls: newControls(nil)}
	// The registry and cleanup see the memstore behind the portable layer.
	snapshots, files := storage.CheckedSnapshots(cfg.Store), storage.CheckedFilesAndOrphans(cfg.Store)
	var err error
	s.registry, err = producer.New(producer.Config{
		Snapshots:  snapshots,
		Files:      files,
		DefaultTTL: cfg.TTL,
		Now:        clock.Now,
		Logger:     cfg.Logger,
		// One process holds the only copy: every read of it is current,
		// so a GET has no sync to wait for.
		SequentialGets: true,
	})
	if err != nil {
		return nil, err
	}
	s.serving, err = assembly.Start(ctx, assembly.Config{
		Listeners:  cfg.Listeners,
		Advertised: cfg.Advertised,
		// An embedded server is for local tests.
		AnnounceWildcard: func(config.Listener) string { return "127.0.0.1" },
		Tablet:           assembly.Tablet{Listeners: cfg.TabletListeners, Advertised: cfg.TabletAdvertised},
		Limits:           cfg.Limits,
		Security:         cfg.Security,
		NodeID:           cfg.NodeID,
		Registry:         s.registry,
		Authorizer:       cfg.Authorizer,
		Tables:           cfg.Tables,
		// One in-memory store has one server: no leader to elect.
		Cleanup: assembly.Cleanup{Files: files, Interval: cfg.CleanupInterval, Grace: cfg.OrphanGracePeriod},
		// Both endpoints: a control on an api key takes the next request
		// of it on either, and both are in the request log.
		Adapt: func(_ assembly.Listener, c wire.ServerConfig) (wire.ServerConfig, error) {
			// The controls may stall at the gate and around each
			// handler, so no Quick path answers ahead of them.
			c.Mux = c.Mux.Wrapped(s.controls.serve)
			c.Gate = s.controls.gate(c.Gate)
			c.Observer = logObserver{log: s.controls.log, next: c.Observer}
			return c, nil
		},
		Audit:  auditConfig(cfg.Audit),
		Mode:   "embedded",
		Logger: cfg.Logger,
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Addr is the bound host:port of the first listener: the coordinator, where
// a client's bootstrap.servers points.
func (s *Server) Addr() string { return s.serving.Addr() }

// Listeners are the bound listeners, ports filled in.
func (s *Server) Listeners() []config.Listener { return s.serving.Bound() }

// TabletAddr is the bound host:port of the first listener's tablet-server
// endpoint, which GET_METADATA names as the one alive tablet server.
func (s *Server) TabletAddr() string { return s.serving.TabletBound()[0].Address() }

// TabletListeners are the bound tablet-server listeners, in the order of
// Listeners.
func (s *Server) TabletListeners() []config.Listener { return s.serving.TabletBound() }

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
		s.closeErr = s.serving.Close()
	})
	return s.closeErr
}

// auditConfig is Config.Audit with its default.
func auditConfig(a *sidecar.AuditConfig) sidecar.AuditConfig {
	if a == nil {
		return sidecar.AuditConfig{Writes: true}
	}
	return *a
}
