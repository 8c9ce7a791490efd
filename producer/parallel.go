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

// forEach runs fn(ctx, i) for i in [0, n) with at most limit at once. It
// stops starting new calls after the first error, cancels the context the
// others see, waits for them, and returns that first error. With a limit of
// one the calls run in order on the caller's goroutine; otherwise the last
// call does, whose stack has already grown, so a snapshot of two tables
// costs one new goroutine, not two.
func forEach(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 0 {
		return nil
	}
	if n == 1 || limit <= 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(ctx, i); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		slots    = make(chan struct{}, limit)
	)
	run := func(i int) {
		defer func() { <-slots }()
		if err := fn(ctx, i); err != nil {
			once.Do(func() { firstErr = err; cancel() })
		}
	}
	for i := 0; i < n; i++ {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if i == n-1 {
			run(i)
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			run(i)
		}(i)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
