package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
)

// embeddedSettings checks that the configuration is unambiguous about where
// data lives, and reads the embedded-only keys.
func embeddedSettings(c *config.Config, s *Settings) error {
	s.ACLFile = c.String(KeyEmbeddedACLFile, defaultText(KeyEmbeddedACLFile))
	if !s.Embedded {
		var errs []error
		if strings.EqualFold(strings.TrimSpace(s.ZooKeeperAddress), "embedded") {
			errs = append(errs, fmt.Errorf("%s: %q is not a ZooKeeper address; to keep data in memory, run `serve --embedded` (%s: true) without %s",
				KeyZKAddress, s.ZooKeeperAddress, KeyEmbedded, KeyZKAddress))
		}
		if s.ACLFile != "" {
			errs = append(errs, fmt.Errorf("%s applies only with %s: true; a ZooKeeper-backed sidecar reads ACLs from ZooKeeper", KeyEmbeddedACLFile, KeyEmbedded))
		}
		return errors.Join(errs...)
	}
	var errs []error
	for _, k := range []string{KeyZKAddress, KeyRemoteDataDir, KeyRemoteDataDirs} {
		if v, ok := c.Lookup(k); ok && v != "" {
			errs = append(errs, fmt.Errorf("%s: true keeps every snapshot and offsets file in memory, but %s is set (%q); remove one of the two", KeyEmbedded, k, v))
		}
	}
	if s.Mode != ModeStandalone {
		errs = append(errs, fmt.Errorf("%s: true has no coordinator to proxy to; %s must be %q", KeyEmbedded, KeyMode, ModeStandalone))
	}
	if s.ACLFile != "" && !s.Security.AuthorizerEnabled {
		errs = append(errs, fmt.Errorf("%s is set but %s is false: set %s: true to check the ACLs", KeyEmbeddedACLFile, authz.KeyAuthorizerEnabled, authz.KeyAuthorizerEnabled))
	}
	return errors.Join(errs...)
}

// EmbeddedConfig is the embedded.Config that Start runs in embedded mode
// from s: the listeners, security, limits and cleanup of the same keys as
// in ZooKeeper mode, and the ACLs of sidecar.embedded.acl-file. Tests that
// start embedded.Start themselves (to give it a store, or to use its
// controls) begin here.
func EmbeddedConfig(s Settings, opts Options) (embedded.Config, error) {
	audit := s.audit(nil) // embedded mode serves no metrics
	cfg := embedded.Config{
		Listeners:         s.Listeners,
		Advertised:        s.AdvertisedListeners,
		TabletListeners:   s.TabletListeners,
		TabletAdvertised:  s.TabletAdvertised,
		Security:          s.Security,
		NodeID:            s.NodeID,
		TTL:               s.ProducerOffsetsTTL,
		CleanupInterval:   s.CleanupInterval,
		OrphanGracePeriod: s.OrphanGracePeriod,
		Limits:            s.Limits(),
		Now:               opts.Now,
		Logger:            opts.Logger,
		Audit:             &audit,
	}
	if s.Security.AuthorizerEnabled {
		acls, err := embedded.LoadACLFile(s.ACLFile, s.Security)
		if err != nil {
			return cfg, fmt.Errorf("%s: %w", KeyEmbeddedACLFile, err)
		}
		cfg.Authorizer, cfg.Tables = acls, acls
	}
	return cfg, nil
}

// startEmbedded runs the sidecar of s over an in-memory store (package
// embedded): the same handlers, registry, authentication, limits and
// assembly, no ZooKeeper and no remote storage.
func startEmbedded(ctx context.Context, s Settings, opts Options, log hclog.Logger) (*App, error) {
	opts.Logger = log
	cfg, err := EmbeddedConfig(s, opts)
	if err != nil {
		return nil, err
	}
	srv, err := embedded.Start(ctx, cfg)
	if err != nil {
		return nil, err
	}
	a := &App{log: log, emb: srv, registry: srv.Registry(), addrs: srv.Listeners(), tabletAddrs: srv.TabletListeners(), maxConns: s.MaxConnections,
		acceptDelay: s.ShutdownAcceptDelay, drainTimeout: s.ShutdownDrainTimeout}
	log.Warn("embedded mode: snapshots and offsets files are kept in memory and lost on exit; for tests only")
	return a, nil
}

// EmbeddedStore is the in-memory store of an embedded-mode sidecar, for
// tests that plant or inspect data; nil in ZooKeeper mode.
func (a *App) EmbeddedStore() *memstore.Store {
	if a.emb == nil {
		return nil
	}
	return a.emb.Store()
}
