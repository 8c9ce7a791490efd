package producer

import (
	"context"
	"sync"
)

// opCounter counts running operations, so that a caller can wait until none
// is. Unlike a sync.WaitGroup, it may be waited for while new operations
// start. Its zero value is ready to use.
type opCounter struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while 0
}

// Add records that an operation started.
func (c *opCounter) Add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		c.idle = make(chan struct{})
	}
	c.n++
}

// Done records that an operation ended.
func (c *opCounter) Done() {
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
func (c *opCounter) Wait(ctx context.Context) error {
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
