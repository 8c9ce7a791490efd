package producer

import (
	"context"
)

// CleanupExpired deletes every snapshot expired at the start of the run and
// returns how many it deleted. An error on one producer is logged and does
// not stop the others.
func (r *Registry) CleanupExpired(ctx context.Context) (int, error) {
	now := r.nowMillis()
	ids, err := r.snapshots.ListProducerIDs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		deleted, err := r.cleanupOne(ctx, id, now)
		if err != nil {
			r.log.Warn("expired snapshot cleanup failed", "producer_id", id, "error", err)
			continue
		}
		if deleted {
			n++
		}
	}
	return n, nil
}

func (r *Registry) cleanupOne(ctx context.Context, id string, now int64) (bool, error) {
	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return false, err
	}
	defer unlock()
	s, inc, found, err := r.snapshots.GetSnapshot(ctx, id)
	if err != nil || !found || !s.Expired(now) {
		return false, err
	}
	w := r.deleteIf(ctx, id, inc)
	if !w.applied {
		return false, w.err
	}
	r.deleteFiles(ctx, id, s.Tables)
	r.log.Debug("deleted expired snapshot", "producer_id", id, "expiration_time", s.ExpirationTime)
	return true, nil
}
