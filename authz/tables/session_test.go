package tables

import (
	"fmt"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// TestMapAcrossOutages changes tables while the map's client is cut off from
// ZooKeeper, either until its session expires or only briefly (a plain
// reconnect within the session), and checks that the map then agrees with
// ZooKeeper and still follows later changes. One table is dropped and
// created again under the same name with a new id while the client is away:
// its name is in the listing before and after, only its id tells.
func TestMapAcrossOutages(t *testing.T) {
	cases := []struct {
		name           string
		sessionTimeout time.Duration
		expire         bool
	}{
		{name: "session expires", sessionTimeout: 2 * time.Second, expire: true},
		{name: "plain reconnect", sessionTimeout: 30 * time.Second, expire: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := zktest.UniqueRoot()
			cut := zktest.NewCutter(t, sharedZK)
			zc, err := zk.Connect(t.Context(), zk.Config{Address: cut.Addr(), Root: root, SessionTimeout: tc.sessionTimeout, ConnectionTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(zc.Close)
			direct, err := zk.Connect(t.Context(), zk.Config{Address: sharedZK, Root: root, ConnectionTimeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(direct.Close)

			tablePath := func(db, table string) string { return DatabasesPath + "/" + db + "/tables/" + table }
			create := func(db, table string, id int64) {
				t.Helper()
				reg := fmt.Sprintf(`{"version":1,"table_id":%d}`, id)
				if _, err := direct.Create(t.Context(), tablePath(db, table), []byte(reg), zk.Persistent); err != nil {
					t.Fatal(err)
				}
			}
			drop := func(db, table string) {
				t.Helper()
				if err := direct.Delete(t.Context(), tablePath(db, table), -1); err != nil {
					t.Fatal(err)
				}
			}
			create("db1", "kept", 1)
			create("db1", "dropped", 2)
			create("db1", "recreated", 3)

			m, err := New(Config{ZK: zc, RetryDelay: 50 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Start(t.Context()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m.Close)
			t.Cleanup(func() {
				if t.Failed() {
					m.mu.Lock()
					t.Logf("map at the end: ids %v, armed watches %v", m.byID, m.armed)
					m.mu.Unlock()
				}
			})
			if m.Len() != 3 {
				t.Fatalf("%d tables before the outage, want 3", m.Len())
			}

			// Cut the client off; with expire, wait until a direct observer
			// sees the client's ephemeral znode go with its session.
			if _, err := zc.Create(t.Context(), "/alive", nil, zk.Ephemeral); err != nil {
				t.Fatal(err)
			}
			ok, _, gone, err := direct.ExistsW(t.Context(), "/alive")
			if err != nil || !ok {
				t.Fatalf("observer: %v %v", ok, err)
			}
			oldSession := zc.SessionID()
			cut.Cut()
			if tc.expire {
				select {
				case ev := <-gone:
					if ev.Type != gozk.EventNodeDeleted {
						t.Fatalf("observer event %+v", ev)
					}
				case <-t.Context().Done():
					t.Fatal("session never expired")
				}
			} else {
				eventually.True(t, "the client to notice the cut", func() bool { return !zc.Connected() })
			}

			create("db1", "created", 4)
			create("db2", "new-db", 5)
			drop("db1", "dropped")
			drop("db1", "recreated")
			create("db1", "recreated", 33)
			if _, ok := m.Lookup(4); ok {
				t.Fatal("the cut-off map saw a new table")
			}
			cut.Restore()

			want := map[int64]string{1: "db1.kept", 4: "db1.created", 5: "db2.new-db", 33: "db1.recreated"}
			droppedIDs := []int64{2, 3}
			eventually.True(t, "the map to match ZooKeeper", func() bool {
				for id, p := range want {
					if got, ok := m.Lookup(id); !ok || got.String() != p {
						return false
					}
				}
				for _, id := range droppedIDs {
					if _, ok := m.Lookup(id); ok {
						return false
					}
				}
				return m.Len() == len(want)
			})
			if got := zc.SessionID(); (got != oldSession) != tc.expire {
				t.Fatalf("session %x → %x; the case wants expire=%v", oldSession, got, tc.expire)
			}

			// The watches work again: later changes are followed.
			create("db2", "after", 6)
			drop("db1", "kept")
			eventually.True(t, "changes after the outage", func() bool {
				p, ok := m.Lookup(6)
				_, kept := m.Lookup(1)
				return ok && p.String() == "db2.after" && !kept
			})

			// Exactly one forwarded watch per znode the map follows: the
			// database list, each database's tables, each table. Stale
			// watches of the old session and rescans must not stack more.
			const d = DatabasesPath
			wantArmed := []string{"children:" + d, "children:" + d + "/db1/tables", "children:" + d + "/db2/tables",
				"data:" + d + "/db1/tables/created", "data:" + d + "/db1/tables/recreated",
				"data:" + d + "/db2/tables/new-db", "data:" + d + "/db2/tables/after"}
			eventually.True(t, "one watch per followed znode", func() bool {
				m.mu.Lock()
				defer m.mu.Unlock()
				if len(m.armed) != len(wantArmed) {
					return false
				}
				for _, k := range wantArmed {
					if !m.armed[k] {
						return false
					}
				}
				return true
			})
		})
	}
}
