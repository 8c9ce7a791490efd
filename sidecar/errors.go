package sidecar

import (
	"context"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// apiError is where a producer-offsets handler's failure becomes its Fluss
// answer, through the one mapping of classes to codes and messages
// (apierr/fluss.go):
//   - the registry's classes (bad producer id, bad input, a snapshot too
//     large, a broken snapshot, one that kept changing) and API errors
//     such as an authorization refusal keep their code and message;
//   - a store failure maps by its storeerr class: ErrTimeout to
//     REQUEST_TIME_OUT (25), ErrUnavailable and ErrNoSpace to
//     STORAGE_EXCEPTION (26), ErrTooLarge to RECORD_TOO_LARGE (13), the
//     rest to UNKNOWN_SERVER_ERROR (-1), each with the coordinator's
//     message "Failed to <op> producer offsets for producer <id>" and the
//     cause.
func (s *Sidecar) apiError(op, producerID string, err error) error {
	return apierr.Answer(op, producerID, err)
}

// opContext bounds one producer-offsets operation, and tells the registry
// when its request arrived (producer.WithArrival).
func (s *Sidecar) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if t, ok := wire.Arrival(ctx); ok {
		ctx = producer.WithArrival(ctx, t)
	}
	return context.WithTimeout(ctx, s.cfg.RequestTimeout)
}
