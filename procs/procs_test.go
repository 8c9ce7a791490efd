package procs

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestGovernorObserve: the count drops to one after DownAfter quiet and
// calm intervals in a row, goes back to max at UpAt or when goroutines
// queue, and never moves on a load between the two thresholds.
func TestGovernorObserve(t *testing.T) {
	const tick = 250 * time.Millisecond
	load := func(cores float64) time.Duration { return time.Duration(cores * float64(tick)) }
	type step struct {
		cores   float64
		want    int
		changed bool
		queued  float64 // share of goroutines that waited LongWait
	}
	cases := []struct {
		name  string
		max   int
		steps []step
	}{
		{"quiet drops to one after DownAfter intervals", 4, []step{
			{0.1, 4, false, 0}, {0.1, 4, false, 0}, {0.1, 4, false, 0}, {0.1, 1, true, 0}, {0.1, 1, false, 0},
		}},
		{"a busy interval restarts the count", 2, []step{
			{0.1, 2, false, 0}, {0.1, 2, false, 0}, {0.1, 2, false, 0}, {0.7, 2, false, 0},
			{0.1, 2, false, 0}, {0.1, 2, false, 0}, {0.1, 2, false, 0}, {0.1, 1, true, 0},
		}},
		{"one core's worth raises to max", 2, []step{
			{0, 2, false, 0}, {0, 2, false, 0}, {0, 2, false, 0}, {0, 1, true, 0},
			{0.84, 1, false, 0}, {0.85, 2, true, 0}, {1.5, 2, false, 0},
		}},
		{"between the thresholds nothing moves", 2, []step{
			{0.6, 2, false, 0}, {0.8, 2, false, 0}, {0.6, 2, false, 0}, {0.7, 2, false, 0}, {0.84, 2, false, 0},
		}},
		{"goroutines queueing at one processor raise to max", 2, []step{
			{0, 2, false, 0}, {0, 2, false, 0}, {0, 2, false, 0}, {0, 1, true, 0},
			{0.3, 1, false, 0.049}, {0.3, 2, true, 0.05},
		}},
		{"queueing at max keeps it there", 2, []step{
			{0.1, 2, false, 0.01}, {0.1, 2, false, 0.2}, {0.1, 2, false, 0.01}, {0.1, 2, false, 0.01},
			{0.1, 2, false, 0}, {0.1, 2, false, 0.009}, {0.1, 2, false, 0}, {0.1, 1, true, 0},
		}},
		{"one processor: nothing to govern", 1, []step{
			{0, 1, false, 0}, {0, 1, false, 0}, {0, 1, false, 0}, {0, 1, false, 0}, {5, 1, false, 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewGovernor(c.max)
			for i, s := range c.steps {
				n, changed := g.Observe(tick, load(s.cores), s.queued)
				if n != s.want || changed != s.changed {
					t.Fatalf("step %d (%.2f cores): got %d changed=%v, want %d changed=%v", i, s.cores, n, changed, s.want, s.changed)
				}
			}
		})
	}
	if n, changed := NewGovernor(2).Observe(0, time.Second, 1); n != 2 || changed {
		t.Errorf("a zero interval changed the count: %d %v", n, changed)
	}
}

// TestRunSetsAndRestores: Run lowers the count on a quiet process, raises
// it under load, and gives back Max when its context ends.
func TestRunSetsAndRestores(t *testing.T) {
	var mu sync.Mutex
	var cpu time.Duration
	busy := false
	last := time.Now()
	cpuTime := func() (time.Duration, bool) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if busy { // a full core since the last reading
			cpu += now.Sub(last)
		}
		last = now
		return cpu, true
	}
	sets := make(chan int, 16)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Config{Max: 3, Interval: time.Millisecond, CPUTime: cpuTime, Set: func(n int) int { sets <- n; return 0 }})
	}()
	want := func(n int) {
		t.Helper()
		select {
		case got := <-sets:
			if got != n {
				t.Fatalf("Set(%d), want Set(%d)", got, n)
			}
		case <-time.After(time.Minute):
			t.Fatalf("no Set(%d)", n)
		}
	}
	want(1) // idle
	mu.Lock()
	busy = true
	mu.Unlock()
	want(3)
	mu.Lock()
	busy = false
	mu.Unlock()
	want(1)
	cancel()
	<-done
	want(3) // given back
}

// TestRunLeavesAloneWithoutCPUTime: no reading, no change.
func TestRunLeavesAloneWithoutCPUTime(t *testing.T) {
	called := false
	Run(context.Background(), Config{Max: 2, CPUTime: func() (time.Duration, bool) { return 0, false }, Set: func(int) int { called = true; return 0 }})
	Run(context.Background(), Config{Max: 1, CPUTime: ProcessCPUTime, Set: func(int) int { called = true; return 0 }})
	if called {
		t.Error("Set was called")
	}
}

// TestProcessCPUTimeGrows: the reading is the process's own and moves
// when the process computes.
func TestProcessCPUTimeGrows(t *testing.T) {
	a, ok := ProcessCPUTime()
	if !ok {
		t.Skip("no getrusage here")
	}
	x := 0
	for b, _ := ProcessCPUTime(); b == a; b, _ = ProcessCPUTime() {
		for i := range 1_000_000 {
			x += i
		}
	}
	_ = x
}

// TestSchedWaitsShare: the runtime keeps the histogram, and the share is
// a share; a process whose goroutines all wait for one processor shows
// some waiting.
func TestSchedWaitsShare(t *testing.T) {
	w := newSchedWaits()
	if _, ok := w.share(LongWait); !ok {
		t.Fatal("the runtime has no " + schedLatencyMetric)
	}
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for i := range 3_000_000 {
				x += i
			}
			_ = x
		}()
	}
	wg.Wait()
	s, ok := w.share(0)
	if !ok || s < 0 || s > 1 {
		t.Fatalf("share(0) = %v, %v", s, ok)
	}
	if s == 0 {
		t.Error("64 goroutines ran and none is counted as waiting at least 0 s")
	}
}
