package remotestore

import (
	"bytes"
	"context"
	"fmt"
	"time"
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
