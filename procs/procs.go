// Package procs sizes the Go scheduler to the process's own load: one
// processor (GOMAXPROCS 1) while the process uses less than one core, all
// of them once it needs more.
//
// Why: a sidecar serving a few connections spends most of its time waiting
// for ZooKeeper and its clients, and each time a goroutine becomes ready
// the runtime wakes an idle processor's thread to look for work, which
// finds none and sleeps again. On a 2-CPU host the sidecar's threads
// spent a third of its CPU in the kernel's context switches in the
// 16-connection GET storm (docs/performance.md); on one processor the same
// storm took 9–17% less CPU per GET in the same runs and served as many.
// When one processor is not enough (a load near one core, or goroutines
// queueing to run), the governor gives the runtime every processor back
// within one interval.
package procs

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults for Config.
const (
	DefaultInterval = 250 * time.Millisecond
	// UpAt is the load, in cores over one interval, at which a process
	// held to one processor gets all of them: near one core it is, or is
	// about to be, short of CPU.
	UpAt = 0.85
	// DownBelow and DownAfter: a process with every processor that uses
	// less than DownBelow cores for DownAfter intervals in a row goes back
	// to one. The gap to UpAt keeps it from switching back and forth: the
	// same work takes less CPU on one processor than on several.
	DownBelow = 0.6
	DownAfter = 4
	// LongWait, QueuedAt and CalmBelow read the runtime's scheduling
	// latencies: the share of goroutines that waited LongWait or more,
	// runnable, before they ran. At one processor a share of QueuedAt or
	// more raises to Max whatever the load: the process is short of
	// processors (on a host whose other processes take the CPU, its load
	// stays low while its goroutines queue). At Max the share must stay
	// below CalmBelow for the count to drop.
	LongWait  = 500 * time.Microsecond
	QueuedAt  = 0.05
	CalmBelow = 0.01
)

// Config holds a Governor's dependencies.
type Config struct {
	// Max is the most processors to give, the runtime's own choice at
	// start (runtime.GOMAXPROCS(0)). With Max 1 there is nothing to do.
	Max int
	// Interval is how often the load is read (DefaultInterval if zero).
	Interval time.Duration
	// CPUTime is the CPU time, user and system, the process has used so
	// far; ok false stops the governor (the processors stay at Max).
	CPUTime func() (d time.Duration, ok bool)
	// Set sets the number of processors (runtime.GOMAXPROCS).
	Set func(n int) int
	// Log gets one Debug line per change; nil for none.
	Log hclog.Logger
}

// Governor decides the processor count from successive load readings. It
// is not safe for concurrent use; Run owns one.
type Governor struct {
	max   int
	procs int
	quiet int // intervals in a row below DownBelow at max
}

// NewGovernor returns a governor that starts at max processors.
func NewGovernor(max int) *Governor {
	if max < 1 {
		max = 1
	}
	return &Governor{max: max, procs: max}
}

// Procs is the processor count the governor has decided on.
func (g *Governor) Procs() int { return g.procs }

// Observe takes the CPU time used over elapsed wall time and the share of
// goroutines that waited LongWait or more to run, and returns the
// processor count to run with, and whether it changed.
func (g *Governor) Observe(elapsed, cpu time.Duration, queued float64) (procs int, changed bool) {
	if elapsed <= 0 || g.max == 1 {
		return g.procs, false
	}
	load := cpu.Seconds() / elapsed.Seconds()
	switch {
	case g.procs == 1 && (load >= UpAt || queued >= QueuedAt):
		g.procs, g.quiet = g.max, 0
		return g.procs, true
	case g.procs > 1 && load < DownBelow && queued < CalmBelow:
		g.quiet++
		if g.quiet >= DownAfter {
			g.procs, g.quiet = 1, 0
			return g.procs, true
		}
	case g.procs > 1:
		g.quiet = 0
	}
	return g.procs, false
}

// Run governs the processor count until ctx ends, then gives back Max. It
// returns at once when Max is 1 or the CPU time cannot be read.
func Run(ctx context.Context, cfg Config) {
	if cfg.Max <= 1 || cfg.CPUTime == nil || cfg.Set == nil {
		return
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	cpu0, ok := cfg.CPUTime()
	if !ok {
		return
	}
	g := NewGovernor(cfg.Max)
	defer func() {
		if g.Procs() != cfg.Max {
			cfg.Set(cfg.Max)
		}
	}()
	waits := newSchedWaits()
	waits.share(0)
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			cpu1, ok := cfg.CPUTime()
			if !ok {
				return
			}
			queued, _ := waits.share(LongWait)
			n, changed := g.Observe(now.Sub(last), cpu1-cpu0, queued)
			last, cpu0 = now, cpu1
			if changed {
				cfg.Set(n)
				if cfg.Log != nil {
					cfg.Log.Debug("processors set", "gomaxprocs", n, "max", cfg.Max)
				}
			}
		}
	}
}
