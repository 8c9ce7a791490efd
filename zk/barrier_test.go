package zk

import (
	"net"
	"testing"
)

// TestBarrierAsksTheServerOnce: on a lone server ("Mode: standalone") the
// barrier is a sync, and the answer is kept for the connection.
func TestBarrierAsksTheServerOnce(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	if _, role := c.connection(); role != roleUnknown {
		t.Fatalf("role %v before any barrier", role)
	}
	if err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	n, role := c.connection()
	if role != roleFollower {
		t.Fatalf("a standalone server gave role %v, want a sync (%v)", role, roleFollower)
	}
	if err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	if n2, role2 := c.connection(); n2 != n || role2 != role {
		t.Fatalf("connection %d role %v after a second barrier, want %d %v", n2, role2, n, role)
	}
}

// TestBarrierWritesWhenTheRoleIsUnknown: a server that does not answer
// srvr (here: a closed loopback port) is treated as a leader, whose
// barrier is the write that changes nothing; Sync and SyncGet work through
// it and the root's version does not move.
func TestBarrierWritesWhenTheRoleIsUnknown(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	if _, err := c.askMode(ctx, closedPort(t)); err == nil {
		t.Fatal("srvr on a closed port answered")
	}
	if _, err := c.Create(ctx, "/a", []byte("x"), Persistent); err != nil {
		t.Fatal(err)
	}
	_, before, err := c.Get(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.role = roleLeader
	c.mu.Unlock()
	if err := c.Sync(ctx, "/"); err != nil {
		t.Fatalf("write barrier: %v", err)
	}
	data, _, err := c.SyncGet(ctx, "/a")
	if err != nil || string(data) != "x" {
		t.Fatalf("SyncGet behind a write barrier: %q, %v", data, err)
	}
	_, after, err := c.Get(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	if after.Version != before.Version || after.Mzxid != before.Mzxid {
		t.Fatalf("the barrier changed the root: %+v then %+v", before, after)
	}
	if after.NumChildren != before.NumChildren {
		t.Fatalf("the barrier changed the root's children: %+v then %+v", before, after)
	}
}

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
