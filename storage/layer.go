package storage

import (
	"context"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// The portable layer: every backend is run behind it, as a go-cloud
// driver is behind its portable type. It checks, in one place and before
// the backend is called, what the contract asks of every store:
//
//   - a call whose context has ended fails with the class
//     storeerr.ContextClass gives, and nothing is applied (Ended);
//   - a snapshot's producer id names one znode (CheckZnodeName);
//   - an offsets file is written only for a producer id Fluss accepts
//     (CheckFileProducerID), and the orphan listings take only a producer
//     id that is one path segment (CheckSegment).
//
// Where an offsets path points stays the backend's to check: only it knows
// its producers directory and the forms of a path that name it. The layer
// offers the optional interfaces the backend offers, and no others.

// layerName prefixes the layer's errors.
const layerName = "storage"

// CheckedSnapshots returns inner behind the portable layer.
func CheckedSnapshots(inner SnapshotStore) SnapshotStore {
	x := SnapshotExtrasOf(inner)
	if x.Linear != nil {
		x.Linear = checkedLinear{x.Linear}
	}
	return WithSnapshotExtras(checkedSnapshots{inner}, x)
}

// CheckedFiles returns inner behind the portable layer.
func CheckedFiles(inner FileStore) FileStore {
	cached, _ := inner.(CachedFiles)
	return WithFileExtras(checkedFiles{inner}, cached)
}

// CheckedOrphans returns inner behind the portable layer.
func CheckedOrphans(inner OrphanStore) OrphanStore {
	return checkedOrphans{inner}
}

// CheckedFilesAndOrphans returns inner, a store of both kinds, behind the
// portable layer, still of both kinds.
func CheckedFilesAndOrphans(inner FilesAndOrphans) FilesAndOrphans {
	cached, _ := inner.(CachedFiles)
	return WithFileAndOrphanExtras(checkedFilesAndOrphans{checkedFiles{inner}, checkedOrphans{inner}}, cached)
}

type checkedSnapshots struct{ inner SnapshotStore }

func (c checkedSnapshots) CheckSnapshot(id string, s offsets.Snapshot) error {
	if err := CheckZnodeName(id); err != nil {
		return err
	}
	return c.inner.CheckSnapshot(id, s)
}

func (c checkedSnapshots) CreateSnapshot(ctx context.Context, id string, s offsets.Snapshot) (bool, error) {
	if err := checkCall(ctx, id); err != nil {
		return false, err
	}
	return c.inner.CreateSnapshot(ctx, id, s)
}

func (c checkedSnapshots) GetSnapshot(ctx context.Context, id string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	if err := checkCall(ctx, id); err != nil {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, err
	}
	return c.inner.GetSnapshot(ctx, id)
}

func (c checkedSnapshots) ReplaceSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation, s offsets.Snapshot) (bool, error) {
	if err := checkCall(ctx, id); err != nil {
		return false, err
	}
	return c.inner.ReplaceSnapshotIf(ctx, id, inc, s)
}

func (c checkedSnapshots) DeleteSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation) (bool, error) {
	if err := checkCall(ctx, id); err != nil {
		return false, err
	}
	return c.inner.DeleteSnapshotIf(ctx, id, inc)
}

func (c checkedSnapshots) Sync(ctx context.Context) error {
	if err := Ended(ctx, layerName); err != nil {
		return err
	}
	return c.inner.Sync(ctx)
}

func (c checkedSnapshots) ListProducerIDs(ctx context.Context) ([]string, error) {
	if err := Ended(ctx, layerName); err != nil {
		return nil, err
	}
	return c.inner.ListProducerIDs(ctx)
}

type checkedLinear struct{ inner LinearReads }

func (c checkedLinear) GetSnapshotLinear(ctx context.Context, id string, wait func(context.Context) error) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	if err := checkCall(ctx, id); err != nil {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, err
	}
	return c.inner.GetSnapshotLinear(ctx, id, wait)
}

// checkCall checks a snapshot call's producer id, then its context.
func checkCall(ctx context.Context, id string) error {
	if err := CheckZnodeName(id); err != nil {
		return err
	}
	return Ended(ctx, layerName)
}

type checkedFiles struct{ inner FileStore }

func (c checkedFiles) PlannedPath(id string, tableID int64) string {
	return c.inner.PlannedPath(id, tableID)
}

func (c checkedFiles) WriteOffsets(ctx context.Context, id string, t offsets.TableOffsets) (string, error) {
	if err := CheckFileProducerID(id); err != nil {
		return "", err
	}
	if err := Ended(ctx, layerName); err != nil {
		return "", err
	}
	return c.inner.WriteOffsets(ctx, id, t)
}

func (c checkedFiles) ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error) {
	if err := Ended(ctx, layerName); err != nil {
		return offsets.TableOffsets{}, err
	}
	return c.inner.ReadOffsets(ctx, path)
}

func (c checkedFiles) DeleteOffsets(ctx context.Context, path string) error {
	if err := Ended(ctx, layerName); err != nil {
		return err
	}
	return c.inner.DeleteOffsets(ctx, path)
}

type checkedOrphans struct{ inner OrphanStore }

func (c checkedOrphans) ListProducerDirs(ctx context.Context) ([]string, error) {
	if err := Ended(ctx, layerName); err != nil {
		return nil, err
	}
	return c.inner.ListProducerDirs(ctx)
}

func (c checkedOrphans) ListProducerFiles(ctx context.Context, id string) ([]FileInfo, error) {
	if err := CheckSegment(id); err != nil {
		return nil, err
	}
	if err := Ended(ctx, layerName); err != nil {
		return nil, err
	}
	return c.inner.ListProducerFiles(ctx, id)
}

func (c checkedOrphans) Qualify(path string) (string, error) { return c.inner.Qualify(path) }

func (c checkedOrphans) DeleteOffsets(ctx context.Context, path string) error {
	if err := Ended(ctx, layerName); err != nil {
		return err
	}
	return c.inner.DeleteOffsets(ctx, path)
}

func (c checkedOrphans) PruneEmptyDirs(ctx context.Context, id string) (bool, error) {
	if err := CheckSegment(id); err != nil {
		return false, err
	}
	if err := Ended(ctx, layerName); err != nil {
		return false, err
	}
	return c.inner.PruneEmptyDirs(ctx, id)
}

// checkedFilesAndOrphans is both; DeleteOffsets, in both, is the file
// store's.
type checkedFilesAndOrphans struct {
	checkedFiles
	checkedOrphans
}

func (c checkedFilesAndOrphans) DeleteOffsets(ctx context.Context, path string) error {
	return c.checkedFiles.DeleteOffsets(ctx, path)
}
