package app

import (
	"context"
	"errors"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
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

// zkClass names a ZooKeeper failure's class.
func zkClass(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, zk.ErrNoNode):
		return "no_node"
	case errors.Is(err, zk.ErrNodeExists):
		return "node_exists"
	case errors.Is(err, zk.ErrBadVersion):
		return "bad_version"
	case errors.Is(err, zk.ErrUnavailable), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "unavailable"
	}
	return "other"
}

// remoteClass names a remote storage failure's class.
func remoteClass(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, remote.ErrNotFound):
		return "not_found"
	case errors.Is(err, remote.ErrOutsidePath):
		return "outside_path"
	case errors.Is(err, remote.ErrInvalidName):
		return "invalid_name"
	case errors.Is(err, remote.ErrInvalidOffsets), errors.Is(err, remote.ErrMalformedOffsetsFile):
		return "malformed"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "unavailable"
	case remote.IsRetriable(err):
		return "transient"
	}
	return "other"
}

// countedSnapshots counts a SnapshotStore's calls.
type countedSnapshots struct {
	next producer.SnapshotStore
	obs  storageObserver
}

func (c countedSnapshots) CreateSnapshot(ctx context.Context, id string, s offsets.Snapshot) (bool, error) {
	created, err := c.next.CreateSnapshot(ctx, id, s)
	c.obs.StorageOp(storeZooKeeper, "create", zkClass(err))
	return created, err
}

func (c countedSnapshots) GetSnapshot(ctx context.Context, id string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	s, inc, found, err := c.next.GetSnapshot(ctx, id)
	c.obs.StorageOp(storeZooKeeper, "get", zkClass(err))
	return s, inc, found, err
}

func (c countedSnapshots) DeleteSnapshotIf(ctx context.Context, id string, inc offsets.Incarnation) (bool, error) {
	deleted, err := c.next.DeleteSnapshotIf(ctx, id, inc)
	c.obs.StorageOp(storeZooKeeper, "delete", zkClass(err))
	return deleted, err
}

func (c countedSnapshots) ListProducerIDs(ctx context.Context) ([]string, error) {
	ids, err := c.next.ListProducerIDs(ctx)
	c.obs.StorageOp(storeZooKeeper, "list", zkClass(err))
	return ids, err
}

// countedFiles counts the remote store's calls; it serves both the
// registry (FileStore) and orphan cleanup (OrphanStore).
type countedFiles struct {
	next *remote.Store
	obs  storageObserver
}

func (c countedFiles) WriteOffsets(ctx context.Context, id string, t offsets.TableOffsets) (string, error) {
	p, err := c.next.WriteOffsets(ctx, id, t)
	c.obs.StorageOp(storeRemote, "write", remoteClass(err))
	return p, err
}

func (c countedFiles) ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error) {
	t, err := c.next.ReadOffsets(ctx, path)
	c.obs.StorageOp(storeRemote, "read", remoteClass(err))
	return t, err
}

func (c countedFiles) DeleteOffsets(ctx context.Context, path string) error {
	err := c.next.DeleteOffsets(ctx, path)
	c.obs.StorageOp(storeRemote, "delete", remoteClass(err))
	return err
}

func (c countedFiles) ListProducerDirs(ctx context.Context) ([]string, error) {
	dirs, err := c.next.ListProducerDirs(ctx)
	c.obs.StorageOp(storeRemote, "list", remoteClass(err))
	return dirs, err
}

func (c countedFiles) ListProducerFiles(ctx context.Context, id string) ([]remote.FileInfo, error) {
	files, err := c.next.ListProducerFiles(ctx, id)
	c.obs.StorageOp(storeRemote, "list", remoteClass(err))
	return files, err
}

func (c countedFiles) Qualify(path string) (string, error) { return c.next.Qualify(path) }

func (c countedFiles) PruneEmptyDirs(ctx context.Context, id string) (bool, error) {
	gone, err := c.next.PruneEmptyDirs(ctx, id)
	c.obs.StorageOp(storeRemote, "prune", remoteClass(err))
	return gone, err
}

// instrument wraps the stores when obs is set.
func instrument(snapshots producer.SnapshotStore, files *remote.Store, obs storageObserver) (producer.SnapshotStore, interface {
	producer.FileStore
	producer.OrphanStore
}) {
	if obs == nil {
		return snapshots, files
	}
	return countedSnapshots{snapshots, obs}, countedFiles{files, obs}
}
