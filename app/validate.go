package app

import (
	"fmt"
	"strings"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/assembly"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// LogLevels are the accepted values of sidecar.log.level.
var LogLevels = []string{"trace", "debug", "info", "warn", "error"}

// validate checks values that parse but cannot work, one error each, with
// the key and what to do.
func (s *Settings) validate() []error {
	var errs []error
	positive := func(key string, d time.Duration, why string) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %v%s", key, d, why))
		}
	}
	positive(KeyZKSessionTimeout, s.ZooKeeperSessionTimeout, "")
	positive(KeyZKConnTimeout, s.ZooKeeperConnectionTimeout, "")
	positive(KeyTTL, s.ProducerOffsetsTTL, ": every snapshot would be born expired and deleted by the next cleanup")
	positive(KeyIdleTimeout, s.IdleTimeout, "")
	positive(KeyRequestTimeout, s.RequestTimeout, "")
	positive(KeyStorageCheckInterval, s.StorageCheckInterval, "")
	if s.ShutdownDrainTimeout < 0 {
		errs = append(errs, fmt.Errorf("%s must not be negative, got %v", KeyDrainTimeout, s.ShutdownDrainTimeout))
	}
	if s.ShutdownAcceptDelay < 0 {
		errs = append(errs, fmt.Errorf("%s must not be negative, got %v", KeyAcceptDelay, s.ShutdownAcceptDelay))
	}
	if s.MaxInFlightPerConn <= 0 {
		errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", KeyMaxInFlight, s.MaxInFlightPerConn))
	}
	if s.MaxRunningPerConn <= 0 {
		errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", KeyMaxRunningPerConn, s.MaxRunningPerConn))
	}
	// Unset, sidecar.max-connections is 0 here and derived at start.
	if (s.maxConnectionsSet && s.MaxConnections < 1) || s.MaxConnections < 0 {
		errs = append(errs, fmt.Errorf("%s must be at least 1, got %d: the sidecar would refuse every client (leave it unset to derive it from the open-files limit)", KeyMaxConnections, s.MaxConnections))
	}
	if s.MaxQueuedRequestBytes < s.MaxRequestSize {
		errs = append(errs, fmt.Errorf("%s (%d bytes) must be at least %s (%d bytes), or a request of the largest allowed size could never be read",
			KeyMaxQueuedBytes, s.MaxQueuedRequestBytes, KeyMaxRequestSize, s.MaxRequestSize))
	}
	if !validLogLevel(s.LogLevel) {
		errs = append(errs, fmt.Errorf("%s: %q is not a log level (want one of %s)", KeyLogLevel, s.LogLevel, strings.Join(LogLevels, ", ")))
	}
	if s.StorageStartChecks < 1 {
		errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", KeyStorageStartChecks, s.StorageStartChecks))
	}
	if err := s.checkAuthorizerListeners(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, s.checkTabletListeners()...)
	return errs
}

// checkTabletListeners checks the tablet-server listeners against the
// listeners they go with: the same names, each present once; and none in
// proxy mode, whose tablet servers are the cluster's own.
func (s *Settings) checkTabletListeners() []error {
	if s.Mode == ModeProxy {
		var errs []error
		for _, k := range []struct {
			key string
			ls  []config.Listener
		}{{KeyTabletListeners, s.TabletListeners}, {KeyTabletAdvertised, s.TabletAdvertised}} {
			if len(k.ls) > 0 {
				errs = append(errs, fmt.Errorf("%s is set, but %s: %s has no tablet-server endpoint of its own: GET_METADATA comes from the coordinator and names the cluster's tablet servers; remove %s",
					k.key, KeyMode, ModeProxy, k.key))
			}
		}
		return errs
	}
	var errs []error
	if _, err := assembly.TabletListeners(s.Listeners, s.TabletListeners); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w (%s)", KeyTabletListeners, err, KeyBindListeners))
	}
	if err := assembly.CheckTabletAdvertised(s.Listeners, s.TabletAdvertised); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w (%s)", KeyTabletAdvertised, err, KeyBindListeners))
	}
	return errs
}

func validLogLevel(l string) bool {
	for _, v := range LogLevels {
		if strings.EqualFold(l, v) {
			return true
		}
	}
	return false
}

// checkAuthorizerListeners refuses authorization that enforces nothing:
// the internal listener skips ACL checks (as in Fluss), so with every
// listener internal no request would ever be checked.
func (s *Settings) checkAuthorizerListeners() error {
	if !s.Security.AuthorizerEnabled || len(s.Listeners) == 0 {
		return nil
	}
	var names []string
	for _, l := range s.Listeners {
		if l.Name != s.Security.InternalListener {
			return nil
		}
		names = append(names, l.Name)
	}
	return fmt.Errorf("%s is true but the only listener, %s, is the internal listener (%s=%s), which skips authorization, so nothing would be enforced; "+
		"add a client listener, e.g. %s: %s://host:9123,CLIENT://host:9124 with %s: CLIENT:sasl, or set %s to the name of a listener clients do not use",
		authz.KeyAuthorizerEnabled, strings.Join(names, ","), authz.KeyInternalListener, s.Security.InternalListener,
		KeyBindListeners, s.Security.InternalListener, authz.KeyProtocolMap, authz.KeyInternalListener)
}
