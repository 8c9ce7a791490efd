// Package eventually is the tests' one way to wait for something that
// happens on another goroutine or process: poll a condition until it
// holds. The deadline only keeps a broken test from hanging, it is no
// timed assertion; a wait that gives up fails the test with the last state
// the condition reported.
package eventually

import (
	"errors"
	"testing"
	"time"
)

// Limit bounds one wait; a test's own deadline (go test -timeout), if
// sooner, bounds it too, leaving the failure time to be reported.
const Limit = 3 * time.Minute

// Polling starts at firstPoll between tries and doubles up to maxPoll.
const (
	firstPoll = time.Millisecond
	maxPoll   = 50 * time.Millisecond
)

// reportMargin is how long before a test's deadline a wait gives up.
const reportMargin = 5 * time.Second

// Nil polls check until it returns nil. When the wait gives up it fails tb
// with what and check's last error.
func Nil(tb testing.TB, what string, check func() error) {
	tb.Helper()
	poll(tb, what, check, deadline(tb, time.Now()))
}

// True polls cond until it returns true. When the wait gives up it fails
// tb with what.
func True(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	Nil(tb, what, func() error {
		if cond() {
			return nil
		}
		return errors.New("the condition still does not hold")
	})
}

// deadline is when a wait starting at now gives up.
func deadline(tb testing.TB, now time.Time) time.Time {
	end := now.Add(Limit)
	if d, ok := tb.(interface{ Deadline() (time.Time, bool) }); ok {
		if td, ok := d.Deadline(); ok {
			if td = td.Add(-reportMargin); td.Before(end) {
				end = td
			}
		}
	}
	return end
}

func poll(tb testing.TB, what string, check func() error, end time.Time) {
	tb.Helper()
	start := time.Now()
	wait := firstPoll
	for {
		err := check()
		if err == nil {
			return
		}
		if !time.Now().Before(end) {
			tb.Fatalf("gave up waiting for %s after %v: %v", what, time.Since(start).Round(time.Millisecond), err)
			return
		}
		time.Sleep(wait)
		wait = min(2*wait, maxPoll)
	}
}
