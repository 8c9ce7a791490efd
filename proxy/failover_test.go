package proxy_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// cluster is fake coordinators of one cluster sharing a ledger, with the
// active one registered in ZooKeeper and followed by a ZKDiscovery.
type cluster struct {
	t      *testing.T
	zc     *zk.Client
	disc   *proxy.ZKDiscovery
	ledger *fakecoord.Ledger
	coords []*fakecoord.Coordinator
	leader int
}

func newCluster(t *testing.T, n int, users map[string]string) *cluster {
	t.Helper()
	ctx := t.Context()
	zc := connectZK(t)
	disc := runDiscovery(t, proxy.ZKDiscoveryConfig{ZK: zc, RetryBackoff: 50 * time.Millisecond})
	c := &cluster{t: t, zc: zc, disc: disc, ledger: &fakecoord.Ledger{}}
	for i := range n {
		f := startFake(t, fakecoord.Config{NodeID: int32(i + 1), Ledger: c.ledger, Users: users})
		f.SetStandby(i != 0)
		c.coords = append(c.coords, f)
	}
	c.register(0)
	eventually.True(t, "discovery to see the first leader", func() bool {
		addr, err := disc.Current(ctx)
		return err == nil && addr == c.coords[0].Addr()
	})
	return c
}

// register writes coordinator i as the active one (a new ephemeral znode).
func (c *cluster) register(i int) {
	c.t.Helper()
	v2 := fmt.Sprintf(`{"version":2,"id":"%d","listeners":"CLIENT://%s"}`, i+1, c.coords[i].Addr())
	if _, err := c.zc.Create(c.t.Context(), proxy.ActiveCoordinatorPath, []byte(v2), zk.Ephemeral); err != nil {
		c.t.Fatal(err)
	}
}

// elect moves leadership to the next coordinator as a fail-over does: the
// leader steps down (answers 65), its registration goes, the next one
// registers, then leads.
func (c *cluster) elect() {
	c.t.Helper()
	next := (c.leader + 1) % len(c.coords)
	c.coords[c.leader].SetStandby(true)
	if err := c.zc.Delete(c.t.Context(), proxy.ActiveCoordinatorPath, -1); err != nil {
		c.t.Fatal(err)
	}
	c.register(next)
	c.coords[next].SetStandby(false)
	c.leader = next
}

// writeLoad is clients writing through the proxy, several requests in flight
// on each connection, each write a body of its own.
type writeLoad struct {
	mu        sync.Mutex
	acked     map[string]bool
	notLeader map[string]bool
	other     []string
	sent      atomic.Int64
	stop      chan struct{}
	wg        sync.WaitGroup
}

func startWriteLoad(t *testing.T, addr string, conns, perConn int) *writeLoad {
	t.Helper()
	w := &writeLoad{acked: map[string]bool{}, notLeader: map[string]bool{}, stop: make(chan struct{})}
	ctx := t.Context()
	for c := range conns {
		cl, err := wire.Dial(ctx, addr, wire.ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		if _, err := cl.Handshake(ctx); err != nil {
			t.Fatal(err)
		}
		for g := range perConn {
			w.wg.Add(1)
			go func() {
				defer w.wg.Done()
				for n := 0; ; n++ {
					select {
					case <-w.stop:
						return
					default:
					}
					body := fmt.Sprintf("c%d-g%d-%d", c, g, n)
					w.sent.Add(1)
					r, err := cl.CallRaw(ctx, messages.KeyCreateDatabase, 0, []byte(body))
					w.mu.Lock()
					switch fe, _ := flusserr.From(r.Err()); {
					case err != nil:
						w.other = append(w.other, fmt.Sprintf("%s: %v", body, err))
					case r.Type == wire.ResponseSuccess && string(r.Body) == body:
						w.acked[body] = true
					case fe != nil && fe.Code == flusserr.NotCoordinatorLeader:
						w.notLeader[body] = true
					default:
						w.other = append(w.other, fmt.Sprintf("%s: %v %v", body, r.Type, r.Err()))
					}
					w.mu.Unlock()
				}
			}()
		}
	}
	return w
}

func (w *writeLoad) counts() (acked, notLeader int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked), len(w.notLeader)
}

