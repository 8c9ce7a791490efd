// Package counted wraps a snapshot store and a file store (in the sidecar,
// ZooKeeper's and remote storage's, behind the portable layer) so that
// every call that reaches them is counted, by store, operation and failure
// class (the storage_* metrics). It goes beneath the snapshot cache: a
// call the cache answers is not counted.
package counted

import (
	"context"
	"errors"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// Observer counts storage calls; class is "" on success.
type Observer interface {
	StorageOp(store, op, class string)
}

// Store labels.
const (
	StoreZooKeeper = "zookeeper"
	StoreRemote    = "remote"
)

// Class names a storage failure: its storeerr class when it has one
// (timeout, unavailable, no_space, permission, too_large, corrupt), else
// what the store says (no_node, node_exists, bad_version, not_found,
// outside_path, invalid_name, malformed), else "other".
func Class(err error) string {
	if err == nil {
		return ""
	}
	switch storeerr.Classify(err) {
	case storeerr.ErrTimeout:
		return "timeout"
	case storeerr.ErrUnavailable:
		return "unavailable"
	case storeerr.ErrNoSpace:
		return "no_space"
	case storeerr.ErrPermission:
		return "permission"
	case storeerr.ErrTooLarge:
		return "too_large"
	case storeerr.ErrCorrupt:
		return "corrupt"
	}
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return "no_node"
	case errors.Is(err, zk.ErrNodeExists):
		return "node_exists"
	case errors.Is(err, zk.ErrBadVersion):
		return "bad_version"
	case errors.Is(err, zk.ErrUnavailable), errors.Is(err, context.Canceled):
		return "unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, storage.ErrNotFound):
		return "not_found"
	case errors.Is(err, remotestore.ErrOutsidePath):
		return "outside_path"
	case errors.Is(err, remotestore.ErrInvalidName):
		return "invalid_name"
	case errors.Is(err, flussjson.ErrInvalidOffsets), errors.Is(err, flussjson.ErrMalformedOffsetsFile):
		return "malformed"
	}
	return "other"
}

// countedSnapshots counts a SnapshotStore's calls. Methods it does not
// override pass through uncounted.
type countedSnapshots struct {
	storage.SnapshotStore
	obs Observer
}

func (c countedSnapshots) CreateSnapshot(ctx context.Context, id string, s offsets.Snapshot) (bool, error) {
	created, err := c.SnapshotStore.CreateSnapshot(ctx, id, s)
	c.obs.StorageOp(StoreZooKeeper, "create", Class(err))
	return created, err
}

func (c countedSnapshots) GetSnapshot(ctx context.Context, id string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	s, inc, found, err := c.SnapshotStore.GetSnapshot(ctx, id)
	c.obs.StorageOp(StoreZooKeeper, "get", Class(err))
	return s, inc, found, err
}

// countedLinear counts the linear reads of a store that offers them.
type countedLinear struct {
	linear storage.LinearReads
	obs    Observer
}

func (c countedLinear) GetSnapshotLinear(ctx context.Context, id string, wait func(context.Context) error) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	s, inc, found, err := c.linear.GetSnapshotLinear(ctx, id, wait)
	c.obs.StorageOp(StoreZooKeeper, "sync_get", Class(err))
	return s, inc, found, err
}
func (c countedSnapshots) DeleteSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation) (bool, error) {
	deleted, err := c.SnapshotStore.DeleteSnapshotIf(ctx, id, inc)
	c.obs.StorageOp(StoreZooKeeper, "delete", Class(err))
	return deleted, err
}

func (c countedSnapshots) ReplaceSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation, s offsets.Snapshot) (bool, error) {
	replaced, err := c.SnapshotStore.ReplaceSnapshotIf(ctx, id, inc, s)
	c.obs.StorageOp(StoreZooKeeper, "replace", Class(err))
	return replaced, err
}

func (c countedSnapshots) Sync(ctx context.Context) error {
	err := c.SnapshotStore.Sync(ctx)
	c.obs.StorageOp(StoreZooKeeper, "sync", Class(err))
	return err
}

func (c countedSnapshots) ListProducerIDs(ctx context.Context) ([]string, error) {
	ids, err := c.SnapshotStore.ListProducerIDs(ctx)
	c.obs.StorageOp(StoreZooKeeper, "list", Class(err))
	return ids, err
}

// countedFiles counts the remote store's calls; it serves both the
// registry (FileStore) and orphan cleanup (OrphanStore). Methods it does
// not override pass through uncounted.
type countedFiles struct {
	storage.FilesAndOrphans
	obs Observer
}

func (c countedFiles) WriteOffsets(ctx context.Context, id string, t offsets.TableOffsets) (string, error) {
	p, err := c.FilesAndOrphans.WriteOffsets(ctx, id, t)
	c.obs.StorageOp(StoreRemote, "write", Class(err))
	return p, err
}

func (c countedFiles) ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error) {
	t, err := c.FilesAndOrphans.ReadOffsets(ctx, path)
	c.obs.StorageOp(StoreRemote, "read", Class(err))
	return t, err
}

func (c countedFiles) DeleteOffsets(ctx context.Context, path string) error {
	err := c.FilesAndOrphans.DeleteOffsets(ctx, path)
	c.obs.StorageOp(StoreRemote, "delete", Class(err))
	return err
}

func (c countedFiles) ListProducerDirs(ctx context.Context) ([]string, error) {
	dirs, err := c.FilesAndOrphans.ListProducerDirs(ctx)
	c.obs.StorageOp(StoreRemote, "list", Class(err))
	return dirs, err
}

func (c countedFiles) ListProducerFiles(ctx context.Context, id string) ([]storage.FileInfo, error) {
	files, err := c.FilesAndOrphans.ListProducerFiles(ctx, id)
	c.obs.StorageOp(StoreRemote, "list", Class(err))
	return files, err
}

func (c countedFiles) PruneEmptyDirs(ctx context.Context, id string) (bool, error) {
	gone, err := c.FilesAndOrphans.PruneEmptyDirs(ctx, id)
	c.obs.StorageOp(StoreRemote, "prune", Class(err))
	return gone, err
}

// Wrap wraps the stores when obs is set, and returns them as they are
// when it is nil. The wrapped stores offer the optional interfaces of
// package storage that snapshots and files offer: the linear reads are
// counted, the answers from memory are not (they reach no storage).
func Wrap(snapshots storage.SnapshotStore, files storage.FilesAndOrphans, obs Observer) (storage.SnapshotStore, storage.FilesAndOrphans) {
	if obs == nil {
		return snapshots, files
	}
	x := storage.SnapshotExtrasOf(snapshots)
	if x.Linear != nil {
		x.Linear = countedLinear{x.Linear, obs}
	}
	cached, _ := files.(storage.CachedFiles)
	return storage.WithSnapshotExtras(countedSnapshots{snapshots, obs}, x),
		storage.WithFileAndOrphanExtras(countedFiles{files, obs}, cached)
}
