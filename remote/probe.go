package remote

import (
	"context"
	"fmt"
	"strings"
)

// ProbeFilePrefix starts the name of the small file Probe writes at the root
// of remote.data.dir and deletes again.
const ProbeFilePrefix = ".fluss-sidecar-probe-"

// Probe writes, reads back and deletes a small file at the root of
// remote.data.dir, outside the producers directory, so that a start can
// tell storage that works from storage that cannot: classify a failure with
// gcerrors.Code (PermissionDenied, NotFound for a missing bucket, ...). It
// does not retry.
func (s *Store) Probe(ctx context.Context) error {
	key := strings.TrimSuffix(s.producersKey, ProducersDirName+"/") + ProbeFilePrefix + s.newUUID()
	if err := s.bucket.WriteAll(ctx, key, []byte("probe\n"), nil); err != nil {
		return fmt.Errorf("remote: write a probe file in %s: %w", s.dir, err)
	}
	if _, err := s.bucket.ReadAll(ctx, key); err != nil {
		s.bucket.Delete(context.WithoutCancel(ctx), key)
		return fmt.Errorf("remote: read back a probe file in %s: %w", s.dir, err)
	}
	if err := s.bucket.Delete(ctx, key); err != nil {
		return fmt.Errorf("remote: delete a probe file in %s: %w", s.dir, err)
	}
	return nil
}
