package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/storage/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

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

// probeStorage probes remote storage where offsets files go (a file
// written, read back and deleted in the producers directory) until it
// succeeds, retrying with backoff; then, every interval (0: never), again,
// so that /readyz reports storage that stops accepting writes after the
// start (a full or read-only disk, a revoked permission, an endpoint gone)
// and recovers when it takes them again.
func (o *ops) probeStorage(ctx context.Context, files *remote.Store, interval time.Duration) {
	const firstBackoff = 500 * time.Millisecond
	backoff := firstBackoff
	dir := files.ProducersDir().String()
	everOK := false
	for ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := files.Probe(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		o.mu.Lock()
		wasOK := o.storageOK
		o.storageOK, o.storageErr = err == nil, err
		o.mu.Unlock()
		wait := interval
		switch {
		case err == nil && !everOK:
			o.log.Debug("remote storage answered the start-up probe", "dir", dir)
		case err == nil && !wasOK:
			o.log.Info("remote storage accepts writes again; ready", "dir", dir)
		case err != nil && wasOK:
			o.log.Warn("remote storage stopped accepting writes; not ready", "dir", dir, "error", err, "retry_in", backoff)
		case err != nil:
			o.log.Warn("remote storage does not accept writes; not ready", "dir", dir, "error", err, "retry_in", backoff)
		}
		everOK = everOK || err == nil
		if err == nil {
			if interval <= 0 {
				return
			}
			backoff = firstBackoff
		} else {
			wait = backoff
			backoff = 2 * backoff
			if interval > 0 {
				backoff = min(backoff, interval)
			}
			backoff = min(backoff, 30*time.Second)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}
