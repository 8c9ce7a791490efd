package sidecar

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// TestAPIErrorClasses pins the Fluss code of each storage failure class:
// transient ones retriable (25 for a timeout, 26 otherwise), permanent ones
// not, with the cause in the message.
func TestAPIErrorClasses(t *testing.T) {
	cause := errors.New("the cause")
	cases := []struct {
		err       error
		code      flusserr.Code
		retriable bool
		says      string
	}{
		{storeerr.New(storeerr.ErrTimeout, false, cause), flusserr.RequestTimeOut, true, "timed out"},
		{storeerr.New(storeerr.ErrTimeout, true, cause), flusserr.RequestTimeOut, true, "outcome is unknown"},
		{context.DeadlineExceeded, flusserr.RequestTimeOut, true, "timed out"},
		{storeerr.New(storeerr.ErrUnavailable, false, cause), flusserr.StorageException, true, "unavailable, retry"},
		{storeerr.New(storeerr.ErrNoSpace, false, cause), flusserr.StorageException, true, "full"},
		{storeerr.New(storeerr.ErrPermission, false, cause), flusserr.UnknownServerError, false, "refused access"},
		{storeerr.New(storeerr.ErrTooLarge, false, cause), flusserr.RecordTooLarge, false, "too large"},
		{storeerr.New(storeerr.ErrCorrupt, false, cause), flusserr.UnknownServerError, false, "corrupt"},
		{cause, flusserr.UnknownServerError, false, "the cause"},
	}
	s := &Sidecar{}
	for _, c := range cases {
		wrapped := &producer.StoreError{Op: "register", ProducerID: "p", Err: c.err}
		fe, ok := flusserr.From(s.apiError("register", "p", wrapped))
		if !ok {
			t.Fatalf("%v: not a Fluss error", c.err)
		}
		info, _ := flusserr.Lookup(fe.Code)
		if fe.Code != c.code || info.Retriable != c.retriable {
			t.Errorf("%v: code %d (retriable %v), want %d (%v)", c.err, fe.Code, info.Retriable, c.code, c.retriable)
		}
		if !strings.HasPrefix(fe.Message, "Failed to register producer offsets for producer p") || !strings.Contains(fe.Message, c.says) {
			t.Errorf("%v: message %q", c.err, fe.Message)
		}
	}
}
