package authz_test

import (
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// aliveNode is an ephemeral znode the client under test owns: a direct
// observer sees it deleted when the server expires that client's session.
const aliveNode = "/alive"

// outage is a client under test, connected to the shared server through a
// zktest.Cutter, plus a direct client on the same root that keeps working
// while the first one is cut off.
type outage struct {
	cut    *zktest.Cutter
	zc     *zk.Client // through the cutter
	direct *zk.Client
}

// newOutage connects both clients under a fresh root. sessionTimeout is the
// cut-off client's; the server grants sessions down to about 1 s.
func newOutage(t *testing.T, sessionTimeout time.Duration) *outage {
	t.Helper()
	root := zktest.UniqueRoot()
	o := &outage{cut: zktest.NewCutter(t, sharedZK)}
	var err error
	o.zc, err = zk.Connect(t.Context(), zk.Config{Address: o.cut.Addr(), Root: root, SessionTimeout: sessionTimeout, ConnectionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.zc.Close)
	o.direct, err = zk.Connect(t.Context(), zk.Config{Address: sharedZK, Root: root, ConnectionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(o.direct.Close)
	if _, err := o.zc.Create(t.Context(), aliveNode, nil, zk.Ephemeral); err != nil {
		t.Fatal(err)
	}
	return o
}

// cutOff disconnects the client under test. With expire, it returns once the
// server has expired the client's session (the direct observer saw the
// ephemeral znode deleted); otherwise once the client knows it has lost its
// connection.
func (o *outage) cutOff(t *testing.T, expire bool) {
	t.Helper()
	ctx := t.Context()
	ok, _, gone, err := o.direct.ExistsW(ctx, aliveNode)
	if err != nil || !ok {
		t.Fatalf("observer: %v %v", ok, err)
	}
	o.cut.Cut()
	if !expire {
		eventually.True(t, "the client to notice the cut", func() bool { return !o.zc.Connected() })
		return
	}
	select {
	case ev := <-gone:
		if ev.Type != gozk.EventNodeDeleted {
			t.Fatalf("observer event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("session never expired")
	}
}

// setACLs writes r's ACLs the way Fluss does (create or versioned set; no
// ACL means delete) through c, then adds a change notification unless
// notify is false. It returns the notification's path ("" without one).
func setACLs(t *testing.T, c *zk.Client, r authz.Resource, acls []authz.ACL, notify bool) string {
	t.Helper()
	ctx := t.Context()
	path := authz.ACLPath(r)
	ok, st, err := c.Exists(ctx, path)
	switch {
	case err != nil:
		t.Fatal(err)
	case len(acls) == 0:
		if ok {
			err = c.Delete(ctx, path, st.Version)
		}
	case ok:
		_, err = c.Set(ctx, path, authz.EncodeResourceACL(acls), st.Version)
	default:
		_, err = c.Create(ctx, path, authz.EncodeResourceACL(acls), zk.Persistent)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !notify {
		return ""
	}
	n, err := c.Create(ctx, authz.ACLChangesPath+"/"+authz.ACLChangePrefix, []byte(r.Type.String()+":"+r.Name), zk.PersistentSequential)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func allow(user string, op authz.Operation) authz.ACL {
	return authz.ACL{Principal: authz.User(user), Permission: authz.PermAllow, Host: "*", Operation: op}
}

// TestAuthorizerAcrossOutages changes ACLs while the authorizer's client is
// cut off from ZooKeeper, either long enough for its session to expire or
// only briefly (a plain reconnect within the session), and checks that the
// authorizer ends up with the new ACLs and still watches for more.
//
// In the expiry case the notification of the revocation is also purged
// while the client is away, as Fluss's coordinator purges notifications
// older than acl.notification.expiration-time: only the full reload after
// the new session can see that change.
func TestAuthorizerAcrossOutages(t *testing.T) {
	cases := []struct {
		name           string
		sessionTimeout time.Duration
		expire         bool
		purge          bool // delete the revocation's notification during the outage
	}{
		{name: "session expires", sessionTimeout: 2 * time.Second, expire: true, purge: true},
		{name: "plain reconnect", sessionTimeout: 30 * time.Second, expire: false, purge: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := newOutage(t, tc.sessionTimeout)
			db, tbl := authz.Database("db"), authz.Table("db", "t")
			setACLs(t, o.direct, db, []authz.ACL{allow("alice", authz.OpRead)}, true)

			a, err := authz.NewAuthorizer(authz.AuthorizerConfig{ZK: o.zc, RetryDelay: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(a.Close)
			alice, bob := session("CLIENT", "alice"), session("CLIENT", "bob")
			if err := a.Authorize(alice, authz.OpRead, tbl); err != nil {
				t.Fatalf("before the outage: %v", err)
			}
			if a.Authorize(alice, authz.OpWrite, tbl) == nil {
				t.Fatal("WRITE granted before the outage")
			}
			oldSession := o.zc.SessionID()

			o.cutOff(t, tc.expire)
			// While the client is away: grant alice WRITE on the table and
			// take the database READ away.
			setACLs(t, o.direct, tbl, []authz.ACL{allow("alice", authz.OpWrite)}, true)
			note := setACLs(t, o.direct, db, nil, true)
			if tc.purge {
				if err := o.direct.Delete(t.Context(), note, -1); err != nil {
					t.Fatal(err)
				}
			}
			// Nothing reached the cut-off authorizer.
			if a.Authorize(alice, authz.OpWrite, tbl) == nil {
				t.Fatal("the cut-off authorizer saw the grant")
			}
			o.cut.Restore()

			eventually.True(t, "the grant made during the outage", func() bool { return a.Authorize(alice, authz.OpWrite, tbl) == nil })
			eventually.True(t, "the revocation made during the outage", func() bool { return a.Authorize(alice, authz.OpRead, tbl) != nil })
			// Decisions nobody granted stay denied.
			for _, denied := range []struct {
				user string
				op   authz.Operation
			}{{"alice", authz.OpDrop}, {"bob", authz.OpWrite}, {"bob", authz.OpRead}} {
				err := a.Authorize(session("CLIENT", denied.user), denied.op, tbl)
				if fe, ok := flusserr.From(err); !ok || fe.Code != flusserr.AuthorizationException {
					t.Errorf("%s %s on %s after the outage: %v, want AUTHORIZATION_EXCEPTION", denied.user, denied.op, tbl, err)
				}
			}
			if got := o.zc.SessionID(); (got != oldSession) != tc.expire {
				t.Fatalf("session %x → %x; the case wants expire=%v", oldSession, got, tc.expire)
			}

			// The watch on the notifications works again: a later change
			// is picked up.
			setACLs(t, o.direct, tbl, []authz.ACL{allow("alice", authz.OpWrite), allow("bob", authz.OpRead)}, true)
			eventually.True(t, "a change after the outage", func() bool { return a.Authorize(bob, authz.OpRead, tbl) == nil })
			if a.Authorize(bob, authz.OpWrite, tbl) == nil {
				t.Error("bob WRITE allowed after the outage")
			}
		})
	}
}
