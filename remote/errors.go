package remote

import (
	"errors"

	"gocloud.dev/gcerrors"
)

var (
	// ErrNotFound reports that an offsets file does not exist.
	ErrNotFound = errors.New("offsets file not found")

	// ErrOutsidePath reports a path that is not inside this store's
	// producers directory. The store never reads or deletes such a path
	// (W10: offsets_path values in ZooKeeper are not trusted).
	ErrOutsidePath = errors.New("path is outside the remote producers directory")

	// ErrInvalidName reports a producer id or directory name that cannot be
	// used as one path segment.
	ErrInvalidName = errors.New("invalid name")
)

// IsRetriable reports whether err is a transient storage failure worth
// retrying: gcerrors codes DeadlineExceeded, Internal, ResourceExhausted
// (throttling) and Unknown (which covers plain I/O errors and unavailable
// servers; gocloud.dev has no Unavailable code). A missing file, a path outside the
// store, an invalid name, bad offsets and a malformed file are permanent, as
// is a cancelled context.
func IsRetriable(err error) bool {
	if err == nil {
		return false
	}
	for _, perm := range []error{ErrNotFound, ErrOutsidePath, ErrInvalidName, ErrInvalidOffsets, ErrMalformedOffsetsFile} {
		if errors.Is(err, perm) {
			return false
		}
	}
	switch gcerrors.Code(err) {
	case gcerrors.DeadlineExceeded, gcerrors.Internal, gcerrors.Unknown, gcerrors.ResourceExhausted:
		return true
	}
	return false
}