func (w *writeLoad) finish() {
	close(w.stop)
	w.wg.Wait()
}

// TestFailoverUnderLoad moves leadership between two fake coordinators
// while clients write through the proxy with several writes in flight per
// connection. With resends on, no client sees 65, every write is
// acknowledged, and the coordinators' shared ledger holds each exactly
// once. With resends off (MaxResends NoResends) the same fail-over shows
// the clients 65, and those writes were not applied: the test that the
// resends are what hides it.
func TestFailoverUnderLoad(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxResends int
		elections  int
	}{
		{"resends on", 0, 6},
		{"resends off", proxy.NoResends, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 2, nil)
			ln := listener(t)
			p := serveProxy(t, ln, proxy.Config{Upstream: c.disc, Local: wire.NewMux(), MaxResends: tc.maxResends,
				ResendBackoff: 5 * time.Millisecond}, wire.ServerConfig{})
			w := startWriteLoad(t, ln.Addr().String(), 4, 4)
			for range tc.elections {
				before, _ := w.counts()
				eventually.True(t, "writes acknowledged before the election", func() bool {
					n, _ := w.counts()
					return n >= before+50
				})
				c.elect()
			}
			if tc.maxResends == proxy.NoResends {
				eventually.True(t, "a client to see 65", func() bool { _, n := w.counts(); return n > 0 })
			} else {
				before, _ := w.counts()
				eventually.True(t, "writes acknowledged after the last election", func() bool {
					n, _ := w.counts()
					return n >= before+50
				})
			}
			w.finish()

			applied := c.ledger.Applied()
			st := p.FailoverStats()
			t.Logf("%d writes sent, %d acknowledged, %d answered 65, %d applied; %d elections; stats %+v",
				w.sent.Load(), len(w.acked), len(w.notLeader), len(applied), tc.elections, st)
			if len(w.other) > 0 {
				t.Fatalf("%d writes got other answers; first: %s", len(w.other), w.other[0])
			}
			for body := range w.acked {
				if applied[body] != 1 {
					t.Errorf("acknowledged write %s applied %d times", body, applied[body])
				}
			}
			for body, n := range applied {
				if n != 1 {
					t.Errorf("write %s applied %d times", body, n)
				}
			}
			for body := range w.notLeader {
				if applied[body] != 0 {
					t.Errorf("write %s answered 65 but applied %d times", body, applied[body])
				}
			}
			if got := int64(len(w.acked) + len(w.notLeader)); got != w.sent.Load() {
				t.Errorf("%d writes sent, %d answered", w.sent.Load(), got)
			}
			if len(applied) != len(w.acked) {
				t.Errorf("%d writes applied, %d acknowledged", len(applied), len(w.acked))
			}
			if tc.maxResends == proxy.NoResends {
				if st.Resends != 0 || st.Moves != 0 || st.NotLeaderPassed != uint64(len(w.notLeader)) {
					t.Errorf("resends off: stats %+v, %d answers 65 seen", st, len(w.notLeader))
				}
				return
			}
			if len(w.notLeader) > 0 {
				t.Errorf("%d writes answered 65 through the proxy; first few: %v", len(w.notLeader), w.notLeader)
			}
			if st.Resends == 0 || st.Moves < uint64(tc.elections) || st.NotLeaderPassed != 0 || st.NotLeaderAnswers < st.Resends {
				t.Errorf("stats %+v after %d elections", st, tc.elections)
			}
		})
	}
}

