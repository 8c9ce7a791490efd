package producer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

// Get returns the producer's snapshot; found is false when there is none.
// Expired snapshots that cleanup has not removed yet are returned, as in
// Fluss. The znode is read once and its files are read by the paths it
// names, so expiration and offsets always come from the same snapshot.
func (r *Registry) Get(ctx context.Context, producerID *string) (Snapshot, bool, error) {
	if err := checkID(producerID); err != nil {
		return Snapshot{}, false, err
	}
	id := *producerID
	since := arrival(ctx)
	// synced: the reads from here on need no sync of their own.
	synced := !r.linearGets || r.reads.Current(since)
	for attempt := 0; attempt < attempts; attempt++ {
		var (
			s     offsets.Snapshot
			inc   offsets.Incarnation
			found bool
			err   error
		)
		switch {
		case synced:
			s, inc, found, err = r.snapshots.GetSnapshot(ctx, id)
		case r.fast.Linear != nil:
			s, inc, found, err = r.fast.Linear.GetSnapshotLinear(ctx, id, func(ctx context.Context) error { return r.current(ctx, since) })
			synced = true
		default:
			if err := r.current(ctx, since); err != nil {
				return Snapshot{}, false, r.storeError("get", id, err)
			}
			synced = true
			s, inc, found, err = r.snapshots.GetSnapshot(ctx, id)
		}
		if err != nil {
			return Snapshot{}, false, r.storeError("get", id, err)
		}
		if !found {
			return Snapshot{}, false, nil
		}
		tables, missing, err := r.readFiles(ctx, s.Tables)
		if err != nil {
			return Snapshot{}, false, r.storeError("get", id, err)
		}
		if missing == "" {
			return Snapshot{ProducerID: id, ExpirationTime: s.ExpirationTime, Tables: tables}, true, nil
		}
		// A file is gone. If the snapshot was deleted or replaced meanwhile
		// (by anyone: the znode read above may be older than the files'
		// removal), answer for what is there now, read after a sync; if it
		// is unchanged it is broken.
		if err := r.current(ctx, time.Now()); err != nil {
			return Snapshot{}, false, r.storeError("get", id, err)
		}
		_, now, stillThere, err := r.snapshots.GetSnapshot(ctx, id)
		if err != nil {
			return Snapshot{}, false, r.storeError("get", id, err)
		}
		if !stillThere {
			return Snapshot{}, false, nil
		}
		if now == inc {
			return Snapshot{}, false, &apierr.Error{Class: apierr.ErrSnapshotBroken, Op: "get", ProducerID: id, Path: missing}
		}
	}
	return Snapshot{}, false, &apierr.Error{Class: apierr.ErrKeptChanging, Op: "get", ProducerID: id}
}

// GetCached is Get answered from the stores' memory alone, at once: ok is
// false, and Get must answer, when the id is invalid or the stores do not
// hold the snapshot (or its absence) and every file it names. It appends
// the tables to tables[:0], so that a caller can reuse one slice; the
// tables' Buckets are shared and must not be modified. It is as current as
// Get: the caches it reads are the ones Get reads first.
//
// token names the cached znode state the answer comes from (see
// storage.CachedSnapshots): the answer for a producer id is the same as long as
// CachedToken returns the same token, since offsets files never change.
func (r *Registry) GetCached(producerID string, tables []offsets.TableOffsets) (snap Snapshot, token uint64, found, ok bool) {
	cs, cf := r.fast.Cached, r.fast.Files
	if cs == nil || cf == nil || ValidateID(&producerID) != nil {
		return Snapshot{}, 0, false, false
	}
	s, token, found, ok := cs.CachedSnapshot(producerID)
	if !ok || !found {
		return Snapshot{}, token, false, ok
	}
	tables = tables[:0]
	for _, ref := range s.Tables {
		t, ok := cf.CachedOffsets(ref.OffsetsPath)
		if !ok {
			return Snapshot{}, 0, false, false
		}
		tables = append(tables, t)
	}
	return Snapshot{ProducerID: producerID, ExpirationTime: s.ExpirationTime, Tables: tables}, token, true, true
}

// CachedToken is the first step of GetCached alone: whether the stores'
// memory holds the producer's znode state, and its token. A caller that
// kept what it derived from a GetCached answer under that answer's token
// may use it again while CachedToken returns the same token.
func (r *Registry) CachedToken(producerID string) (token uint64, found, ok bool) {
	if r.fast.Cached == nil || ValidateID(&producerID) != nil {
		return 0, false, false
	}
	_, token, found, ok = r.fast.Cached.CachedSnapshot(producerID)
	return token, found, ok
}

// readFiles reads every file of a snapshot. missing names the first file that
// does not exist; err is any other failure.
// The files are read in parallel (at most fileConcurrency at once); tables
// keep the order of refs.
func (r *Registry) readFiles(ctx context.Context, refs []offsets.FileRef) (tables []offsets.TableOffsets, missing string, err error) {
	tables = make([]offsets.TableOffsets, len(refs))
	if cached := r.fast.Files; cached != nil {
		// The common case of a recovery GET storm: every file in memory.
		// Reading them inline spares a goroutine and a context per file.
		all := true
		for i, ref := range refs {
			if tables[i], all = cached.CachedOffsets(ref.OffsetsPath); !all {
				break
			}
		}
		if all {
			return tables, "", nil
		}
	}
	var missingOnce sync.Once
	err = forEach(ctx, len(refs), r.fileConcurrency, func(ctx context.Context, i int) error {
		t, err := r.files.ReadOffsets(ctx, refs[i].OffsetsPath)
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				missingOnce.Do(func() { missing = refs[i].OffsetsPath })
				return errFileMissing
			}
			return fmt.Errorf("read offsets file %s: %w", refs[i].OffsetsPath, err)
		}
		tables[i] = t
		return nil
	})
	if missing != "" {
		return nil, missing, nil
	}
	if err != nil {
		return nil, "", err
	}
	return tables, "", nil
}

// errFileMissing stops a parallel read at the first missing file.
var errFileMissing = errors.New("offsets file missing")
