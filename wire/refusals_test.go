package wire

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
)

// fakeTimers is a clock that moves only when told, and timers that fire
// only when the test calls them.
type fakeTimers struct {
	mu      sync.Mutex
	t       time.Time
	pending []func()
	delays  []time.Duration
}

func (f *fakeTimers) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeTimers) advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func (f *fakeTimers) after(d time.Duration, fn func()) func() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = append(f.pending, fn)
	f.delays = append(f.delays, d)
	return func() bool { return true }
}

// fire runs the timers scheduled so far, as if their time had come.
func (f *fakeTimers) fire() {
	f.mu.Lock()
	fns := f.pending
	f.pending = nil
	f.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

func (f *fakeTimers) install(r *refusalLog) {
	r.mu.Lock()
	r.now, r.after = f.now, f.after
	r.mu.Unlock()
}

// refusalLines returns the "refused" counts of the refusal lines in logs.
func refusalLines(t *testing.T, logs string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, "connection limit reached") {
			continue
		}
		i := strings.Index(line, "refused=")
		if i < 0 {
			t.Fatalf("refusal line without a count: %s", line)
		}
		out = append(out, strings.Fields(line[i+len("refused="):])[0])
	}
	return out
}

// TestRefusalLogOncePerSecond: refusals within one second make one line
// at once and one line with the rest when the second is over; refusals a
// second or more apart each get their own line.
func TestRefusalLogOncePerSecond(t *testing.T) {
	var logs syncbuf.Buffer
	r := newRefusalLog(hclog.New(&hclog.LoggerOptions{Output: &logs}))
	clk := &fakeTimers{t: time.Unix(1000, 0)}
	clk.install(r)

	for i := 0; i < 500; i++ {
		r.refused("127.0.0.1:1", 8)
		clk.advance(time.Millisecond) // 500 refusals over half a second
	}
	if got := refusalLines(t, logs.String()); len(got) != 1 || got[0] != "1" {
		t.Fatalf("after a half-second burst: refusal lines %v, want one line counting 1", got)
	}
	if len(clk.delays) != 1 || clk.delays[0] != refusalLogInterval-time.Millisecond {
		t.Fatalf("flush timers scheduled %v, want one at the end of the second", clk.delays)
	}
	clk.advance(500 * time.Millisecond)
	clk.fire()
	if got := refusalLines(t, logs.String()); len(got) != 2 || got[1] != "499" {
		t.Fatalf("after the second: refusal lines %v, want [1 499]", got)
	}

	// A refusal more than a second after the last line is written at once.
	clk.advance(2 * time.Second)
	r.refused("127.0.0.1:2", 8)
	if got := refusalLines(t, logs.String()); len(got) != 3 || got[2] != "1" {
		t.Fatalf("a lone later refusal: refusal lines %v, want a third counting 1", got)
	}
	// Nothing pending: a flush writes nothing.
	r.flush()
	if got := refusalLines(t, logs.String()); len(got) != 3 {
		t.Fatalf("empty flush wrote a line: %v", got)
	}
	// stop writes what is pending and schedules nothing more.
	r.refused("127.0.0.1:3", 8)
	r.refused("127.0.0.1:4", 8)
	r.stop()
	r.refused("127.0.0.1:5", 8)
	if got := refusalLines(t, logs.String()); len(got) != 4 || got[3] != "2" {
		t.Fatalf("after stop: refusal lines %v, want a fourth counting 2", got)
	}
	if n := len(clk.pending); n != 1 {
		t.Fatalf("%d flushes scheduled after stop, want only the one before it", n)
	}
}

// TestMaxConnsRefusalsCountedAndLoggedOnce: with MaxConns=N, N+k
// connections give k refusals, each counted by the Observer, and one log
// line for the burst (the clock does not move), then one line with the
// rest when the second is over; the lines' counts add up to k.
func TestMaxConnsRefusalsCountedAndLoggedOnce(t *testing.T) {
	const n, k = 3, 25
	rec := newRecorder()
	var logs syncbuf.Buffer
	srv, addr := startServer(t, ServerConfig{
		MaxConns: n,
		Observer: rec,
		Logger:   hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: &logs}),
	}, newControl())
	clk := &fakeTimers{t: time.Unix(1000, 0)}
	clk.install(srv.refusals)

	for i := 0; i < n; i++ {
		c := dialClient(t, addr)
		// A handshake proves the connection was accepted and is counted.
		if _, err := c.Handshake(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < k; i++ {
		// The refusal is counted and logged before the close is seen.
		dialRaw(t, addr).ExpectClosed("the server closes it")
	}
	rec.mu.Lock()
	refused := append([]string(nil), rec.refused...)
	accepted := rec.accepted
	rec.mu.Unlock()
	if accepted != n || len(refused) != k {
		t.Fatalf("observer: %d accepted, %d refused, want %d and %d", accepted, len(refused), n, k)
	}
	for _, reason := range refused {
		if reason != "limit" {
			t.Fatalf("refusal reason %q, want limit", reason)
		}
	}
	if got := refusalLines(t, logs.String()); len(got) != 1 || got[0] != "1" {
		t.Fatalf("refusal lines in one burst: %v, want one counting 1\n%s", got, logs.String())
	}
	clk.advance(refusalLogInterval)
	clk.fire()
	if got := refusalLines(t, logs.String()); len(got) != 2 || got[1] != strconv.Itoa(k-1) {
		t.Fatalf("refusal lines after the second: %v, want [1 %d]", got, k-1)
	}
	if srv.ActiveConns() != n {
		t.Fatalf("ActiveConns = %d, want %d", srv.ActiveConns(), n)
	}
}
