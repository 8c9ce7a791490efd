package producer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// write is the settled outcome of a conditional znode write.
//   - applied: the write is in place (possibly learnt by reading back);
//   - uncertain: some attempt's outcome was unknown when it failed, so a
//     late application cannot be ruled out by this process alone and the
//     files the write names must not be deleted;
//   - err: the outcome could not be settled (err matches
//     storeerr.ErrOutcomeUnknown) or the write failed for certain.
//
// Neither applied nor err means the store definitely did not apply the
// write because another writer got there first.
type write struct {
	applied   bool
	uncertain bool
	err       error
}

// settleAttempts bounds how often one write is sent again after reading
// back showed it was not applied.
const settleAttempts = 3

// create creates the znode for s, settling an unknown outcome by reading
// the znode back after Sync: holding exactly s (same expiration, same
// UUID-named files) means the create was applied; another snapshot means
// another writer won, before or after ours. No znode settles nothing: the
// create may never have been applied, or it may have been applied and then
// deleted by another writer that found it, files and all. Sending s again
// would bring such a snapshot back, naming files that are gone, and undo a
// delete already acknowledged, so the outcome stays unknown (the files stay
// for orphan cleanup) and the client's retry decides afresh. Only create
// has this ambiguity: the state it starts from, no znode, can come back,
// while replace and delete start from an incarnation at a version that,
// once changed, never returns.
func (r *Registry) create(ctx context.Context, id string, s offsets.Snapshot) write {
	created, err := r.snapshots.CreateSnapshot(ctx, id, s)
	if err == nil {
		return write{applied: created}
	}
	if !storeerr.OutcomeUnknown(err) {
		return write{err: err}
	}
	w := write{uncertain: true}
	r.log.Warn("snapshot create interrupted; reading it back", "producer_id", id, "error", err)
	cur, _, found, serr := r.readSettled(ctx, id)
	switch {
	case serr != nil:
		w.err = unknownOutcome(serr)
	case found:
		w.applied = cur.Equal(s)
	default:
		w.err = unknownOutcome(fmt.Errorf("no snapshot is there after a create whose outcome was unknown: it was never applied, "+
			"or applied and deleted since by another writer; retry to register: %w", err))
	}
	return w
}

// replace overwrites the expired incarnation inc with s in place, settling
// unknown outcomes as create does: s read back means applied; inc still
// there unchanged means not applied, and it is sent again; anything else
// means another writer changed the snapshot.
func (r *Registry) replace(ctx context.Context, id string, inc offsets.Incarnation, s offsets.Snapshot) write {
	var w write
	for try := 0; try < settleAttempts; try++ {
		replaced, err := r.snapshots.ReplaceSnapshotIf(ctx, id, inc, s)
		if err == nil {
			if !replaced && w.uncertain {
				cur, _, found, serr := r.readSettled(ctx, id)
				if serr != nil {
					w.err = unknownOutcome(serr)
					return w
				}
				w.applied = found && cur.Equal(s)
				return w
			}
			w.applied = replaced
			return w
		}
		if !storeerr.OutcomeUnknown(err) {
			w.err = err
			return w
		}
		w.uncertain = true
		r.log.Warn("snapshot replace interrupted; reading it back", "producer_id", id, "error", err)
		cur, curInc, found, serr := r.readSettled(ctx, id)
		if serr != nil {
			w.err = unknownOutcome(serr)
			return w
		}
		switch {
		case found && cur.Equal(s):
			w.applied = true
			return w
		case found && curInc == inc:
			continue // not applied; the incarnation is still there
		default:
			return w
		}
	}
	w.err = unknownOutcome(errors.New("the replace could not be settled"))
	return w
}

// deleteIf deletes incarnation inc, settling unknown outcomes: afterwards
// applied means inc is gone (whoever removed it), so its files are named by
// no znode; a znode of the same incarnation but another version means it
// was replaced in place and nothing was deleted.
func (r *Registry) deleteIf(ctx context.Context, id string, inc offsets.Incarnation) write {
	var w write
	for try := 0; try < settleAttempts; try++ {
		deleted, err := r.snapshots.DeleteSnapshotIf(ctx, id, inc)
		if err == nil {
			w.applied = deleted
			return w
		}
		if !storeerr.OutcomeUnknown(err) {
			w.err = err
			return w
		}
		w.uncertain = true
		r.log.Warn("snapshot delete interrupted; reading it back", "producer_id", id, "error", err)
		_, curInc, found, serr := r.readSettled(ctx, id)
		if serr != nil {
			w.err = unknownOutcome(serr)
			return w
		}
		switch {
		case !found || curInc.Czxid != inc.Czxid:
			w.applied = true // inc is gone
			return w
		case curInc == inc:
			continue // not applied
		default:
			return w // replaced in place by another writer
		}
	}
	w.err = unknownOutcome(errors.New("the delete could not be settled"))
	return w
}

// readSettled reads the znode after Sync, waiting while the store is
// unavailable, until ctx ends.
func (r *Registry) readSettled(ctx context.Context, id string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	pause := 50 * time.Millisecond
	for {
		err := r.snapshots.Sync(ctx)
		if err == nil {
			s, inc, found, gerr := r.snapshots.GetSnapshot(ctx, id)
			if gerr == nil {
				return s, inc, found, nil
			}
			err = gerr
		}
		if !storeerr.Transient(err) || ctx.Err() != nil {
			return offsets.Snapshot{}, offsets.Incarnation{}, false, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return offsets.Snapshot{}, offsets.Incarnation{}, false, err
		case <-t.C:
		}
		pause = min(2*pause, time.Second)
	}
}

// unknownOutcome marks err as leaving a write's outcome unknown.
func unknownOutcome(err error) error {
	if storeerr.OutcomeUnknown(err) {
		return err
	}
	class := storeerr.Classify(err)
	if class == nil {
		class = storeerr.ErrUnavailable
	}
	return storeerr.New(class, true, err)
}
