package embedded

import (
	"fmt"
	"sync"
	"time"
)

// MaxClockAdvance bounds one Clock.Advance, so that no expiration time
// overflows.
const MaxClockAdvance = 100 * 365 * 24 * time.Hour

// Clock is the server's clock for TTLs: a base clock (the wall clock by
// default) plus an offset that a test advances, so that a snapshot's
// expiry a day away happens now. Only the registry and the in-memory store
// read it; timeouts and the request log keep the wall clock.
type Clock struct {
	base   func() time.Time
	mu     sync.Mutex
	offset time.Duration
}

// NewClock returns a clock that reads base (time.Now when nil).
func NewClock(base func() time.Time) *Clock {
	if base == nil {
		base = time.Now
	}
	return &Clock{base: base}
}

// Now is the base clock plus the offset.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	off := c.offset
	c.mu.Unlock()
	return c.base().Add(off)
}

// Advance moves the clock forward by d and returns the new time. d must
// be positive, and the offset stays within MaxClockAdvance.
func (c *Clock) Advance(d time.Duration) (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 || d > MaxClockAdvance-c.offset {
		return time.Time{}, fmt.Errorf("embedded: the clock moves forward by more than 0 and at most %s in all (now %s ahead)", MaxClockAdvance, c.offset)
	}
	c.offset += d
	return c.base().Add(c.offset), nil
}

// Offset is how far the clock is ahead of its base.
func (c *Clock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// Reset puts the clock back on its base.
func (c *Clock) Reset() {
	c.mu.Lock()
	c.offset = 0
	c.mu.Unlock()
}
