package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// ProbeFilePrefix starts the name of the small file Probe writes directly in
// the producers directory and deletes again. Listings of producer
// directories never report it: it is a file, not a directory.
const ProbeFilePrefix = ".fluss-sidecar-probe-"

// probeData is what a probe file holds.
var probeData = []byte("fluss-sidecar storage probe\n")

// Probe writes a small file where offsets files go, directly in
// {dir}/producers, reads it back and deletes it, so that a start (and the
// readiness check) can tell storage that takes offsets files from storage
// that cannot: permissions or bucket policies that allow writes elsewhere
// only fail here. Classify a failure with Classify or gcerrors.Code
// (PermissionDenied, NotFound for a missing bucket, ...). It does not
// retry; every error names the producers directory.
func (s *Store) Probe(ctx context.Context) error {
	key := s.producersKey + ProbeFilePrefix + s.newUUID()
	err := s.guard("probe", func() error {
		return s.bucket.WriteAll(ctx, key, probeData, nil)
	})
	if err != nil {
		s.removeProbe(ctx, key)
		return classified(fmt.Errorf("remote: write a probe file in %s: %w", s.producers, err))
	}
	var got []byte
	err = s.guard("probe", func() (err error) {
		got, err = s.bucket.ReadAll(ctx, key)
		return err
	})
	if err == nil && !bytes.Equal(got, probeData) {
		err = fmt.Errorf("read %d bytes, wrote %d", len(got), len(probeData))
	}
	if err != nil {
		s.removeProbe(ctx, key)
		return classified(fmt.Errorf("remote: read back a probe file in %s: %w", s.producers, err))
	}
	// Deleted even when ctx ended meanwhile (a shutdown during the probe):
	// the file would otherwise stay.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeCleanupTimeout)
	defer cancel()
	if err := s.guard("probe", func() error { return s.bucket.Delete(dctx, key) }); err != nil {
		return classified(fmt.Errorf("remote: delete a probe file in %s: %w", s.producers, err))
	}
	return nil
}

// probeCleanupTimeout bounds the deletion of a probe file once the probe's
// own context has ended.
const probeCleanupTimeout = 10 * time.Second

// removeProbe deletes a probe file after a failure, best effort: a write
// that failed may still have left it.
func (s *Store) removeProbe(ctx context.Context, key string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeCleanupTimeout)
	defer cancel()
	_ = s.guard("probe", func() error { return s.bucket.Delete(ctx, key) })
}

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
	return checkAtStart(ctx, p, dir, attempts, sleepContext, log)
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
