package producer

import (
	"context"
	"sync"
)

// DefaultFileConcurrency bounds how many offsets files one operation reads
// or writes at once. A snapshot has one file per table; on object storage
// each file is a round trip of tens of milliseconds, so a snapshot of many
// tables is much faster in parallel, while the bound keeps one request from
// flooding the store.
const DefaultFileConcurrency = 8

// forEach runs fn(ctx, i) for i in [0, n) with at most limit at once. It stops starting new calls after the first error, cancels the
// context the others see, waits for them, and returns that first error.
func forEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	if n == 1 {
		return fn(ctx, 0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		slots    = make(chan struct{}, max(limit, 1))
	)
	for i := 0; i < n; i++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			defer func() { <-slots }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { firstErr = err; cancel() })
			}
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
