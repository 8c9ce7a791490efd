package app

import (
	"context"
	"errors"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// storageObserver counts storage calls; class is "" on success.
type storageObserver interface {
	StorageOp(store, op, class string)
}

// Store labels.
const (
	storeZooKeeper = "zookeeper"
	storeRemote    = "remote"
)

// class names a storage failure: its storeerr class when it has one
// (timeout, unavailable, no_space, permission, too_large, corrupt), else
// what the store says (no_node, node_exists, bad_version, not_found,
// outside_path, invalid_name, malformed), else "other".
func class(err error) string {
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
	case errors.Is(err, remote.ErrNotFound):
		return "not_found"
	case errors.Is(err, remote.ErrOutsidePath):
		return "outside_path"
	case errors.Is(err, remote.ErrInvalidName):
		return "invalid_name"
	case errors.Is(err, remote.ErrInvalidOffsets), errors.Is(err, remote.ErrMalformedOffsetsFile):
		return "malformed"
	}
	return "other"
}

// countedSnapshots counts a SnapshotStore's calls. Methods it does not
// override pass through uncounted.
type countedSnapshots struct {
	producer.SnapshotStore
	linear producer.LinearReads
	obs    storageObserver
}

func (c countedSnapshots) CreateSnapshot(ctx context.Context, id string, s offsets.Snapshot) (bool, error) {
	created, err := c.SnapshotStore.CreateSnapshot(ctx, id, s)
	c.obs.StorageOp(storeZooKeeper, "create", class(err))
	return created, err
}

func (c countedSnapshots) GetSnapshot(ctx context.Context, id string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	s, inc, found, err := c.SnapshotStore.GetSnapshot(ctx, id)
	c.obs.StorageOp(storeZooKeeper, "get", class(err))
	return s, inc, found, err
}

func (c countedSnapshots) GetSnapshotLinear(ctx context.Context, id string, wait func(context.Context) error) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	s, inc, found, err := c.linear.GetSnapshotLinear(ctx, id, wait)
	c.obs.StorageOp(storeZooKeeper, "sync_get", class(err))
	return s, inc, found, err
}

func (c countedSnapshots) DeleteSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation) (bool, error) {
	deleted, err := c.SnapshotStore.DeleteSnapshotIf(ctx, id, inc)
	c.obs.StorageOp(storeZooKeeper, "delete", class(err))
	return deleted, err
}

func (c countedSnapshots) ReplaceSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation, s offsets.Snapshot) (bool, error) {
	replaced, err := c.SnapshotStore.ReplaceSnapshotIf(ctx, id, inc, s)
	c.obs.StorageOp(storeZooKeeper, "replace", class(err))
	return replaced, err
}

func (c countedSnapshots) Sync(ctx context.Context) error {
	err := c.SnapshotStore.Sync(ctx)
	c.obs.StorageOp(storeZooKeeper, "sync", class(err))
	return err
}

func (c countedSnapshots) ListProducerIDs(ctx context.Context) ([]string, error) {
	ids, err := c.SnapshotStore.ListProducerIDs(ctx)
	c.obs.StorageOp(storeZooKeeper, "list", class(err))
	return ids, err
}

// countedFiles counts the remote store's calls; it serves both the
// registry (FileStore) and orphan cleanup (OrphanStore). Methods it does
// not override pass through uncounted.
type countedFiles struct {
	*remote.Store
	obs storageObserver
}

func (c countedFiles) WriteOffsets(ctx context.Context, id string, t offsets.TableOffsets) (string, error) {
	p, err := c.Store.WriteOffsets(ctx, id, t)
	c.obs.StorageOp(storeRemote, "write", class(err))
	return p, err
}

func (c countedFiles) ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error) {
	t, err := c.Store.ReadOffsets(ctx, path)
	c.obs.StorageOp(storeRemote, "read", class(err))
	return t, err
}

func (c countedFiles) DeleteOffsets(ctx context.Context, path string) error {
	err := c.Store.DeleteOffsets(ctx, path)
	c.obs.StorageOp(storeRemote, "delete", class(err))
	return err
}

func (c countedFiles) ListProducerDirs(ctx context.Context) ([]string, error) {
	dirs, err := c.Store.ListProducerDirs(ctx)
	c.obs.StorageOp(storeRemote, "list", class(err))
	return dirs, err
}

func (c countedFiles) ListProducerFiles(ctx context.Context, id string) ([]remote.FileInfo, error) {
	files, err := c.Store.ListProducerFiles(ctx, id)
	c.obs.StorageOp(storeRemote, "list", class(err))
	return files, err
}

func (c countedFiles) PruneEmptyDirs(ctx context.Context, id string) (bool, error) {
	gone, err := c.Store.PruneEmptyDirs(ctx, id)
	c.obs.StorageOp(storeRemote, "prune", class(err))
	return gone, err
}

// instrument wraps the stores when obs is set.
func instrument(snapshots *zk.ProducerStore, files *remote.Store, obs storageObserver) (producer.SnapshotStore, interface {
	producer.FileStore
	producer.OrphanStore
}) {
	if obs == nil {
		return snapshots, files
	}
	return countedSnapshots{snapshots, snapshots, obs}, countedFiles{files, obs}
}
