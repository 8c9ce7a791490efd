package producer

import (
	"fmt"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
)

// storeError passes API errors through and wraps every other failure with
// the operation, keeping the cause for the caller to classify.
func (r *Registry) storeError(op, id string, err error) error {
	if fe, ok := flusserr.From(err); ok {
		return fe
	}
	r.log.Error("producer offsets operation failed", "op", op, "producer_id", id, "error", err)
	return &StoreError{Op: op, ProducerID: id, Err: err}
}

// StoreError is a storage failure during an operation. The sidecar maps its
// cause to a Fluss error code.
type StoreError struct {
	Op         string
	ProducerID string
	Err        error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("Failed to %s producer offsets for producer %s: %v", e.Op, e.ProducerID, e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }
