package remotestore

import (
	"fmt"
	"runtime/debug"

	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// Observer is told about failures the store contains rather than returns
// from a driver; the metrics package implements it. A nil Observer counts
// nothing.
type Observer interface {
	// DriverPanic counts one panic raised inside the storage driver during
	// op (write, read, delete, list, close, probe) and contained here.
	DriverPanic(driver, op string)
}

// DriverPanicError is a panic raised inside a storage driver (gocloud.dev
// or the SDK beneath it), recovered at the store boundary. The operation
// failed with storeerr.ErrUnavailable; the driver may hold a broken
// request, so the store does not retry it at once.
type DriverPanicError struct {
	Driver string // azureblob, s3blob, gcsblob, hdfsblob, fileblob, memblob or injected
	Op     string
	Value  any // what the driver panicked with
}

func (e *DriverPanicError) Error() string {
	return fmt.Sprintf("storage driver %s panicked during %s: %v", e.Driver, e.Op, e.Value)
}

// guard runs f, one call into the driver, and turns a panic raised inside
// it into an error of class storeerr.ErrUnavailable: a driver bug (such as
// gocloud.dev v0.47.0's Azure writer closing a nil pipe when the endpoint
// cannot be reached) fails one operation instead of the whole process and
// every request it holds. The panic is logged once, with driver, operation
// and stack, and counted. Only panics on the calling goroutine can be
// contained; one in a goroutine the driver started still ends the process.
func (s *Store) guard(op string, f func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		s.log.Error("storage driver panicked; the operation fails as unavailable and the sidecar goes on",
			"driver", s.driver, "op", op, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		if s.obs != nil {
			s.obs.DriverPanic(s.driver, op)
		}
		err = storeerr.New(storeerr.ErrUnavailable, false, &DriverPanicError{Driver: s.driver, Op: op, Value: r})
	}()
	return f()
}
