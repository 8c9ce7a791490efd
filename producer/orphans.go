package producer

import (
	"context"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

// OrphanReport counts what one orphan cleanup run did.
type OrphanReport struct {
	Deleted int // files deleted
	Kept    int // unreferenced files kept because they are younger than the grace period
	Skipped int // producers skipped because their znode could not be read
}

// CleanupOrphans deletes offsets files that no snapshot names. It differs
// from Fluss's cleanup in the two ways that make Fluss lose live data:
//   - a file younger than grace is never deleted, whether or not a znode
//     names it yet, so a register in flight on another sidecar or
//     coordinator (files written, znode not yet created) keeps its files
//     (W2);
//   - a producer whose znode cannot be read or decoded is skipped entirely,
//     never treated as "names no files" (W4);
//   - the znode is read after a sync, so another writer's snapshot that
//     this sidecar's cache has not heard of yet still protects its files.
//
// Paths are compared in their qualified form, so a znode a Java coordinator
// wrote with a bare local path still protects its file (W1).
func (r *Registry) CleanupOrphans(ctx context.Context, store storage.OrphanStore, grace time.Duration) (OrphanReport, error) {
	var rep OrphanReport
	cutoff := r.now().Add(-grace)
	dirs, err := store.ListProducerDirs(ctx)
	if err != nil {
		return rep, err
	}
	for _, id := range dirs {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		if err := r.cleanupProducerOrphans(ctx, store, id, cutoff, &rep); err != nil {
			rep.Skipped++
			r.log.Warn("orphan cleanup skipped a producer", "producer_id", id, "error", err)
		}
	}
	return rep, nil
}

func (r *Registry) cleanupProducerOrphans(ctx context.Context, store storage.OrphanStore, id string, cutoff time.Time, rep *OrphanReport) error {
	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	live := map[string]bool{}
	if ValidateID(&id) == nil {
		// Which files are live is decided on a read after a sync, never on
		// a cached view that another writer's new snapshot has not reached.
		if err := r.current(ctx, time.Now()); err != nil {
			return err
		}
		s, _, found, err := r.snapshots.GetSnapshot(ctx, id)
		if err != nil {
			return err
		}
		if found {
			for _, ref := range s.Tables {
				q, err := store.Qualify(ref.OffsetsPath)
				if err != nil {
					// A path outside our directory: nothing here can be it.
					continue
				}
				live[q] = true
			}
		}
	}
	files, err := store.ListProducerFiles(ctx, id)
	if err != nil {
		return err
	}
	for _, f := range files {
		if live[f.Path] {
			continue
		}
		if f.ModTime.After(cutoff) {
			rep.Kept++
			continue
		}
		if err := store.DeleteOffsets(ctx, f.Path); err != nil {
			r.log.Warn("could not delete orphan offsets file", "producer_id", id, "path", f.Path, "error", err)
			continue
		}
		rep.Deleted++
	}
	if _, err := store.PruneEmptyDirs(ctx, id); err != nil {
		r.log.Debug("could not prune empty directories", "producer_id", id, "error", err)
	}
	return nil
}
