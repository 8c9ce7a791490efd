// Package sidecar is the Fluss-speaking server: it registers the APIs the
// sidecar serves (one file each) on a wire.Mux and maps registry failures to
// Fluss error codes. It has two endpoints: the coordinator (Mux), which
// serves the producer offsets keys, and the tablet server (TabletMux),
// which a Fluss client needs to find alive in GET_METADATA and which
// serves only what a tablet server serves of the sidecar's keys.
package sidecar

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Config is what the API handlers need.
type Config struct {
	// NodeID is the server id announced in GET_METADATA, both as the
	// coordinator and as the one tablet server (a client keys the two
	// apart by type: cs-<id> and ts-<id>).
	NodeID int32
	// Advertised lists the coordinator endpoint's addresses clients are
	// told to connect to, by listener name. GET_METADATA answers with the
	// one of the listener the request came in on, or the first when that
	// listener has none.
	Advertised []config.Listener
	// TabletAdvertised lists the tablet endpoint's addresses, by listener
	// name, chosen the same way. Empty: GET_METADATA names no tablet
	// server (proxy mode, which forwards GET_METADATA instead).
	TabletAdvertised []config.Listener
	Registry         *producer.Registry
	// RequestTimeout bounds each producer-offsets operation (default 30s).
	RequestTimeout time.Duration
	Logger         hclog.Logger

	// Authenticator runs SASL/PLAIN logins on AUTHENTICATE. Nil answers
	// AUTHENTICATE as a PLAINTEXT server does.
	Authenticator *authz.Authenticator
	// Authorizer, when set (authorizer.enabled), checks every producer
	// offsets request against the ACLs; Tables is then required.
	Authorizer Authorizer
	Tables     TableResolver
	// RequireTableForEmpty makes a snapshot with no tables need WRITE on
	// the cluster (sidecar.authorization.require-table-for-empty, W9).
	RequireTableForEmpty bool
	// ServerName names this server in the UNKNOWN_TABLE_OR_BUCKET message,
	// "This server <name> does not know this table ID ...". Default
	// "coordinator", the name a Fluss coordinator gives there.
	ServerName string
	// Audit says which registry requests leave an audit line (audit.go).
	Audit AuditConfig
	// Health says whether ZooKeeper and remote storage answer, for
	// GET_CLUSTER_HEALTH (cluster_health.go). Nil answers GREEN: the
	// embedded mode's one in-memory store.
	Health HealthFunc
}

// Sidecar holds the API handlers.
type Sidecar struct {
	cfg        Config
	mux        *wire.Mux // the coordinator endpoint
	tabletMux  *wire.Mux // the tablet endpoint
	log        hclog.Logger
	serverName string
	memo       *getMemo     // encoded GET answers (get_memo.go)
	audits     hclog.Logger // the audit lines (audit.go)
}

// New builds the handlers and their Mux.
func New(cfg Config) (*Sidecar, error) {
	if cfg.Registry == nil {
		return nil, errors.New("sidecar: a registry is required")
	}
	if len(cfg.Advertised) == 0 {
		return nil, errors.New("sidecar: at least one advertised listener is required")
	}
	for _, l := range cfg.Advertised {
		if l.Host == "" || l.Port <= 0 {
			return nil, fmt.Errorf("sidecar: advertised listener %s needs a host and a port", l.Name)
		}
	}
	for _, l := range cfg.TabletAdvertised {
		if l.Host == "" || l.Port <= 0 {
			return nil, fmt.Errorf("sidecar: advertised tablet-server listener %s needs a host and a port", l.Name)
		}
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Authorizer != nil && cfg.Tables == nil {
		return nil, errors.New("sidecar: authorization needs a table resolver")
	}
	s := &Sidecar{cfg: cfg, log: cfg.Logger.Named("sidecar"), serverName: cfg.ServerName, memo: newGetMemo(), audits: auditLogger(cfg.Logger)}
	if s.serverName == "" {
		s.serverName = "coordinator"
	}
	s.mux = wire.NewMux(
		apiVersions(messages.ServerTypeCoordinator, s.Mux),
		s.getMetadata(),
		s.authenticate(),
		s.registerProducerOffsets(),
		s.getProducerOffsets(),
		s.deleteProducerOffsets(),
		s.getClusterHealth(),
	)
	s.tabletMux = wire.NewMux(
		apiVersions(messages.ServerTypeTabletServer, s.TabletMux),
		s.getMetadata(),
		s.authenticate(),
		s.getClusterHealth(),
	).WithElsewhere(CoordinatorOnlyKeys(), "this key is served by the coordinator, not by a tablet server; send it to the coordinator named in GET_METADATA")
	return s, nil
}

// CoordinatorOnlyKeys are the keys the coordinator endpoint serves and the
// tablet endpoint refuses: the producer offsets registry, which in Fluss
// only a coordinator serves.
func CoordinatorOnlyKeys() []messages.Key {
	return []messages.Key{messages.KeyRegisterProducerOffsets, messages.KeyGetProducerOffsets, messages.KeyDeleteProducerOffsets}
}

// Mux returns the coordinator endpoint's APIs for a wire.Server.
func (s *Sidecar) Mux() *wire.Mux { return s.mux }

// ProxyMux returns the APIs proxy mode answers itself: the coordinator
// endpoint's without GET_CLUSTER_HEALTH, which there is the coordinator's
// to answer about its cluster and is forwarded (and listed in API_VERSIONS
// exactly when the coordinator lists it).
func (s *Sidecar) ProxyMux() *wire.Mux {
	var apis []wire.API
	for _, a := range s.mux.Versions() {
		if a.Key != messages.KeyGetClusterHealth {
			apis = append(apis, a)
		}
	}
	return wire.NewMux(apis...)
}

// TabletMux returns the tablet endpoint's APIs for a wire.Server:
// API_VERSIONS (answering TABLET_SERVER), GET_METADATA, AUTHENTICATE and
// GET_CLUSTER_HEALTH (which a Fluss tablet server answers too);
// the producer offsets keys are answered UNSUPPORTED_VERSION with a message
// that sends the client to the coordinator.
func (s *Sidecar) TabletMux() *wire.Mux { return s.tabletMux }