// TestFailoverLogsInAgain: on a SASL listener, the connection the proxy
// moves to logs in as the client's user before the request goes there.
func TestFailoverLogsInAgain(t *testing.T) {
	users := map[string]string{"alice": "alice-pw"}
	c := newCluster(t, 2, users)
	ln := listener(t)
	p := serveProxy(t, ln, proxy.Config{Upstream: c.disc, Local: wire.NewMux(), ResendBackoff: 5 * time.Millisecond,
		UpstreamCredentials: func(*wire.Session) (string, string, bool) { return "alice", "alice-pw", true },
	}, wire.ServerConfig{})
	r := dialRaw(t, ln.Addr().String())
	r.Handshake()
	r.Send(messages.KeyCreateDatabase, 0, 1, []byte("before"))
	if got := r.Read(); got.Type != wire.ResponseSuccess {
		t.Fatal(got.Err())
	}
	c.elect()
	r.Send(messages.KeyCreateDatabase, 0, 2, []byte("after"))
	if got := r.Read(); got.Type != wire.ResponseSuccess || string(got.Body) != "after" {
		t.Fatalf("after the election: %v %v", got.Type, got.Err())
	}
	var principals []string
	for _, req := range c.coords[1].Requests() {
		if req.APIKey == messages.KeyCreateDatabase {
			principals = append(principals, req.Principal)
		}
	}
	if len(principals) != 1 || principals[0] != "alice" {
		t.Fatalf("the new leader saw CREATE_DATABASE as %q, want once as alice", principals)
	}
	if st := p.FailoverStats(); st.Moves != 1 || st.Resends != 1 || st.NotLeaderAnswers != 1 {
		t.Fatalf("stats %+v", st)
	}
	if got := c.ledger.Applied(); got["before"] != 1 || got["after"] != 1 || len(got) != 2 {
		t.Fatalf("ledger %v", got)
	}
}

// TestFailoverStaticUpstream: a fixed upstream is the only coordinator
// there is. A request it answers 65 goes back to it after a pause, up to
// MaxResends times; then the client gets the 65 as it came. A leader that
// returns meanwhile answers the resend.
func TestFailoverStaticUpstream(t *testing.T) {
	fake := startFake(t, fakecoord.Config{})
	fake.SetStandby(true)
	ln := listener(t)
	p := serveProxy(t, ln, proxy.Config{Upstream: proxy.StaticUpstream(fake.Addr()), Local: wire.NewMux(),
		MaxResends: 2, ResendBackoff: time.Millisecond}, wire.ServerConfig{})
	r := dialRaw(t, ln.Addr().String())
	r.Handshake()
	r.Send(messages.KeyCreateDatabase, 0, 7, []byte("w1"))
	wantCode(t, r.Read(), flusserr.NotCoordinatorLeader, fakecoord.NotLeaderMessage)
	if n := len(fake.RequestsFor(messages.KeyCreateDatabase)); n != 3 {
		t.Fatalf("the coordinator saw the request %d times, want 3 (sent, resent twice)", n)
	}
	if st := p.FailoverStats(); st.Resends != 2 || st.NotLeaderAnswers != 3 || st.NotLeaderPassed != 1 || st.Moves != 2 {
		t.Fatalf("stats %+v", st)
	}

	// The same through the ordinary path (the first GET_METADATA of a
	// link is checked there).
	r.Send(messages.KeyGetMetadata, 0, 8, nil)
	wantCode(t, r.Read(), flusserr.NotCoordinatorLeader, fakecoord.NotLeaderMessage)

	// The leader returns while a request is being resent: it answers.
	ln2 := listener(t)
	p3 := serveProxy(t, ln2, proxy.Config{Upstream: proxy.StaticUpstream(fake.Addr()), Local: wire.NewMux(),
		MaxResends: 1000, ResendBackoff: time.Millisecond, ResendTimeout: time.Hour}, wire.ServerConfig{})
	r2 := dialRaw(t, ln2.Addr().String())
	r2.Handshake()
	seen := len(fake.RequestsFor(messages.KeyCreateDatabase))
	r2.Send(messages.KeyCreateDatabase, 0, 9, []byte("w2"))
	eventually.True(t, "the request to be resent", func() bool {
		return len(fake.RequestsFor(messages.KeyCreateDatabase)) >= seen+3
	})
	fake.SetStandby(false)
	if got := r2.Read(); got.Type != wire.ResponseSuccess || string(got.Body) != "w2" {
		t.Fatalf("after the leader returned: %v %v", got.Type, got.Err())
	}
	if got := fake.Ledger().Applied(); got["w1"] != 0 || got["w2"] != 1 {
		t.Fatalf("ledger %v", got)
	}
	if st := p3.FailoverStats(); st.Resends < 2 || st.NotLeaderPassed != 0 {
		t.Fatalf("stats %+v", st)
	}
}
