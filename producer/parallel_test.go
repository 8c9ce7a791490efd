package producer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestForEach(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		name    string
		n       int
		failAt  int // -1: never
		wantErr error
	}{
		{"none", 0, -1, nil},
		{"one", 1, -1, nil},
		{"many", 50, -1, nil},
		{"one fails", 1, 0, boom},
		{"a middle one fails", 50, 20, boom},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var running, peak atomic.Int32
			var mu sync.Mutex
			done := map[int]bool{}
			// Hold every call until DefaultFileConcurrency are running at once (or
			// all n have started), so the bound is really exercised.
			full := make(chan struct{})
			var closeFull sync.Once
			err := forEach(context.Background(), c.n, DefaultFileConcurrency, func(ctx context.Context, i int) error {
				now := running.Add(1)
				defer running.Add(-1)
				for {
					p := peak.Load()
					if now <= p || peak.CompareAndSwap(p, now) {
						break
					}
				}
				if int(now) == min(DefaultFileConcurrency, c.n) {
					closeFull.Do(func() { close(full) })
				}
				if i == c.failAt {
					<-full
					return boom
				}
				select {
				case <-full:
				case <-ctx.Done():
					return ctx.Err()
				}
				mu.Lock()
				done[i] = true
				mu.Unlock()
				return nil
			})
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if p := peak.Load(); p > DefaultFileConcurrency {
				t.Fatalf("%d calls ran at once, bound is %d", p, DefaultFileConcurrency)
			}
			if c.wantErr == nil && len(done) != c.n {
				t.Fatalf("%d of %d calls completed", len(done), c.n)
			}
			if c.wantErr != nil && len(done) == c.n {
				t.Fatal("every call ran despite the failure")
			}
		})
	}
}

func TestForEachHonoursCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := forEach(ctx, 10, DefaultFileConcurrency, func(context.Context, int) error { calls++; return nil })
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Fatalf("err %v after %d calls; want context.Canceled and none", err, calls)
	}
}

// TestForEachOneAtATime: with a limit of one the calls run in order and the
// first error stops the rest.
func TestForEachOneAtATime(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	var order []int
	err := forEach(context.Background(), 5, 1, func(_ context.Context, i int) error {
		order = append(order, i)
		if i == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Fatalf("calls %v, want [0 1 2]", order)
	}
}
