package storeerr

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	cause := errors.New("cause")
	cases := []struct {
		err       error
		class     error
		transient bool
		unknown   bool
	}{
		{nil, nil, false, false},
		{cause, nil, false, false},
		{New(ErrUnavailable, false, cause), ErrUnavailable, true, false},
		{New(ErrTimeout, true, cause), ErrTimeout, true, true},
		{New(ErrNoSpace, false, cause), ErrNoSpace, false, false},
		{New(ErrPermission, false, cause), ErrPermission, false, false},
		{New(ErrTooLarge, false, cause), ErrTooLarge, false, false},
		{New(ErrCorrupt, false, cause), ErrCorrupt, false, false},
		{New(nil, true, cause), nil, false, true},
		// Wrapping keeps the classes.
		{fmt.Errorf("op: %w", New(ErrUnavailable, true, cause)), ErrUnavailable, true, true},
	}
	for _, c := range cases {
		if got := Classify(c.err); got != c.class {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.class)
		}
		if got := Transient(c.err); got != c.transient {
			t.Errorf("Transient(%v) = %v", c.err, got)
		}
		if got := OutcomeUnknown(c.err); got != c.unknown {
			t.Errorf("OutcomeUnknown(%v) = %v", c.err, got)
		}
	}
	if New(ErrTimeout, false, nil) != nil {
		t.Error("New of a nil error is not nil")
	}
	if err := New(ErrTimeout, false, cause); !errors.Is(err, cause) {
		t.Error("the cause is not matched")
	}
}

func TestContextClass(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want error
	}{
		{nil, nil},
		{errors.New("cause"), nil},
		{context.DeadlineExceeded, ErrTimeout},
		{fmt.Errorf("get: %w", context.DeadlineExceeded), ErrTimeout},
		{context.Canceled, ErrUnavailable},
		{fmt.Errorf("get: %w", context.Canceled), ErrUnavailable},
	}
	for _, c := range cases {
		if got := ContextClass(c.err); got != c.want {
			t.Errorf("ContextClass(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestNamed: a named sentinel keeps its text and matches its class, and the
// answer classes are not failure classes.
func TestNamed(t *testing.T) {
	t.Parallel()
	gone := Named(ErrNotFound, "offsets file not found")
	err := fmt.Errorf("read: %w", gone)
	if !errors.Is(err, gone) || !errors.Is(err, ErrNotFound) || errors.Is(err, ErrExists) {
		t.Errorf("%v: matches the wrong classes", err)
	}
	if gone.Error() != "offsets file not found" {
		t.Errorf("text %q", gone.Error())
	}
	if c := Classify(err); c != nil {
		t.Errorf("Classify = %v, want nil: not found is an answer, not a failure", c)
	}
}
