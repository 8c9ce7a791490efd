package remotestore

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/remote/hdfsblob"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

var (
	// ErrOutsidePath reports a path that is not inside this store's
	// producers directory. The store never reads or deletes such a path
	// (W10: offsets_path values in ZooKeeper are not trusted). It is
	// storage.ErrOutsidePath, which every file store uses.
	ErrOutsidePath = storage.ErrOutsidePath

	// ErrInvalidName reports a producer id or directory name that cannot be
	// used as one path segment. It is storage.ErrInvalidName.
	ErrInvalidName = storage.ErrInvalidName
)

// IsRetriable reports whether err is a transient storage failure worth
// retrying at once: storeerr classes ErrUnavailable and ErrTimeout (see
// Classify). A full disk, a refused access, a missing file, a path outside
// the store, an invalid name, bad offsets and a malformed file are not, nor
// is a cancelled context.
func IsRetriable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	for _, perm := range []error{storage.ErrNotFound, ErrOutsidePath, ErrInvalidName, flussjson.ErrInvalidOffsets, flussjson.ErrMalformedOffsetsFile} {
		if errors.Is(err, perm) {
			return false
		}
	}
	return storeerr.Transient(classified(err))
}

// Classify returns the storeerr class of a storage failure:
//   - ErrNoSpace for a full disk or exceeded quota (ENOSPC, EDQUOT, EFBIG;
//     HDFS's space and namespace quotas are EDQUOT);
//   - ErrPermission for permission denied, a read-only file system, or an
//     object store's PermissionDenied;
//   - ErrCorrupt for a malformed offsets file;
//   - ErrTimeout for an expired deadline;
//   - ErrUnavailable for HDFS's safe mode, standby NameNode and failed
//     connections, other I/O errors, throttling and server failures
//     (gcerrors Internal, Unknown, ResourceExhausted, DeadlineExceeded of
//     the service);
//   - nil for what is none of these (not found, invalid arguments).
func Classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EFBIG):
		return storeerr.ErrNoSpace
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES),
		errors.Is(err, syscall.EPERM), gcerrors.Code(err) == gcerrors.PermissionDenied:
		return storeerr.ErrPermission
	case errors.Is(err, flussjson.ErrMalformedOffsetsFile), errors.Is(err, storeerr.ErrCorrupt):
		return storeerr.ErrCorrupt
	case storeerr.ContextClass(err) != nil:
		return storeerr.ContextClass(err)
	case errors.Is(err, hdfsblob.ErrUnavailable):
		return storeerr.ErrUnavailable
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, ErrOutsidePath), errors.Is(err, ErrInvalidName), errors.Is(err, flussjson.ErrInvalidOffsets):
		return nil
	}
	switch gcerrors.Code(err) {
	case gcerrors.DeadlineExceeded, gcerrors.Internal, gcerrors.Unknown, gcerrors.ResourceExhausted:
		return storeerr.ErrUnavailable
	}
	return nil
}

// classified attaches err's storeerr class to it.
func classified(err error) error {
	if err == nil || storeerr.Classify(err) != nil {
		return err
	}
	if c := Classify(err); c != nil {
		return storeerr.New(c, false, err)
	}
	return err
}
