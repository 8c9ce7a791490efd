package authz_test

import (
	"net"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var sharedZK string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { sharedZK = addr })
}

func session(listener, user string) *wire.Session {
	s := &wire.Session{ListenerName: listener, RemoteAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5}}
	s.SetIdentity(user, true)
	return s
}

func TestAuthorizerFollowsACLChanges(t *testing.T) {
	zktest.SkipIfShort(t)
	zc, err := zk.Connect(t.Context(), zk.Config{Address: sharedZK, Root: zktest.UniqueRoot(), ConnectionTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	db := authz.Database("db")
	tbl := authz.Table("db", "t")
	write := func(r authz.Resource, data []byte, notify bool) {
		t.Helper()
		if ok, st, _ := zc.Exists(t.Context(), authz.ACLPath(r)); ok {
			if _, err := zc.Set(t.Context(), authz.ACLPath(r), data, st.Version); err != nil {
				t.Fatal(err)
			}
		} else if _, err := zc.Create(t.Context(), authz.ACLPath(r), data, zk.Persistent); err != nil {
			t.Fatal(err)
		}
		if notify {
			if _, err := zc.Create(t.Context(), authz.ACLChangesPath+"/"+authz.ACLChangePrefix, []byte(r.Type.String()+":"+r.Name), zk.PersistentSequential); err != nil {
				t.Fatal(err)
			}
		}
	}
	readDB := authz.ACL{Principal: authz.User("alice"), Permission: authz.PermAllow, Host: "*", Operation: authz.OpRead}
	write(db, authz.EncodeResourceACL([]authz.ACL{readDB}), false) // present before start: loaded by the scan

	a, err := authz.NewAuthorizer(authz.AuthorizerConfig{ZK: zc, InternalListener: "INTERNAL", SuperUsers: []authz.Principal{authz.User("root")}, RetryDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)

	alice := session("CLIENT", "alice")
	if err := a.Authorize(alice, authz.OpRead, tbl); err != nil {
		t.Fatalf("database READ must cover the table: %v", err)
	}
	if err := a.Authorize(alice, authz.OpWrite, tbl); err == nil {
		t.Fatal("READ must not grant WRITE")
	}
	if a.Authorize(session("CLIENT", "root"), authz.OpWrite, tbl) != nil || a.Authorize(session("INTERNAL", "ANONYMOUS"), authz.OpWrite, tbl) != nil {
		t.Fatal("super users and the internal listener are always allowed")
	}

	// A change with a notification is picked up.
	writeT := authz.ACL{Principal: authz.User("alice"), Permission: authz.PermAllow, Host: "127.0.0.1", Operation: authz.OpWrite}
	write(tbl, authz.EncodeResourceACL([]authz.ACL{writeT}), true)
	eventually.True(t, "table WRITE", func() bool { return a.Authorize(alice, authz.OpWrite, tbl) == nil })

	// An ACL znode that does not decode grants nothing.
	write(tbl, []byte(`{"acls":[{"principal_type":"User"}]}`), true)
	eventually.True(t, "undecodable ACLs dropped", func() bool { return len(a.ACLs(tbl)) == 0 })
	if err := a.Authorize(alice, authz.OpWrite, tbl); err == nil {
		t.Fatal("undecodable ACLs must deny")
	}

	// Removing the database ACLs takes READ away.
	if err := zc.Delete(t.Context(), authz.ACLPath(db), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := zc.Create(t.Context(), authz.ACLChangesPath+"/"+authz.ACLChangePrefix, []byte("DATABASE:db"), zk.PersistentSequential); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "database ACL removed", func() bool { return a.Authorize(alice, authz.OpRead, tbl) != nil })
}
