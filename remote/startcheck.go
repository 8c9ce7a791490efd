package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// Prober is what CheckAtStart needs of a store.
type Prober interface {
	Probe(ctx context.Context) error
}

// CheckAtStart probes remote storage at start: a file written, read back
// and deleted where offsets files go (Store.Probe). Storage that is
// definitely unusable (permission denied or a read-only file system, a
// missing bucket, bad credentials) fails the start with one line naming the
// producers directory; any other failure is retried up to attempts times
// with backoff, each failure logged, and if it persists the sidecar starts
// anyway, not ready, with an error logged, since requests will succeed once
// the storage is back.
func CheckAtStart(ctx context.Context, p Prober, dir string, attempts int, log hclog.Logger) error {
	wait := func(ctx context.Context, d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	return checkAtStart(ctx, p, dir, attempts, wait, log)
}

func checkAtStart(ctx context.Context, p Prober, dir string, attempts int, sleep func(context.Context, time.Duration) error, log hclog.Logger) error {
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
