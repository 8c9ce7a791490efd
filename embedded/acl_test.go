package embedded_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// TestACLFileDenials runs requests of two SASL users against
// testdata/acls.json: allowed, denied (48) and unknown-table (21) answers
// come from the same handlers as with ZooKeeper-stored ACLs.
func TestACLFileDenials(t *testing.T) {
	acls, err := embedded.LoadACLFile(filepath.Join("testdata", "acls.json"), authz.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, embedded.Config{
		Security:   embedded.Users(map[string]string{"alice": "a-pw", "bob": "b-pw", "root": "r-pw"}),
		Authorizer: acls, Tables: acls,
	})
	ctx := t.Context()
	login := func(user, pw string) *wire.Client {
		c := dial(t, s.Addr())
		err := c.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{
			Protocol: proto.String("PLAIN"), Token: []byte("\x00" + user + "\x00" + pw)}, &messages.AuthenticateResponse{})
		if err != nil {
			t.Fatalf("login %s: %v", user, err)
		}
		return c
	}
	alice, bob := login("alice", "a-pw"), login("bob", "b-pw")
	cases := []struct {
		name   string
		c      *wire.Client
		id     string
		table  int64
		result int32
		code   flusserr.Code
	}{
		{"alice writes db1.orders", alice, "a1", 100, 0, 0},
		{"alice may not write db1.audit", alice, "a2", 200, 0, flusserr.AuthorizationException},
		{"alice writes db2 (ALL on the database)", alice, "a3", 300, 0, 0},
		{"unknown table id", alice, "a4", 999, 0, flusserr.UnknownTableOrBucket},
		{"bob only reads", bob, "b1", 100, 0, flusserr.AuthorizationException},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := register(ctx, tc.c, tc.id, tc.table)
			if tc.code == 0 && (err != nil || r != tc.result) {
				t.Fatalf("register: %d %v, want result %d", r, err, tc.result)
			}
			if tc.code != 0 && code(err) != tc.code {
				t.Fatalf("register: %d %v, want code %d", r, err, tc.code)
			}
		})
	}
	// A denial names the principal, operation and resource as Fluss does.
	_, err = register(ctx, bob, "b2", 200)
	if fe, ok := flusserr.From(err); !ok || !strings.Contains(fe.Message, "Principal FlussPrincipal{name='bob', type='User'} have no authorization to operate WRITE on resource Resource{type=TABLE, name='db1.audit'}") {
		t.Fatalf("denial message: %v", err)
	}
	// bob reads db1: GET shows alice's snapshot of db1.orders.
	g, err := get(ctx, bob, "a1")
	if err != nil || len(g.GetTableOffsets()) != 1 {
		t.Fatalf("bob reads a1: %v %v", g, err)
	}
}

// TestACLFileSuperUserAndInternalListener: LoadACLFile takes super users
// and the internal listener from the security settings; with no ACLs,
// everyone else is denied.
func TestACLFileSuperUserAndInternalListener(t *testing.T) {
	p := filepath.Join(t.TempDir(), "acls.json")
	if err := os.WriteFile(p, []byte(`{"tables":{"1":"db.t"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	acls, err := embedded.LoadACLFile(p, authz.Settings{InternalListener: "INTERNAL", SuperUsers: []authz.Principal{authz.User("root")}})
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, embedded.Config{
		Listeners:  []config.Listener{{Name: "CLIENT", Host: "127.0.0.1"}, {Name: "INTERNAL", Host: "127.0.0.1"}},
		Security:   embedded.Users(map[string]string{"root": "r", "eve": "e"}, "CLIENT"),
		Authorizer: acls, Tables: acls,
	})
	ctx := t.Context()
	login := func(user string) *wire.Client {
		c := dial(t, s.Listeners()[0].Address())
		err := c.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{
			Protocol: proto.String("PLAIN"), Token: []byte("\x00" + user + "\x00" + user[:1])}, &messages.AuthenticateResponse{})
		if err != nil {
			t.Fatalf("login %s: %v", user, err)
		}
		return c
	}
	if _, err := register(ctx, login("eve"), "e", 1); code(err) != flusserr.AuthorizationException {
		t.Fatalf("eve without ACLs: %v, want 48", err)
	}
	if r, err := register(ctx, login("root"), "r", 1); err != nil || r != 0 {
		t.Fatalf("super user root: %d %v", r, err)
	}
	internal := dial(t, s.Listeners()[1].Address())
	if r, err := register(ctx, internal, "i", 1); err != nil || r != 0 {
		t.Fatalf("internal listener: %d %v", r, err)
	}
}

// TestParseACLsRefusesMistakes: every kind of typo is an error naming it.
func TestParseACLsRefusesMistakes(t *testing.T) {
	cases := []struct{ json, want string }{
		{`{"tables":{"x":"db.t"}}`, `table id "x"`},
		{`{"tables":{"1":"nodot"}}`, `not database.table`},
		{`{"acls":[{"resource":"TOPIC:x","principal":"User:a","operation":"READ"}]}`, `unknown resource type`},
		{`{"acls":[{"resource":"TABLE:nodot","principal":"User:a","operation":"READ"}]}`, `database.table`},
		{`{"acls":[{"resource":"DATABASE","principal":"User:a","operation":"READ"}]}`, `needs a name`},
		{`{"acls":[{"resource":"CLUSTER","principal":"alice","operation":"READ"}]}`, `not type:name`},
		{`{"acls":[{"resource":"CLUSTER","principal":"User:a","operation":"read"}]}`, `unknown operation`},
		{`{"acls":[{"resource":"CLUSTER","principal":"User:a","operation":"READ","permission":"DENY"}]}`, `only ALLOW`},
		{`{"acl":[]}`, `unknown field`},
		{`{} {}`, `after the JSON`},
		{`[`, `ACL file`},
	}
	for _, tc := range cases {
		_, err := embedded.ParseACLs([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error with %q", tc.json, err, tc.want)
		}
	}
	big := make([]byte, embedded.MaxACLFileBytes+1)
	for i := range big {
		big[i] = ' '
	}
	big[0] = '{'
	dir := t.TempDir()
	p := filepath.Join(dir, "big.json")
	os.WriteFile(p, big, 0o644)
	if _, err := embedded.LoadACLFile(p, authz.Settings{}); err == nil {
		t.Error("an oversized file was accepted")
	}
}

// FuzzParseACLs: any input is parsed or refused without panicking, and an
// accepted file answers lookups.
func FuzzParseACLs(f *testing.F) {
	data, _ := os.ReadFile(filepath.Join("testdata", "acls.json"))
	f.Add(data)
	f.Add([]byte(`{"tables":{"-1":"a.b"},"acls":[{"resource":"TABLE:*","principal":"*:*","operation":"ALL","host":"*"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := embedded.ParseACLs(b)
		if err != nil {
			return
		}
		a.Lookup(100)
	})
}
