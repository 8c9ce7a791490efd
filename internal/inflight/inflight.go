// Package inflight counts operations that are running, so that a caller can
// wait until none is. Unlike a sync.WaitGroup, a Counter may be waited for
// while new operations start.
package inflight

import (
	"context"
	"sync"
)

// Counter counts running operations. Its zero value is ready to use.
type Counter struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while 0
}

// Add records that an operation started.
func (c *Counter) Add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.idle = make(chan struct{})
	}
	c.n++
}

// Done records that an operation ended.
func (c *Counter) Done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n--
	if c.n == 0 {
		close(c.idle)
		c.idle = nil
	}
}

// Wait blocks until no operation runs (operations that start meanwhile
// are waited for too only if one was running when Wait began), or ctx ends.
func (c *Counter) Wait(ctx context.Context) error {
	c.mu.Lock()
	ch := c.idle
	c.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
