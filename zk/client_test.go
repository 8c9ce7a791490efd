package zk

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

func TestNormalizeRoot(t *testing.T) {
	cases := map[string]string{
		"fluss/":    "/fluss",
		"/fluss":    "/fluss",
		"fluss":     "/fluss",
		"/a/b/":     "/a/b",
		"//a/b//":   "/a/b",
		"/":         "/",
		"///":       "/",
		"":          "/",
		"/fluss-1/": "/fluss-1",
	}
	for in, want := range cases {
		if got := NormalizeRoot(in); got != want {
			t.Errorf("NormalizeRoot(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, addr := range []string{"", "  ", " , ,"} {
		err := Config{Address: addr}.Validate()
		if err == nil || !strings.Contains(err.Error(), "No valid ZooKeeper quorum has been specified") {
			t.Errorf("Address %q: %v", addr, err)
		}
		if _, err := Connect(context.Background(), Config{Address: addr}); err == nil {
			t.Errorf("Connect(%q) succeeded", addr)
		}
	}
	if err := (Config{Address: "zk1:2181, zk2:2181"}).Validate(); err != nil {
		t.Error(err)
	}
	c := Config{Address: "a"}.withDefaults()
	if c.Root != "/fluss" || c.SessionTimeout != 60*time.Second || c.ConnectionTimeout != 15*time.Second {
		t.Errorf("defaults: %+v", c)
	}
}

func TestClientOps(t *testing.T) {
	ctx := t.Context()
	root := zktest.UniqueRoot()
	c := connect(t, zkAddr, root+"/") // trailing slash is normalized away
	raw := zktest.RawConn(t, zkAddr)

	if c.Root() != root || c.FullPath("/x") != root+"/x" || c.FullPath("/") != root {
		t.Fatalf("paths: %q %q", c.Root(), c.FullPath("/x"))
	}
	if _, _, err := c.Get(ctx, "/a"); !errors.Is(err, ErrNoNode) || !errors.Is(err, gozk.ErrNoNode) {
		t.Fatalf("Get missing: %v", err)
	}
	if ok, _, err := c.Exists(ctx, "/"); ok || err != nil {
		t.Fatalf("root exists before any create: %v %v", ok, err)
	}

	// Create makes the root and the parents, empty and persistent.
	p, err := c.Create(ctx, "/a/b/c", []byte("hello"), Persistent)
	if err != nil || p != "/a/b/c" {
		t.Fatalf("Create = %q, %v", p, err)
	}
	for _, full := range []string{root, root + "/a", root + "/a/b"} {
		data, st, err := raw.Get(full)
		if err != nil || len(data) != 0 || st.EphemeralOwner != 0 {
			t.Errorf("parent %s: %q %+v %v", full, data, st, err)
		}
		acl, _, err := raw.GetACL(full)
		if err != nil || len(acl) != 1 || acl[0] != gozk.WorldACL(gozk.PermAll)[0] {
			t.Errorf("parent %s ACL %+v %v", full, acl, err)
		}
	}
	acl, _, err := raw.GetACL(root + "/a/b/c")
	if err != nil || len(acl) != 1 || acl[0].Scheme != "world" || acl[0].ID != "anyone" || acl[0].Perms != gozk.PermAll {
		t.Errorf("ACL %+v %v", acl, err)
	}

	data, st, err := c.Get(ctx, "/a/b/c")
	if err != nil || string(data) != "hello" || st.Version != 0 || st.Czxid == 0 || st.DataLength != 5 {
		t.Fatalf("Get = %q %+v %v", data, st, err)
	}
	if _, err := c.Create(ctx, "/a/b/c", nil, Persistent); !errors.Is(err, ErrNodeExists) {
		t.Fatalf("second Create: %v", err)
	}

	// GetW fires on a change.
	_, _, watch, err := c.GetW(ctx, "/a/b/c")
	if err != nil {
		t.Fatal(err)
	}
	st2, err := c.Set(ctx, "/a/b/c", []byte("v2"), 0)
	if err != nil || st2.Version != 1 {
		t.Fatalf("Set: %+v %v", st2, err)
	}
	select {
	case ev := <-watch:
		if ev.Type != gozk.EventNodeDataChanged {
			t.Errorf("event %+v", ev)
		}
		if lp, ok := c.LogicalPath(ev.Path); !ok || lp != "/a/b/c" {
			t.Errorf("event path %q → %q %v", ev.Path, lp, ok)
		}
	case <-ctx.Done():
		t.Fatal("no watch event")
	}
	if _, err := c.Set(ctx, "/a/b/c", []byte("v3"), 0); !errors.Is(err, ErrBadVersion) {
		t.Fatalf("stale Set: %v", err)
	}

	// Children and sequential nodes.
	names, cw, err := c.ChildrenW(ctx, "/a")
	if err != nil || len(names) != 1 || names[0] != "b" {
		t.Fatalf("ChildrenW: %v %v", names, err)
	}
	seq, err := c.Create(ctx, "/a/q-", []byte("x"), PersistentSequential)
	if err != nil || !strings.HasPrefix(seq, "/a/q-") || len(seq) != len("/a/q-")+10 {
		t.Fatalf("sequential: %q %v", seq, err)
	}
	select {
	case ev := <-cw:
		if ev.Type != gozk.EventNodeChildrenChanged {
			t.Errorf("event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no child event")
	}
	names, err = c.Children(ctx, "/a")
	if err != nil || len(names) != 2 {
		t.Fatalf("Children: %v %v", names, err)
	}
	if _, err := c.Children(ctx, "/nope"); !errors.Is(err, ErrNoNode) {
		t.Fatalf("Children missing: %v", err)
	}

	ok, _, ew, err := c.ExistsW(ctx, "/later")
	if ok || err != nil {
		t.Fatalf("ExistsW: %v %v", ok, err)
	}
	if _, err := c.Create(ctx, "/later", nil, Persistent); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-ew:
		if ev.Type != gozk.EventNodeCreated {
			t.Errorf("event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no exists event")
	}
	if d, _, err := raw.Get(root + "/later"); err != nil || d == nil || len(d) != 0 {
		t.Errorf("nil data stored as %v (%v), want 0 bytes", d, err)
	}

	// Delete with versions.
	if err := c.Delete(ctx, "/a/b/c", 0); !errors.Is(err, ErrBadVersion) {
		t.Fatalf("Delete stale: %v", err)
	}
	if err := c.Delete(ctx, "/a/b", -1); err == nil || errors.Is(err, ErrNoNode) {
		t.Fatalf("Delete non-empty: %v", err)
	}
	if err := c.Delete(ctx, "/a/b/c", 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/a/b/c", -1); !errors.Is(err, ErrNoNode) {
		t.Fatalf("Delete missing: %v", err)
	}

	// Bad paths are refused without a round trip.
	for _, bad := range []string{"", "x", "/x/", "/x//y"} {
		if _, _, err := c.Get(ctx, bad); err == nil || !errors.Is(err, gozk.ErrInvalidPath) {
			t.Errorf("Get(%q): %v", bad, err)
		}
	}
}

func TestSlashRoot(t *testing.T) {
	ctx := t.Context()
	c := connect(t, zkAddr, "/")
	if c.Root() != "/" || c.FullPath("/x") != "/x" {
		t.Fatalf("%q %q", c.Root(), c.FullPath("/x"))
	}
	p := zktest.UniqueRoot() + "/n"
	if _, err := c.Create(ctx, p, []byte("1"), Persistent); err != nil {
		t.Fatal(err)
	}
	if d, _, err := zktest.RawConn(t, zkAddr).Get(p); err != nil || string(d) != "1" {
		t.Fatalf("%q %v", d, err)
	}
}

func TestContextAndClose(t *testing.T) {
	c := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Get(ctx, "/x"); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled ctx: %v", err)
	}
	c.Close()
	c.Close()
	if _, _, err := c.Get(t.Context(), "/x"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestConnectNoServer(t *testing.T) {
	port := zktest.LoopbackPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := Connect(ctx, Config{Address: "127.0.0.1:" + strconv.Itoa(port)})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
}

// TestServerOutage stops ZooKeeper under a connected client: calls fail with
// ErrUnavailable within their deadline instead of hanging, and after a
// restart on the same port the client reconnects (same session) and works.
func TestServerOutage(t *testing.T) {
	srv := zktest.StartT(t)
	c := connect(t, srv.Addr, "/fluss")
	ctx := t.Context()
	if _, err := c.Create(ctx, "/before", []byte("x"), Persistent); err != nil {
		t.Fatal(err)
	}
	session := c.SessionID()

	srv.Stop()
	short, cancel := context.WithTimeout(ctx, time.Second)
	_, _, err := c.Get(short, "/before")
	cancel()
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Get during outage: %v", err)
	}
	short, cancel = context.WithTimeout(ctx, time.Second)
	err = c.CreateAtVersion(short, "/producers/p", []byte("{}"), 1)
	cancel()
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("CreateAtVersion during outage: %v", err)
	}

	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	// The client reconnects by itself; retry until a call succeeds.
	eventually.Nil(t, "a Get after the restart", func() error {
		data, _, err := c.Get(ctx, "/before")
		if err == nil {
			if string(data) != "x" {
				t.Fatalf("data %q", data)
			}
			return nil
		}
		if !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			t.Fatalf("after restart: %v", err)
		}
		return err
	})
	if c.SessionID() != session {
		t.Logf("session changed from %x to %x", session, c.SessionID())
	}
	if err := c.CreateAtVersion(ctx, "/producers/p2", []byte("{}"), 1); err != nil {
		t.Fatalf("CreateAtVersion after restart: %v", err)
	}
}

// TestSessionExpiry cuts the client off until the server expires its
// session, then reconnects it: the client opens a new session by itself,
// its watches report the loss, and OnNewSession callbacks run.
func TestSessionExpiry(t *testing.T) {
	srv := zktest.StartT(t) // tickTime 500 ms: sessions may be as short as 1 s
	cut := zktest.NewCutter(t, srv.Addr)
	events := &eventLog{}
	c := connect(t, cut.Addr(), "/fluss", func(cfg *Config) { cfg.SessionTimeout = 2 * time.Second; cfg.Observer = events })
	ctx := t.Context()

	newSession := make(chan struct{}, 10)
	unregister := c.OnNewSession(func() { newSession <- struct{}{} })
	defer unregister()

	if _, err := c.Create(ctx, "/eph", nil, Ephemeral); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, "/watched", []byte("1"), Persistent); err != nil {
		t.Fatal(err)
	}
	_, _, watch, err := c.GetW(ctx, "/watched")
	if err != nil {
		t.Fatal(err)
	}
	// An observer on a direct connection sees the ephemeral znode vanish
	// when the server expires the client's session.
	raw := zktest.RawConn(t, srv.Addr)
	ok, _, gone, err := raw.ExistsW("/fluss/eph")
	if err != nil || !ok {
		t.Fatalf("observer: %v %v", ok, err)
	}
	oldSession := c.SessionID()

	cut.Cut()
	select {
	case ev := <-gone:
		if ev.Type != gozk.EventNodeDeleted {
			t.Fatalf("observer event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("session never expired")
	}
	cut.Restore()

	select {
	case <-newSession:
	case <-ctx.Done():
		t.Fatal("OnNewSession not called")
	}
	select {
	case ev := <-watch:
		if ev.Type != gozk.EventNotWatching || !errors.Is(ev.Err, gozk.ErrSessionExpired) {
			t.Errorf("watch event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("watch not told about the expiry")
	}
	if c.SessionID() == oldSession || !c.Connected() {
		t.Errorf("session %x → %x, connected %v", oldSession, c.SessionID(), c.Connected())
	}
	// The new session works, and watches can be armed again.
	if data, _, _, err := c.GetW(ctx, "/watched"); err != nil || string(data) != "1" {
		t.Fatalf("after expiry: %q %v", data, err)
	}
	// The observer saw the session's life in order: up, lost, expired, up.
	got := events.get()
	want := []SessionEvent{SessionConnected, SessionDisconnected, SessionExpired, SessionReconnected}
	j := 0
	for _, e := range got {
		if j < len(want) && e == want[j] {
			j++
		}
	}
	if j != len(want) || got[0] != SessionConnected {
		t.Errorf("session events %v, want the subsequence %v", got, want)
	}
}

// eventLog is a SessionObserver that keeps the events.
type eventLog struct {
	mu     sync.Mutex
	events []SessionEvent
}

func (l *eventLog) SessionEvent(e SessionEvent) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
}

func (l *eventLog) get() []SessionEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]SessionEvent(nil), l.events...)
}
