package authz

import (
	"net"
	"testing"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	guest := User("guest")
	tbl := Table("db1", "t1")
	allow := func(p Principal, host string, op Operation) ACL {
		return ACL{Principal: p, Permission: PermAllow, Host: host, Operation: op}
	}
	cases := []struct {
		name string
		acls map[Resource][]ACL
		req  Request
		want bool
	}{
		{"no ACL at all denies", nil, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"exact table WRITE", map[Resource][]ACL{tbl: {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, true},
		{"WRITE does not imply READ", map[Resource][]ACL{tbl: {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpRead, tbl}, false},
		{"READ does not imply WRITE", map[Resource][]ACL{tbl: {allow(guest, "*", OpRead)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"ALL grants WRITE", map[Resource][]ACL{tbl: {allow(guest, "*", OpAll)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, true},
		{"READ implies DESCRIBE", map[Resource][]ACL{tbl: {allow(guest, "*", OpRead)}}, Request{guest, "127.0.0.1", OpDescribe, tbl}, true},
		{"DESCRIBE does not imply READ", map[Resource][]ACL{tbl: {allow(guest, "*", OpDescribe)}}, Request{guest, "127.0.0.1", OpRead, tbl}, false},
		{"ANY operation grants nothing", map[Resource][]ACL{tbl: {allow(guest, "*", OpAny)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"database ACL applies to its tables", map[Resource][]ACL{Database("db1"): {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, true},
		{"other database does not", map[Resource][]ACL{Database("db2"): {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"cluster ACL applies to tables", map[Resource][]ACL{Cluster(): {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, true},
		{"table wildcard applies", map[Resource][]ACL{{ResourceTable, "*"}: {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, true},
		{"database wildcard does not apply to a table", map[Resource][]ACL{{ResourceDatabase, "*"}: {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"principal wildcard */*", map[Resource][]ACL{tbl: {allow(Principal{"*", "*"}, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, true},
		{"name wildcard with a type is not a wildcard", map[Resource][]ACL{tbl: {allow(Principal{"*", "User"}, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"other principal", map[Resource][]ACL{tbl: {allow(User("bob"), "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"principal type is compared", map[Resource][]ACL{tbl: {allow(Principal{"guest", "USER"}, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"exact host", map[Resource][]ACL{tbl: {allow(guest, "127.0.0.1", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, true},
		{"other host", map[Resource][]ACL{tbl: {allow(guest, "10.0.0.1", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"permission ANY does not allow", map[Resource][]ACL{tbl: {{guest, PermAny, "*", OpWrite}}}, Request{guest, "127.0.0.1", OpWrite, tbl}, false},
		{"cluster resource itself", map[Resource][]ACL{Cluster(): {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, Cluster()}, true},
		{"table ACL does not grant the cluster", map[Resource][]ACL{tbl: {allow(guest, "*", OpWrite)}}, Request{guest, "127.0.0.1", OpWrite, Cluster()}, false},
		{"database resource gets cluster ACLs", map[Resource][]ACL{Cluster(): {allow(guest, "*", OpRead)}}, Request{guest, "127.0.0.1", OpRead, Database("db1")}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Decide(func(r Resource) []ACL { return c.acls[r] }, c.req, false)
			if got != c.want {
				t.Fatalf("Decide = %v, want %v", got, c.want)
			}
		})
	}
}

func TestDecideIgnoreCase(t *testing.T) {
	t.Parallel()
	acls := map[Resource][]ACL{Table("d", "t"): {{User("Guest"), PermAllow, "*", OpWrite}}}
	req := Request{User("guest"), "1.2.3.4", OpWrite, Table("d", "t")}
	src := func(r Resource) []ACL { return acls[r] }
	if Decide(src, req, false) {
		t.Fatal("case-sensitive match must deny")
	}
	if !Decide(src, req, true) {
		t.Fatal("ignore-case match must allow")
	}
}

func TestDenialMessage(t *testing.T) {
	t.Parallel()
	err := DenialError(User("guest"), OpWrite, Table("test_db_1", "test_pk_table_1"))
	want := "Principal FlussPrincipal{name='guest', type='User'} have no authorization to operate WRITE on resource Resource{type=TABLE, name='test_db_1.test_pk_table_1'} "
	if err.Message != want || err.Code != 48 {
		t.Fatalf("got %d %q", err.Code, err.Message)
	}
}

func TestHostAddress(t *testing.T) {
	t.Parallel()
	cases := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, "127.0.0.1"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, "0:0:0:0:0:0:0:1"},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1, Zone: "eth0"}, "fe80:0:0:0:0:0:0:1%eth0"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:10.1.2.3"), Port: 1}, "10.1.2.3"},
		{nil, ""},
	}
	for _, c := range cases {
		if got := HostAddress(c.addr); got != c.want {
			t.Errorf("HostAddress(%v) = %q, want %q", c.addr, got, c.want)
		}
	}
}
