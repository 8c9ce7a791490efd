package zk

import (
	"testing"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// TestPersistentRecursiveWatch sets the watch on a path that does not exist
// yet; another client's creation, change and deletion of a znode below it
// reach the OnEvent listener in order, with full paths.
func TestPersistentRecursiveWatch(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	events := make(chan Event, 16)
	unregister := c.OnEvent(func(ev Event) {
		if ev.Type != EventSession {
			events <- ev
		}
	})
	defer unregister()
	if err := c.AddPersistentRecursiveWatch(ctx, "/w"); err != nil {
		t.Fatal(err)
	}
	raw := zktest.RawConn(t, zkAddr)
	acl := gozk.WorldACL(gozk.PermAll)
	full := c.FullPath("/w")
	for _, p := range []string{c.Root(), full} {
		if _, err := raw.Create(p, nil, 0, acl); err != nil && err != gozk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	if _, err := raw.Create(full+"/a", []byte("1"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Set(full+"/a", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	if err := raw.Delete(full+"/a", -1); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		typ  gozk.EventType
		path string
	}{
		{EventNodeCreated, full}, // the watched path itself
		{EventNodeCreated, full + "/a"},
		{EventNodeDataChanged, full + "/a"},
		{EventNodeDeleted, full + "/a"},
	}
	for _, w := range want {
		select {
		case ev := <-events:
			if ev.Type != w.typ || ev.Path != w.path {
				t.Fatalf("event %v %s, want %v %s", ev.Type, ev.Path, w.typ, w.path)
			}
		case <-ctx.Done():
			t.Fatalf("no event %v %s", w.typ, w.path)
		}
	}
}

// TestOnEventBeforeReply: a notification for a change that another client
// made before this client's sync is delivered to the listener before the
// sync returns, which is the ordering the snapshot cache relies on.
func TestOnEventBeforeReply(t *testing.T) {
	ctx := t.Context()
	c := newClient(t)
	seen := make(chan string, 16)
	defer c.OnEvent(func(ev Event) {
		if ev.Type == EventNodeDataChanged {
			seen <- ev.Path
		}
	})()
	if _, err := c.Create(ctx, "/w/x", []byte("1"), Persistent); err != nil {
		t.Fatal(err)
	}
	if err := c.AddPersistentRecursiveWatch(ctx, "/w"); err != nil {
		t.Fatal(err)
	}
	raw := zktest.RawConn(t, zkAddr)
	for i := range 20 {
		if _, err := raw.Set(c.FullPath("/w/x"), []byte{byte(i)}, -1); err != nil {
			t.Fatal(err)
		}
		if err := c.Sync(ctx, "/w"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-seen:
		default:
			t.Fatalf("change %d: sync returned before the notification was delivered", i)
		}
	}
}
