package cleanup

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

func connect(t *testing.T, addr, root string, session time.Duration) *zk.Client {
	t.Helper()
	zktest.SkipIfShort(t)
	c, err := zk.Connect(t.Context(), zk.Config{Address: addr, Root: root, SessionTimeout: session, ConnectionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// candidate is one elector running until the test ends or stop is called.
type candidate struct {
	e      *Elector
	zc     *zk.Client
	stop   context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	states []bool
}

func campaign(t *testing.T, zc *zk.Client, name string) *candidate {
	t.Helper()
	c := &candidate{zc: zc, done: make(chan struct{})}
	e, err := NewElector(ElectorConfig{ZK: zc, Identity: []byte(name), RetryBackoff: 50 * time.Millisecond,
		OnChange: func(l bool) { c.mu.Lock(); c.states = append(c.states, l); c.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	c.e = e
	ctx, cancel := context.WithCancel(context.Background())
	c.stop = func() { cancel(); <-c.done }
	go func() { defer close(c.done); e.Run(ctx) }()
	t.Cleanup(c.stop)
	return c
}

func confirmed(t *testing.T, c *candidate) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l, who, err := c.e.Confirm(ctx)
	if err != nil {
		return false, ""
	}
	return l, who
}

// TestElectorHandover: of two candidates exactly one leads and both agree
// who; a leader that resigns hands over at once, and one whose session
// expires (it is cut off from ZooKeeper) hands over when the server drops
// its ephemeral znode, then follows once it is back.
func TestElectorHandover(t *testing.T) {
	srv := zktest.StartT(t) // its own server: the test cuts a client off
	root := zktest.UniqueRoot()
	cut := zktest.NewCutter(t, srv.Addr)
	a := campaign(t, connect(t, cut.Addr(), root, 4*time.Second), "a")
	eventually.True(t, "a to lead", func() bool { return a.e.Leading() })
	b := campaign(t, connect(t, srv.Addr, root, 30*time.Second), "b")
	eventually.True(t, "b to know the leader", func() bool { _, who := confirmed(t, b); return who == "a" })
	if la, _ := confirmed(t, a); !la || b.e.Leading() {
		t.Fatalf("a confirms %v, b leads %v", la, b.e.Leading())
	}
	if lb, _ := confirmed(t, b); lb {
		t.Fatal("b confirms leading while a leads")
	}

	// a is cut off: its session expires, b takes over.
	cut.Cut()
	eventually.True(t, "b to lead after a's session expired", func() bool { l, _ := confirmed(t, b); return l && b.e.Leading() })
	cut.Restore()
	eventually.True(t, "a to follow after it is back", func() bool { return !a.e.Leading() })
	if la, who := confirmed(t, a); la || who != "b" {
		t.Fatalf("a confirms %v, leader %q; want b", la, who)
	}

	// b resigns by stopping: a takes over at once.
	b.stop()
	eventually.True(t, "a to lead after b resigned", func() bool { l, _ := confirmed(t, a); return l && a.e.Leading() })

	a.mu.Lock()
	defer a.mu.Unlock()
	// Led, lost it while cut off, led again (a loaded machine may add a
	// spurious expiry in between, never a change that is not a flip).
	st := a.states
	if len(st) < 3 || !st[0] || !st[len(st)-1] {
		t.Fatalf("a's leadership changes %v, want true, false, ..., true", st)
	}
	for i := 1; i < len(st); i++ {
		if st[i] == st[i-1] {
			t.Fatalf("a's leadership changes %v report a non-change", st)
		}
	}
}

// fakeRegistry counts rounds.
type fakeRegistry struct {
	mu     sync.Mutex
	rounds int
}

func (f *fakeRegistry) CleanupExpired(context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rounds++
	return 2, nil
}

func (f *fakeRegistry) CleanupOrphans(context.Context, storage.OrphanStore, time.Duration) (producer.OrphanReport, error) {
	return producer.OrphanReport{Deleted: 1}, nil
}

type runs struct {
	mu sync.Mutex
	by map[string]int
	n  map[string]int
}

func (r *runs) CleanupRun(result string, expired, orphans int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.by[result]++
	r.n["expired"] += expired
	r.n["orphans"] += orphans
}
func (r *runs) CleanupLeader(bool) {}

func (r *runs) get(k string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.by[k]
}

// TestRunOnlyOnLeader: rounds run on the leader and are reported as
// following elsewhere.
func TestRunOnlyOnLeader(t *testing.T) {
	root := zktest.UniqueRoot()
	a := campaign(t, connect(t, zkAddr, root, 10*time.Second), "a")
	eventually.True(t, "a to lead", func() bool { return a.e.Leading() })
	b := campaign(t, connect(t, zkAddr, root, 10*time.Second), "b")
	eventually.True(t, "b to follow", func() bool { _, who := confirmed(t, b); return who == "a" })
	regA, regB := &fakeRegistry{}, &fakeRegistry{}
	obsA := &runs{by: map[string]int{}, n: map[string]int{}}
	obsB := &runs{by: map[string]int{}, n: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, r := range []struct {
		reg *fakeRegistry
		c   *candidate
		obs *runs
	}{{regA, a, obsA}, {regB, b, obsB}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			Run(ctx, Config{Registry: r.reg, Interval: 20 * time.Millisecond, Leader: r.c.e, Observer: r.obs})
		}()
	}
	eventually.True(t, "rounds on both", func() bool { return obsA.get(ResultOK) >= 3 && obsB.get(ResultFollowing) >= 3 })
	cancel()
	wg.Wait()
	if regB.rounds != 0 || obsB.get(ResultOK) != 0 {
		t.Fatalf("the follower ran %d rounds (%d reported ok)", regB.rounds, obsB.get(ResultOK))
	}
	if obsA.n["expired"] != 2*obsA.get(ResultOK) || obsA.n["orphans"] != obsA.get(ResultOK) {
		t.Fatalf("leader's counts %v for %d rounds", obsA.n, obsA.get(ResultOK))
	}
}
