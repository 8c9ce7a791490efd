// Package sidecar is the Fluss-speaking server: it registers the APIs the
// sidecar serves (one file each) on a wire.Mux and maps registry failures to
// Fluss error codes.
package sidecar

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Config is what the API handlers need.
type Config struct {
	// NodeID is the server id announced in GET_METADATA, both as the
	// coordinator and as the one tablet server.
	NodeID int32
	// Advertised lists the addresses clients are told to connect to, by
	// listener name. GET_METADATA answers with the one of the listener the
	// request came in on, or the first when that listener has none.
	Advertised []config.Listener
	Registry   *producer.Registry
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
}

// Sidecar holds the API handlers.
type Sidecar struct {
	cfg        Config
	mux        *wire.Mux
	log        hclog.Logger
	serverName string
	memo       *getMemo // encoded GET answers (get_memo.go)
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
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Authorizer != nil && cfg.Tables == nil {
		return nil, errors.New("sidecar: authorization needs a table resolver")
	}
	s := &Sidecar{cfg: cfg, log: cfg.Logger.Named("sidecar"), serverName: cfg.ServerName, memo: newGetMemo()}
	if s.serverName == "" {
		s.serverName = "coordinator"
	}
	s.mux = wire.NewMux(
		s.apiVersions(),
		s.getMetadata(),
		s.authenticate(),
		s.registerProducerOffsets(),
		s.getProducerOffsets(),
		s.deleteProducerOffsets(),
	)
	return s, nil
}

// Mux returns the APIs for a wire.Server.
func (s *Sidecar) Mux() *wire.Mux { return s.mux }
