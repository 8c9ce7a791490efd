package producer

import (
	"context"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// DeleteCheck lets the caller veto a delete after seeing which tables the
// stored snapshot covers (authorization uses it). It sees the znode's table
// ids; no remote file is read for it.
type DeleteCheck func(tableIDs []int64) error

// Delete removes the producer's snapshot: the znode first, then its files.
// Deleting a missing snapshot succeeds. The znode is removed only if it is
// the one that check approved. Once the delete is sent it runs to its end
// even if the caller leaves (see Register).
func (r *Registry) Delete(ctx context.Context, producerID *string, check DeleteCheck) error {
	_, err := r.DeleteSnapshot(ctx, producerID, check)
	return err
}

// Deleted is what a successful delete did: Found is false when there was
// no snapshot to delete (the answer is the same SUCCESS); TableIDs are the
// tables of the snapshot it deleted, as its znode names them.
type Deleted struct {
	Found    bool
	TableIDs []int64
}

// DeleteSnapshot is Delete, saying what it deleted.
func (r *Registry) DeleteSnapshot(ctx context.Context, producerID *string, check DeleteCheck) (Deleted, error) {
	if err := checkID(producerID); err != nil {
		return Deleted{}, err
	}
	id := *producerID
	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return Deleted{}, r.storeError("delete", id, err)
	}
	return detached(r, ctx, "delete", id, unlock, func(bg context.Context) (Deleted, error) {
		return r.delete(ctx, bg, id, check)
	})
}

func (r *Registry) delete(caller, bg context.Context, id string, check DeleteCheck) (Deleted, error) {
	since := arrival(caller)
	for attempt := 0; attempt < attempts; attempt++ {
		if err := caller.Err(); err != nil {
			return Deleted{}, r.storeError("delete", id, err)
		}
		// A snapshot found is deleted by a conditional write, whose outcome
		// is authoritative; "nothing to delete" is answered only from a
		// read after a sync. A later attempt, after a lost race, syncs
		// first.
		s, inc, found, err := r.readToDecide(caller, bg, id, since, attempt > 0,
			func(_ offsets.Snapshot, found bool) bool { return !found })
		if err != nil {
			return Deleted{}, r.storeError("delete", id, err)
		}
		if !found {
			return Deleted{}, nil
		}
		ids := make([]int64, len(s.Tables))
		for i, t := range s.Tables {
			ids[i] = t.TableID
		}
		if check != nil {
			if err := check(ids); err != nil {
				return Deleted{}, err
			}
		}
		w := r.deleteIf(bg, id, inc)
		if w.applied {
			r.deleteFiles(bg, id, s.Tables)
			return Deleted{Found: true, TableIDs: ids}, nil
		}
		if w.err != nil {
			return Deleted{}, r.storeError("delete", id, w.err)
		}
	}
	return Deleted{}, r.keptChanging("delete", id)
}

// deleteFiles removes files best effort: a file left behind is an orphan
// that cleanup removes later, never a correctness problem.
func (r *Registry) deleteFiles(ctx context.Context, id string, refs []offsets.FileRef) {
	_ = forEach(ctx, len(refs), r.fileConcurrency, func(ctx context.Context, i int) error {
		if err := r.files.DeleteOffsets(ctx, refs[i].OffsetsPath); err != nil {
			r.log.Warn("could not delete offsets file", "producer_id", id, "path", refs[i].OffsetsPath, "error", err)
		}
		return nil // one failure must not stop the other deletes
	})
}
