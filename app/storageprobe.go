package app

import (
	"context"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
)

// probeStorage probes remote storage where offsets files go (a file
// written, read back and deleted in the producers directory) until it
// succeeds, retrying with backoff; then, every interval (0: never), again,
// so that /readyz reports storage that stops accepting writes after the
// start (a full or read-only disk, a revoked permission, an endpoint gone)
// and recovers when it takes them again.
func (o *ops) probeStorage(ctx context.Context, files *remotestore.Store, interval time.Duration) {
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
		// The change is logged before it is published, so whoever sees the
		// new state (a /readyz answer) finds its line in the log. This
		// loop is the state's only writer.
		o.mu.Lock()
		wasOK := o.storageOK
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
		o.mu.Lock()
		o.storageOK, o.storageErr = err == nil, err
		o.mu.Unlock()
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
