package sidecar

import (
	"context"
	"errors"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// apiError is the one place where store failures become Fluss error codes:
//   - an API error (bad producer id, bad input) passes through unchanged;
//   - ZooKeeper unreachable or session lost, and transient remote storage
//     failures, become STORAGE_EXCEPTION (26), which Fluss clients treat as
//     retriable; nothing was changed, or the change is complete;
//   - a request that ran out of time becomes REQUEST_TIME_OUT (25);
//   - anything else becomes UNKNOWN_SERVER_ERROR (-1) with the coordinator's
//     message, "Failed to <op> producer offsets for producer <id>", followed
//     by the cause.
func (s *Sidecar) apiError(op, producerID string, err error) error {
	if fe, ok := flusserr.From(err); ok {
		return fe
	}
	prefix := "Failed to " + op + " producer offsets for producer " + producerID
	switch {
	case errors.Is(err, zk.ErrUnavailable):
		return flusserr.New(flusserr.StorageException, prefix+": ZooKeeper is unavailable, retry: "+causeOf(err))
	case errors.Is(err, context.DeadlineExceeded):
		return flusserr.New(flusserr.RequestTimeOut, prefix+": the request timed out")
	case remote.IsRetriable(err):
		return flusserr.New(flusserr.StorageException, prefix+": remote storage is unavailable, retry: "+causeOf(err))
	}
	return flusserr.New(flusserr.UnknownServerError, prefix+": "+causeOf(err))
}

// opContext bounds one producer-offsets operation.
func (s *Sidecar) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.RequestTimeout)
}

// causeOf is the error text without the registry's own prefix.
func causeOf(err error) string {
	var se *producer.StoreError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}
