package producer

import (
	"context"
	"errors"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// Register stores a snapshot of the producer's offsets unless a live one
// exists. An expired snapshot is replaced in place.
//
// The rules that keep an answered CREATED readable (docs/semantics.md):
//   - a snapshot that is too large for the store is refused before any
//     file is written;
//   - once the first znode write is sent, the register runs to its end on
//     its own, bounded by SettleTimeout, whether or not the caller is still
//     there; the caller gets REQUEST_TIME_OUT if its context ends first;
//   - a write whose outcome is unknown is settled by reading after Sync;
//   - a file is deleted only when storage proved that no znode names it:
//     the znode write that would name it was never sent, or was answered
//     "not applied" with no earlier attempt left unknown. Otherwise it stays
//     for orphan cleanup, whose grace period protects it.
func (r *Registry) Register(ctx context.Context, in RegisterInput) (Result, error) {
	if err := checkID(in.ProducerID); err != nil {
		return 0, err
	}
	id := *in.ProducerID
	tables, ferr := normalize(id, in.Tables)
	if ferr != nil {
		return 0, ferr
	}
	tables, exact := coordinatorOrder(in.Tables, tables)
	if !exact {
		r.log.Debug("the znode's table order may differ from a coordinator's (Java tree bins)", "producer_id", id, "tables", len(tables))
	}
	ttl := r.defaultTTL.Milliseconds()
	if in.TTLMillis != nil {
		ttl = *in.TTLMillis
	}
	exp, err := expiration(id, r.nowMillis(), ttl)
	if err != nil {
		return 0, err
	}
	if err := r.checkSize(id, exp, tables); err != nil {
		return 0, err
	}

	unlock, err := r.locks.lock(ctx, id)
	if err != nil {
		return 0, r.storeError("register", id, err)
	}
	return detached(r, ctx, "register", id, unlock, func(bg context.Context) (Result, error) {
		return r.register(ctx, bg, id, tables, ttl)
	})
}

// checkSize refuses a snapshot the store could not hold, before anything is
// written. Offsets paths are planned at their final length.
func (r *Registry) checkSize(id string, exp int64, tables []offsets.TableOffsets) error {
	planned := offsets.Snapshot{ExpirationTime: exp, Tables: make([]offsets.FileRef, len(tables))}
	for i, t := range tables {
		planned.Tables[i] = offsets.FileRef{TableID: t.TableID, OffsetsPath: r.files.PlannedPath(id, t.TableID)}
	}
	if err := r.snapshots.CheckSnapshot(id, planned); err != nil {
		if errors.Is(err, storeerr.ErrTooLarge) {
			return &apierr.Error{Class: apierr.ErrSnapshotTooLarge, Op: "register", ProducerID: id, Tables: len(tables), Err: err}
		}
		return r.storeError("register", id, err)
	}
	return nil
}

// register is Register's work under the producer's lock. caller is the
// client's context: it may stop the register only before the first znode
// write is sent. bg carries everything from then on.
func (r *Registry) register(caller, bg context.Context, id string, tables []offsets.TableOffsets, ttl int64) (Result, error) {
	since := arrival(caller)
	for attempt := 0; attempt < attempts; attempt++ {
		if err := caller.Err(); err != nil {
			return 0, r.storeError("register", id, err)
		}
		// Look before writing files: a live snapshot means there is nothing
		// to write (Fluss writes and deletes files on every such call). The
		// first attempt takes the store's word that there is none, if it
		// has one; a later attempt, after a lost race, always reads, after
		// a sync. Absence needs no proof: the create is conditional. A live
		// snapshot answers ALREADY_EXISTS, so it is read again after a sync
		// unless the read already followed one.
		var (
			existing offsets.Snapshot
			inc      offsets.Incarnation
			found    bool
		)
		if attempt > 0 || !r.knownAbsent(id) {
			var err error
			existing, inc, found, err = r.readToDecide(caller, bg, id, since, attempt > 0,
				func(s offsets.Snapshot, found bool) bool { return found && !s.Expired(r.nowMillis()) })
			if err != nil {
				return 0, r.storeError("register", id, err)
			}
		}
		if found && !existing.Expired(r.nowMillis()) {
			return AlreadyExists, nil
		}
		refs, err := r.writeFiles(bg, id, tables)
		if err != nil {
			return 0, r.storeError("register", id, err)
		}
		// The last moment the caller can still stop the register: nothing
		// names the files yet.
		if err := caller.Err(); err != nil {
			r.deleteFiles(bg, id, refs)
			return 0, r.storeError("register", id, err)
		}
		// The expiration is taken after the files are written, so slow
		// storage does not shorten the TTL.
		exp, ferr := expiration(id, r.nowMillis(), ttl)
		if ferr != nil {
			r.deleteFiles(bg, id, refs)
			return 0, ferr
		}
		snap := offsets.Snapshot{ExpirationTime: exp, Tables: refs}
		var w write
		if found {
			w = r.replace(bg, id, inc, snap)
		} else {
			w = r.create(bg, id, snap)
		}
		switch {
		case w.applied:
			if found {
				// The replaced snapshot's files: its znode no longer names them.
				r.deleteFiles(bg, id, existing.Tables)
			}
			return Created, nil
		case !w.uncertain:
			r.deleteFiles(bg, id, refs) // proven: no znode names them
		default:
			r.log.Warn("register left its files for orphan cleanup: an attempt's outcome was unknown",
				"producer_id", id, "files", len(refs))
		}
		if w.err != nil {
			return 0, r.storeError("register", id, w.err)
		}
		// Another writer changed the snapshot meanwhile: look again.
	}
	// Every attempt lost a race. Answer ALREADY_EXISTS only when a live
	// snapshot really is there (Fluss answers it regardless).
	if err := r.current(bg, time.Now()); err != nil {
		return 0, r.storeError("register", id, err)
	}
	existing, _, found, err := r.snapshots.GetSnapshot(bg, id)
	if err != nil {
		return 0, r.storeError("register", id, err)
	}
	if found && !existing.Expired(r.nowMillis()) {
		return AlreadyExists, nil
	}
	return 0, r.keptChanging("register", id)
}

// knownAbsent asks the snapshot store's AbsenceHints, if it was given them.
func (r *Registry) knownAbsent(id string) bool {
	return r.fast.Absence != nil && r.fast.Absence.KnownAbsent(id)
}

// writeFiles writes one file per table, in the order of tables (a
// coordinator's, see coordinatorOrder). If one write fails, the files
// already written are removed: nothing names them yet.
func (r *Registry) writeFiles(ctx context.Context, id string, tables []offsets.TableOffsets) ([]offsets.FileRef, error) {
	refs := make([]offsets.FileRef, len(tables))
	err := forEach(ctx, len(tables), r.fileConcurrency, func(ctx context.Context, i int) error {
		path, err := r.files.WriteOffsets(ctx, id, tables[i])
		refs[i] = offsets.FileRef{TableID: tables[i].TableID, OffsetsPath: path}
		return err
	})
	if err != nil {
		r.deleteFiles(context.WithoutCancel(ctx), id, written(refs))
		return nil, err
	}
	return refs, nil
}

// written keeps the refs whose file was written.
func written(refs []offsets.FileRef) []offsets.FileRef {
	out := make([]offsets.FileRef, 0, len(refs))
	for _, ref := range refs {
		if ref.OffsetsPath != "" {
			out = append(out, ref)
		}
	}
	return out
}
