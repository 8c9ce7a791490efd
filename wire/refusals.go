package wire

import (
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// refusalLogInterval is the least time between two log lines about
// connections refused at MaxConns.
const refusalLogInterval = time.Second

// refusalLog writes the WARN line about connections refused at MaxConns at
// most once per refusalLogInterval, with the number refused since the
// previous line, so a storm of thousands of connections writes a few lines
// rather than one per connection. The Observer still counts every refusal.
// A refusal that falls inside the interval is written by a timer at the
// interval's end (or by stop), so the last count of a burst is not lost.
type refusalLog struct {
	log hclog.Logger
	// now is time.Now and after is time.AfterFunc, returning its Stop;
	// tests replace them.
	now   func() time.Time
	after func(time.Duration, func()) (stop func() bool)

	mu      sync.Mutex
	last    time.Time   // when the last line was written; zero before the first
	pending int         // refusals not yet in a line
	lastMax int         // MaxConns of the latest refusal
	remote  string      // peer of the latest refusal
	timer   func() bool // stops the scheduled flush, if any
	stopped bool
}

func newRefusalLog(log hclog.Logger) *refusalLog {
	after := func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	return &refusalLog{log: log, now: time.Now, after: after}
}

// refused records one connection closed because maxConns were open.
func (r *refusalLog) refused(remote string, maxConns int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending++
	r.remote, r.lastMax = remote, maxConns
	now := r.now()
	if r.last.IsZero() || now.Sub(r.last) >= refusalLogInterval {
		r.write(now)
		return
	}
	if r.timer == nil && !r.stopped {
		r.timer = r.after(r.last.Add(refusalLogInterval).Sub(now), r.flush)
	}
}

// flush writes the refusals counted since the last line, if any.
func (r *refusalLog) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timer = nil
	if r.pending > 0 {
		r.write(r.now())
	}
}

// stop writes what is pending and schedules nothing more: the server has
// closed.
func (r *refusalLog) stop() {
	r.mu.Lock()
	r.stopped = true
	if r.timer != nil {
		r.timer()
	}
	r.mu.Unlock()
	r.flush()
}

func (r *refusalLog) write(now time.Time) {
	r.log.Warn("connection limit reached; closing new connections",
		"refused", r.pending, "max_conns", r.lastMax, "last_remote", r.remote,
		"hint", "raise sidecar.max-connections or the open-files limit; see docs/limits.md")
	r.pending = 0
	r.last = now
}
