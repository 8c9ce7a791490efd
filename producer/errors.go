package producer

import (
	"errors"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
)

// storeError passes the registry's classes and API errors (a DeleteCheck's
// veto) through and wraps every other failure with the operation, keeping
// the cause for apierr to classify.
func (r *Registry) storeError(op, id string, err error) error {
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return ae
	}
	if fe, ok := flusserr.From(err); ok {
		return fe
	}
	r.log.Error("producer offsets operation failed", "op", op, "producer_id", id, "error", err)
	return &StoreError{Op: op, ProducerID: id, Err: err}
}

// keptChanging is the failure of an operation whose every attempt lost a
// race, logged as a store failure is.
func (r *Registry) keptChanging(op, id string) error {
	err := &apierr.Error{Class: apierr.ErrKeptChanging, Op: op, ProducerID: id}
	r.log.Error("producer offsets operation failed", "op", op, "producer_id", id, "error", err)
	return err
}

// StoreError is a storage failure during an operation: an apierr.Error
// with no class of its own, whose cause carries the storeerr class that
// apierr maps to a Fluss error code.
type StoreError = apierr.Error
