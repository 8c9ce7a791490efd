package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
)

// embeddedSettings checks that the configuration is unambiguous about where
// data lives, and reads the embedded-only keys.
func embeddedSettings(c *config.Config, s *Settings) error {
	s.ACLFile = c.String(KeyEmbeddedACLFile, defaultText(KeyEmbeddedACLFile))
	control, controlErr := controlAddress(c.String(KeyEmbeddedControl, ""))
	s.ControlListen = control
	if !s.Embedded {
		var errs []error
		if control != "" || controlErr != nil {
			errs = append(errs, fmt.Errorf("%s (serve --control) applies only with %s: true: only an in-memory test server takes faults from outside", KeyEmbeddedControl, KeyEmbedded))
		}
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
	if controlErr != nil {
		errs = append(errs, controlErr)
	}
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

// controlAddress reads sidecar.embedded.control.listen: PORT or :PORT
// binds 127.0.0.1; a host must be a loopback address (or localhost), since
// the control API has no authentication.
func controlAddress(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", nil
	}
	if !strings.Contains(v, ":") {
		v = ":" + v
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("%s: %q is not HOST:PORT or PORT: %v", KeyEmbeddedControl, v, err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return "", fmt.Errorf("%s: port %q is not a number from 0 to 65535", KeyEmbeddedControl, port)
	}
	switch {
	case host == "":
		host = "127.0.0.1"
	case host == "localhost":
	default:
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return "", fmt.Errorf("%s: %q is not a loopback address; the control API has no authentication, so it binds only 127.0.0.1, ::1 or localhost", KeyEmbeddedControl, host)
		}
	}
	return net.JoinHostPort(host, port), nil
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
	var control *controlapi.Server
	if s.ControlListen != "" {
		control, err = controlapi.Listen(s.ControlListen, srv, log)
		if err != nil {
			srv.Close()
			return nil, fmt.Errorf("%s: %w", KeyEmbeddedControl, err)
		}
		log.Info("control API listening", "url", control.URL())
	}
	a := &App{log: log, emb: srv, control: control, registry: srv.Registry(), addrs: srv.Listeners(), tabletAddrs: srv.TabletListeners(), maxConns: s.MaxConnections,
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

// ControlURL is the control API's base URL (http://host:port) in
// embedded mode with sidecar.embedded.control.listen set; "" otherwise.
func (a *App) ControlURL() string {
	if a.control == nil {
		return ""
	}
	return a.control.URL()
}
