package tables

import (
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var sharedZK string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { sharedZK = addr })
}

func TestDecodeTableID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		id      int64
		ok, err bool
	}{
		{`{"version":1,"table_id":1234,"comment":"first-table","partition_key":["a","b"],"bucket_key":["b","c"],"bucket_count":16,"properties":{},"custom_properties":{"custom-3":"\"300\""},"remote_data_dir":"file://local/remote","created_time":1735538268,"modified_time":1735538270}`, 1234, true, false},
		{``, 0, false, false},
		{`{"version":1}`, 0, false, true},
		{`{"table_id":"7"}`, 0, false, true},
		{`{"table_id":1.5}`, 0, false, true},
		{`nope`, 0, false, true},
	}
	for _, c := range cases {
		id, ok, err := DecodeTableID([]byte(c.in))
		if id != c.id || ok != c.ok || (err != nil) != c.err {
			t.Errorf("%q: %d %v %v", c.in, id, ok, err)
		}
	}
}

func FuzzDecodeTableID(f *testing.F) {
	f.Add([]byte(`{"version":1,"table_id":1234}`))
	f.Add([]byte(``))
	f.Add([]byte(`{"table_id":-9223372036854775808}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, ok, err := DecodeTableID(b)
		if err != nil && ok {
			t.Fatal("ok with an error")
		}
		if !ok && id != 0 {
			t.Fatal("id without ok")
		}
	})
}

func TestMapFollowsZooKeeper(t *testing.T) {
	zktest.SkipIfShort(t)
	zc, err := zk.Connect(t.Context(), zk.Config{Address: sharedZK, Root: zktest.UniqueRoot(), ConnectionTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	create := func(path, data string) {
		t.Helper()
		if _, err := zc.Create(t.Context(), path, []byte(data), zk.Persistent); err != nil {
			t.Fatal(err)
		}
	}
	create("/metadata/databases/db1/tables/t1", `{"version":1,"table_id":1}`)
	// Being created: the table znode is still empty.
	create("/metadata/databases/db1/tables/t2/schemas/1", `{}`)
	create("/metadata/databases/db2", `{"version":1}`)

	m, err := New(Config{ZK: zc, RetryDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	if p, ok := m.Lookup(1); !ok || p.String() != "db1.t1" {
		t.Fatalf("table 1: %v %v", p, ok)
	}
	if m.Len() != 1 {
		t.Fatalf("the empty table znode must be skipped, have %d tables", m.Len())
	}

	// The empty znode gets its registration.
	if _, err := zc.Set(t.Context(), "/metadata/databases/db1/tables/t2", []byte(`{"version":1,"table_id":2}`), -1); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "table 2", func() bool { p, ok := m.Lookup(2); return ok && p.String() == "db1.t2" })

	// A new table in a database that had none, and a new database.
	create("/metadata/databases/db2/tables/t3", `{"version":1,"table_id":3}`)
	eventually.True(t, "table 3", func() bool { p, ok := m.Lookup(3); return ok && p.String() == "db2.t3" })
	create("/metadata/databases/db3/tables/t4", `{"version":1,"table_id":4}`)
	eventually.True(t, "table 4", func() bool { p, ok := m.Lookup(4); return ok && p.String() == "db3.t4" })

	// A dropped table disappears.
	if err := zc.Delete(t.Context(), "/metadata/databases/db1/tables/t1", -1); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "table 1 dropped", func() bool { _, ok := m.Lookup(1); return !ok })
	if _, ok := m.Lookup(2); !ok {
		t.Fatal("table 2 must stay")
	}
}
