package sidecar

import (
	"context"
	"errors"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// apiError is the one place where store failures become Fluss error codes,
// by storeerr class:
//   - an API error (bad producer id, bad input, too large) passes through;
//   - ErrTimeout (or a request that ran out of time) becomes
//     REQUEST_TIME_OUT (25), retriable; the message says whether the
//     outcome is unknown;
//   - ErrUnavailable (ZooKeeper or remote storage unreachable, session
//     lost, throttled) becomes STORAGE_EXCEPTION (26), retriable;
//   - ErrNoSpace becomes STORAGE_EXCEPTION (26): the client may retry once
//     space is freed; the sidecar does not retry it itself;
//   - ErrTooLarge (a snapshot ZooKeeper would refuse) becomes
//     RECORD_TOO_LARGE (13), not retriable;
//   - ErrPermission, ErrCorrupt and anything unclassified become
//     UNKNOWN_SERVER_ERROR (-1), which clients do not retry;
//   - every class but the first keeps the coordinator's message "Failed to
//     <op> producer offsets for producer <id>" and the cause.
func (s *Sidecar) apiError(op, producerID string, err error) error {
	if fe, ok := flusserr.From(err); ok {
		return fe
	}
	prefix := "Failed to " + op + " producer offsets for producer " + producerID
	unknown := ""
	if storeerr.OutcomeUnknown(err) {
		unknown = " (the outcome is unknown: the operation may have been applied; retry to learn it)"
	}
	class := storeerr.Classify(err)
	if class == nil && errors.Is(err, context.DeadlineExceeded) {
		class = storeerr.ErrTimeout
	}
	switch class {
	case storeerr.ErrTimeout:
		return flusserr.New(flusserr.RequestTimeOut, prefix+": the request timed out"+unknown+": "+causeOf(err))
	case storeerr.ErrUnavailable:
		return flusserr.New(flusserr.StorageException, prefix+": storage is unavailable, retry"+unknown+": "+causeOf(err))
	case storeerr.ErrNoSpace:
		return flusserr.New(flusserr.StorageException, prefix+": remote storage is full"+unknown+": "+causeOf(err))
	case storeerr.ErrPermission:
		return flusserr.New(flusserr.UnknownServerError, prefix+": storage refused access (not retried)"+unknown+": "+causeOf(err))
	case storeerr.ErrTooLarge:
		return flusserr.New(flusserr.RecordTooLarge, prefix+": the snapshot is too large for ZooKeeper"+unknown+": "+causeOf(err))
	case storeerr.ErrCorrupt:
		return flusserr.New(flusserr.UnknownServerError, prefix+": stored data is corrupt"+unknown+": "+causeOf(err))
	}
	return flusserr.New(flusserr.UnknownServerError, prefix+unknown+": "+causeOf(err))
}

// opContext bounds one producer-offsets operation, and tells the registry
// when its request arrived (producer.WithArrival).
func (s *Sidecar) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if t, ok := wire.Arrival(ctx); ok {
		ctx = producer.WithArrival(ctx, t)
	}
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
