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
// the znode back after Sync. Holding exactly s (same expiration, same
// UUID-named files) means the create was applied. Anything else settles
// nothing: no znode, or another writer's, may mean that ours was never
// applied, or that it was applied and then found, deleted (files and all)
// or replaced by another writer. Sending s again would revive a snapshot
// whose files are gone and undo an acknowledged delete; answering "another
// writer won" would deny a snapshot that clients may already have read. So
// the outcome stays unknown (the files stay for orphan cleanup) and the
// client's retry decides afresh.
func (r *Registry) create(ctx context.Context, id string, s offsets.Snapshot) write {
	created, err := r.snapshots.CreateSnapshot(ctx, id, s)
	if err == nil {
		return write{applied: created}
	}
	if !storeerr.OutcomeUnknown(err) {
		return write{err: err}
	}
	r.log.Warn("snapshot create interrupted; reading it back", "producer_id", id, "error", err)
	return r.settleUnknown(ctx, id, s, "create", err)
}

// settleUnknown reads back the snapshot after a write of s whose outcome
// was unknown (err) and no attempt since was applied: s there means
// applied; anything else leaves the outcome unknown (create explains why).
func (r *Registry) settleUnknown(ctx context.Context, id string, s offsets.Snapshot, op string, err error) write {
	w := write{uncertain: true}
	cur, _, found, serr := r.readSettled(ctx, id)
	switch {
	case serr != nil:
		w.err = unknownOutcome(serr)
	case found && cur.Equal(s):
		w.applied = true
	default:
		what := "no snapshot is there"
		if found {
			what = "another snapshot is there"
		}
		w.err = unknownOutcome(fmt.Errorf("after a %s whose outcome was unknown %s: it was never applied, "+
			"or applied and then changed by another writer; retry to learn the state: %w", op, what, err))
	}
	return w
}

// replace overwrites the expired incarnation inc with s in place, settling
// unknown outcomes by reading back: s there means applied; inc still there
// at its version means not applied (a replace raises the version, which
// never comes back), and it is sent again; anything else leaves the outcome
// unknown, as for create.
func (r *Registry) replace(ctx context.Context, id string, inc offsets.Incarnation, s offsets.Snapshot) write {
	var w write
	var first error // the first unknown outcome
	for try := 0; try < settleAttempts; try++ {
		replaced, err := r.snapshots.ReplaceSnapshotIf(ctx, id, inc, s)
		if err == nil {
			if !replaced && w.uncertain {
				// Not applied now, after an attempt read back as not
				// applied: whatever is there, ours is not, or is no longer.
				return r.settleUnknown(ctx, id, s, "replace", first)
			}
			w.applied = replaced
			return w
		}
		if !storeerr.OutcomeUnknown(err) {
			w.err = err
			return w
		}
		w.uncertain = true
		if first == nil {
			first = err
		}
		r.log.Warn("snapshot replace interrupted; reading it back", "producer_id", id, "error", err)
		cur, curInc, found, serr := r.readSettled(ctx, id)
		switch {
		case serr != nil:
			w.err = unknownOutcome(serr)
			return w
		case found && cur.Equal(s):
			w.applied = true
			return w
		case found && curInc == inc:
			continue // not applied; the incarnation is still there at its version
		default:
			return r.settleUnknown(ctx, id, s, "replace", err)
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
