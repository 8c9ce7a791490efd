// Package storage is the contract between the producer offsets registry and
// the stores beneath it, in the spirit of go-cloud's blob/driver: what a
// snapshot store (one znode per producer), a file store (the offsets
// files) and an orphan store (listing and removing those files) must do,
// and the optional faster paths a store may offer. The backends live in
// the packages beneath this one:
//
//   - zkstore: snapshots in ZooKeeper, as a Fluss coordinator keeps them;
//   - remote: offsets files under Fluss's remote.data.dir, through
//     gocloud.dev/blob;
//   - memstore: both in memory, with ZooKeeper's semantics (embedded mode);
//   - snapcache: a watched cache in front of zkstore and remote;
//   - faultstore: a pass-through that injects failures, for tests;
//   - counted: a pass-through that counts every call for metrics.
//
// Every backend runs behind the portable layer of this package
// (CheckedSnapshots, CheckedFiles, CheckedOrphans, CheckedFilesAndOrphans),
// as a go-cloud driver runs behind blob.Bucket: it checks, once for every
// backend and before the backend is called, that a call's context has not
// ended, that a snapshot's producer id names one znode and that an offsets
// file is written only for a producer id Fluss accepts. A backend keeps a
// check of its own only where its own safety needs it, and says so. A
// store that wraps another (the layer, faultstore's views, counted,
// snapcache's decorators) offers exactly the optional interfaces its inner
// store offers (WithSnapshotExtras, WithFileExtras).
//
// Every store must pass the conformance suite in storetest, run as
// TestStoreConformance from each backend's own package, behind the layer;
// the suite fails a wrapper that hides an optional interface of its inner
// store. Failures are classified with the classes of package storeerr; a
// missing offsets file with ErrNotFound (of class storeerr.ErrNotFound), a
// refused path with ErrOutsidePath (of class storeerr.ErrOutsidePath). A
// call whose context has ended
// fails with the class storeerr.ContextClass gives (ErrTimeout past a
// deadline, ErrUnavailable when canceled), as the ZooKeeper client does,
// even when memory holds the answer.
package storage

import (
	"context"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// ErrNotFound reports that an offsets file does not exist. Every FileStore
// reports a missing file with an error that matches it under errors.Is. It
// is of class storeerr.ErrNotFound.
var ErrNotFound = storeerr.Named(storeerr.ErrNotFound, "offsets file not found")

// ErrOutsidePath reports a path that is not a file in a table directory of
// the store's producers directory. A FileStore or OrphanStore never reads,
// qualifies or deletes such a path (W10: offsets_path values in ZooKeeper
// are not trusted) and refuses it with an error matching it under
// errors.Is. It is of class storeerr.ErrOutsidePath.
var ErrOutsidePath = storeerr.Named(storeerr.ErrOutsidePath, "path is outside the remote producers directory")

// SnapshotStore keeps one snapshot znode per producer.
//
// Every write reports one of three outcomes: applied (nil error and true),
// definitely not applied (nil error and false, or an error that does not
// match storeerr.ErrOutcomeUnknown), or unknown (an error matching
// storeerr.ErrOutcomeUnknown: the write may have been applied, or may be
// applied later). The registry settles unknown outcomes by reading after
// Sync.
type SnapshotStore interface {
	// CheckSnapshot refuses, with an error of class storeerr.ErrTooLarge, a
	// snapshot the store could not hold. Writes check it too, before
	// sending anything.
	CheckSnapshot(producerID string, s offsets.Snapshot) error
	// CreateSnapshot creates the producer's znode if none exists; created
	// is false when one already existed.
	CreateSnapshot(ctx context.Context, producerID string, s offsets.Snapshot) (created bool, err error)
	// GetSnapshot reads the producer's znode; found is false when absent.
	GetSnapshot(ctx context.Context, producerID string) (s offsets.Snapshot, inc offsets.Incarnation, found bool, err error)
	// ReplaceSnapshotIf overwrites the znode in place with s only if it is
	// still the incarnation read earlier; replaced is false when the znode
	// is absent, another incarnation, or was modified.
	ReplaceSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation, s offsets.Snapshot) (replaced bool, err error)
	// DeleteSnapshotIf deletes the znode only if it is still the incarnation
	// read earlier; deleted is true also when no znode is left.
	DeleteSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation) (deleted bool, err error)
	// Sync makes the reads that follow it see every write the store
	// applied before Sync was called, the session's own writes included.
	Sync(ctx context.Context) error
	// ListProducerIDs lists every producer with a znode.
	ListProducerIDs(ctx context.Context) ([]string, error)
}

