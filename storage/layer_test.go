package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// untouched is a store of every kind, with every optional interface, that
// counts the calls reaching it. Its answers are empty.
type untouched struct{ calls *int }

func (u untouched) hit() { *u.calls++ }

func (u untouched) CheckSnapshot(string, offsets.Snapshot) error { u.hit(); return nil }
func (u untouched) CreateSnapshot(context.Context, string, offsets.Snapshot) (bool, error) {
	u.hit()
	return true, nil
}
func (u untouched) GetSnapshot(context.Context, string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	u.hit()
	return offsets.Snapshot{}, offsets.Incarnation{}, false, nil
}
func (u untouched) ReplaceSnapshotIf(context.Context, string, offsets.Incarnation, offsets.Snapshot) (bool, error) {
	u.hit()
	return true, nil
}
func (u untouched) DeleteSnapshotIf(context.Context, string, offsets.Incarnation) (bool, error) {
	u.hit()
	return true, nil
}
func (u untouched) Sync(context.Context) error                        { u.hit(); return nil }
func (u untouched) ListProducerIDs(context.Context) ([]string, error) { u.hit(); return nil, nil }
func (u untouched) GetSnapshotLinear(context.Context, string, func(context.Context) error) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	u.hit()
	return offsets.Snapshot{}, offsets.Incarnation{}, false, nil
}
func (u untouched) CachedSnapshot(string) (offsets.Snapshot, uint64, bool, bool) {
	return offsets.Snapshot{}, 0, false, false
}
func (u untouched) HoldsSnapshot(string) bool        { return false }
func (u untouched) KnownAbsent(string) bool          { return false }
func (u untouched) PlannedPath(string, int64) string { return "" }
func (u untouched) CachedOffsets(string) (offsets.TableOffsets, bool) {
	return offsets.TableOffsets{}, false
}
func (u untouched) WriteOffsets(context.Context, string, offsets.TableOffsets) (string, error) {
	u.hit()
	return "x", nil
}
func (u untouched) ReadOffsets(context.Context, string) (offsets.TableOffsets, error) {
	u.hit()
	return offsets.TableOffsets{}, nil
}
func (u untouched) DeleteOffsets(context.Context, string) error        { u.hit(); return nil }
func (u untouched) ListProducerDirs(context.Context) ([]string, error) { u.hit(); return nil, nil }
func (u untouched) ListProducerFiles(context.Context, string) ([]storage.FileInfo, error) {
	u.hit()
	return nil, nil
}
func (u untouched) Qualify(string) (string, error) { return "", nil }
func (u untouched) PruneEmptyDirs(context.Context, string) (bool, error) {
	u.hit()
	return true, nil
}

// every calls each method of the layer's stores that takes a context or a
// producer id, with id, and returns their errors by name.
func every(ctx context.Context, s storage.SnapshotStore, f storage.FilesAndOrphans, id string) map[string]error {
	errs := map[string]error{}
	errs["CheckSnapshot"] = s.CheckSnapshot(id, offsets.Snapshot{})
	_, errs["CreateSnapshot"] = s.CreateSnapshot(ctx, id, offsets.Snapshot{})
	_, _, _, errs["GetSnapshot"] = s.GetSnapshot(ctx, id)
	_, errs["ReplaceSnapshotIf"] = s.ReplaceSnapshotIf(ctx, id, offsets.Incarnation{}, offsets.Snapshot{})
	_, errs["DeleteSnapshotIf"] = s.DeleteSnapshotIf(ctx, id, offsets.Incarnation{})
	_, _, _, errs["GetSnapshotLinear"] = s.(storage.LinearReads).GetSnapshotLinear(ctx, id, nil)
	_, errs["WriteOffsets"] = f.WriteOffsets(ctx, id, offsets.TableOffsets{})
	_, errs["ListProducerFiles"] = f.ListProducerFiles(ctx, id)
	_, errs["PruneEmptyDirs"] = f.PruneEmptyDirs(ctx, id)
	return errs
}

// The layer refuses an ended context and a bad producer id before the
// backend sees the call, and passes a good call through.
func TestLayerChecksBeforeTheBackend(t *testing.T) {
	calls := 0
	inner := untouched{&calls}
	s, f := storage.CheckedSnapshots(inner), storage.CheckedFilesAndOrphans(inner)

	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	errs := every(canceled, s, f, "p")
	errs["Sync"] = s.Sync(canceled)
	_, errs["ListProducerIDs"] = s.ListProducerIDs(canceled)
	_, errs["ReadOffsets"] = f.ReadOffsets(canceled, "x")
	errs["DeleteOffsets"] = f.DeleteOffsets(canceled, "x")
	_, errs["ListProducerDirs"] = f.ListProducerDirs(canceled)
	for name, err := range errs {
		if name == "CheckSnapshot" {
			continue // takes no context
		}
		if storeerr.Classify(err) != storeerr.ErrUnavailable || storeerr.OutcomeUnknown(err) {
			t.Errorf("%s with a canceled context: %v, want a definite ErrUnavailable", name, err)
		}
	}
	if calls != 1 {
		t.Errorf("%d calls with a canceled context reached the backend, want 1 (CheckSnapshot)", calls)
	}

	calls = 0
	for _, id := range []string{"", "..", "a/b", "a\x00b"} {
		for name, err := range every(context.Background(), s, f, id) {
			if !errors.Is(err, storage.ErrInvalidName) {
				t.Errorf("%s(%q): %v, want ErrInvalidName", name, id, err)
			}
		}
	}
	// Refused for a file alone: Fluss takes no such producer id.
	if _, err := f.WriteOffsets(context.Background(), "a b", offsets.TableOffsets{}); !errors.Is(err, storage.ErrInvalidName) {
		t.Errorf(`WriteOffsets("a b"): %v, want ErrInvalidName`, err)
	}
	if calls != 0 {
		t.Errorf("%d calls with a bad producer id reached the backend", calls)
	}

	for name, err := range every(context.Background(), s, f, "p") {
		if err != nil {
			t.Errorf("%s(p): %v", name, err)
		}
	}
	if calls != 9 {
		t.Errorf("%d good calls reached the backend, want 9", calls)
	}
}

// WithSnapshotExtras offers exactly the optional interfaces it is given,
// in every combination, and nothing else of its base.
func TestWithSnapshotExtras(t *testing.T) {
	full := untouched{new(int)}
	for n := range 8 {
		x := storage.SnapshotExtras{}
		if n&1 != 0 {
			x.Linear = full
		}
		if n&2 != 0 {
			x.Cached = full
		}
		if n&4 != 0 {
			x.Absence = full
		}
		got := storage.SnapshotExtrasOf(storage.WithSnapshotExtras(full, x))
		if (got.Linear != nil) != (x.Linear != nil) || (got.Cached != nil) != (x.Cached != nil) || (got.Absence != nil) != (x.Absence != nil) {
			t.Errorf("extras %03b: the result offers linear %v, cached %v, absence %v", n, got.Linear != nil, got.Cached != nil, got.Absence != nil)
		}
	}
	for _, cached := range []bool{false, true} {
		var c storage.CachedFiles
		if cached {
			c = full
		}
		_, files := storage.WithFileExtras(full, c).(storage.CachedFiles)
		_, both := storage.WithFileAndOrphanExtras(full, c).(storage.CachedFiles)
		if files != cached || both != cached {
			t.Errorf("CachedFiles given %v: offered %v and %v", cached, files, both)
		}
	}
}
