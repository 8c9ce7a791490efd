package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
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

// storageProber is what checkStorage needs of the remote store.
type storageProber interface {
	Probe(ctx context.Context) error
}

// checkStorage probes remote storage at start: a file written, read back
// and deleted where offsets files go (remote.Store.Probe). Storage that is
// definitely unusable (permission denied or a read-only file system, a
// missing bucket, bad credentials) fails the start with one line naming the
// producers directory; any other failure is retried up to attempts times
// with backoff, each failure logged, and if it persists the sidecar starts
// anyway, not ready, with an error logged, since requests will succeed once
// the storage is back.
func checkStorage(ctx context.Context, p storageProber, dir string, attempts int, sleep func(context.Context, time.Duration) error, log hclog.Logger) error {
	delay := 200 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := p.Probe(ctx)
		if err == nil {
			if attempt > 1 {
				log.Info("remote storage is reachable", "dir", dir, "attempt", attempt)
			}
			return nil
		}
		if why := unusable(err); why != "" {
			return fmt.Errorf("remote storage %s is unusable (%s): %w", dir, why, err)
		}
		if attempt >= attempts || ctx.Err() != nil {
			log.Error("remote storage is not reachable; starting anyway, not ready, producer offsets requests will fail until it is",
				"dir", dir, "attempts", attempt, "error", err)
			return nil
		}
		log.Warn("remote storage check failed; retrying", "dir", dir, "attempt", attempt, "error", err)
		if err := sleep(ctx, delay); err != nil {
			return fmt.Errorf("remote storage %s: %w", dir, err)
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// unusable names why storage that failed a probe with err can never work
// without an operator: the object store's code, or "permission" for a
// refused local access (EACCES, a read-only file system). "" when waiting
// may help.
func unusable(err error) string {
	switch c := gcerrors.Code(err); c {
	case gcerrors.PermissionDenied, gcerrors.NotFound, gcerrors.InvalidArgument, gcerrors.FailedPrecondition, gcerrors.Unimplemented:
		return c.String()
	}
	if errors.Is(err, storeerr.ErrPermission) {
		return "permission"
	}
	return ""
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