// FileStore keeps the offsets files.
type FileStore interface {
	// PlannedPath returns a path as long as the one WriteOffsets would
	// return for this producer and table, for size checks before writing.
	PlannedPath(producerID string, tableID int64) string
	// WriteOffsets writes a new file and returns its fully qualified path.
	// A failed write leaves no file behind. It refuses a producer id that
	// Fluss refuses (docs/storage-format.md §7.4, CheckFileProducerID): no
	// other names a file of a coordinator.
	// t may give its offsets in either form (offsets.TableOffsets); the
	// caller does not modify t afterwards, so a store may keep it.
	WriteOffsets(ctx context.Context, producerID string, t offsets.TableOffsets) (string, error)
	// ReadOffsets reads a file by the path stored in a znode; a missing file
	// is reported with an error matching ErrNotFound, a path outside the
	// store with one matching ErrOutsidePath.
	ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error)
	// DeleteOffsets deletes a file; a missing file is not an error, a path
	// outside the store is refused (ErrOutsidePath).
	DeleteOffsets(ctx context.Context, path string) error
}

// FileInfo describes one file found under a producer directory.
type FileInfo struct {
	// Path is the fully qualified FsPath string, the same form WriteOffsets
	// returns and a Java coordinator's listing produces.
	Path string
	// TableDir is the name of the table directory holding the file.
	TableDir string
	// ModTime is the last modification time reported by the storage.
	ModTime time.Time
}

// OrphanStore lists and removes offsets files, for orphan cleanup and the
// admin commands.
type OrphanStore interface {
	// ListProducerDirs lists the producer directories that hold files; a
	// store with real directories lists those left empty too, until
	// PruneEmptyDirs removes them.
	ListProducerDirs(ctx context.Context) ([]string, error)
	// ListProducerFiles lists the offsets files under one producer's
	// directory.
	ListProducerFiles(ctx context.Context, producerID string) ([]FileInfo, error)
	// Qualify returns the fully qualified form of a path stored in a
	// znode, the form FileInfo.Path has, so that the two compare equal; a
	// path outside the store gives ErrOutsidePath.
	Qualify(offsetsPath string) (string, error)
	// DeleteOffsets deletes a file as FileStore.DeleteOffsets does.
	DeleteOffsets(ctx context.Context, path string) error
	// PruneEmptyDirs removes the producer's directories left empty; gone
	// reports that none is left.
	PruneEmptyDirs(ctx context.Context, producerID string) (gone bool, err error)
}

// CachedFiles is implemented by a FileStore that can answer some reads from
// memory, at once and without I/O (snapcache does).
type CachedFiles interface {
	CachedOffsets(path string) (offsets.TableOffsets, bool)
}

// LinearReads is implemented by a SnapshotStore that can read a znode as it
// stands after a sync sent after the call, for less than a shared sync and
// then a read (two round trips): zkstore sends a sync and the read
// together; snapcache, when it holds the znode or a read of it is in
// flight, waits for wait (a sync shared with other readers, after which
// its memory is current) and otherwise reads through with a sync. wait may
// be nil: the store then always sends a sync of its own.
type LinearReads interface {
	GetSnapshotLinear(ctx context.Context, producerID string, wait func(context.Context) error) (s offsets.Snapshot, inc offsets.Incarnation, found bool, err error)
}

// CachedSnapshots is implemented by a SnapshotStore that can answer some
// reads from memory, at once and without I/O (snapcache does). ok is false
// when the znode's state is not cached; found is false when it is cached
// as absent. token names the cached state: a later call returns the same
// token only while that same state is still cached (tokens are never
// reused), so a caller may keep what it derived from a state under its
// token. The returned Tables are shared: callers must not modify them.
type CachedSnapshots interface {
	CachedSnapshot(producerID string) (s offsets.Snapshot, token uint64, found, ok bool)
	// HoldsSnapshot is CachedSnapshot's ok alone, not counted as a hit.
	HoldsSnapshot(producerID string) bool
}

// AbsenceHints is implemented by a SnapshotStore that can tell from memory,
// at once and without I/O, that a producer has no snapshot (snapcache does,
// from its index of producer ids). A register's first attempt then skips
// its read of the znode. The hint may be stale, as a read may be: a
// snapshot created meanwhile by another writer makes the conditional
// create fail, the register deletes the files it wrote (nothing names
// them) and looks again with a real read.
type AbsenceHints interface {
	KnownAbsent(producerID string) bool
}
