package authz

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

func TestParsePlainToken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in      string
		want    PlainToken
		wantErr string
	}{
		{"\x00alice\x00secret", PlainToken{"", "alice", "secret"}, ""},
		{"alice\x00alice\x00secret", PlainToken{"alice", "alice", "secret"}, ""},
		{"bob\x00alice\x00secret", PlainToken{}, "authorization id"},
		{"\x00alice\x00", PlainToken{}, "password is empty"},
		{"\x00\x00secret", PlainToken{}, "user name is empty"},
		{"alice\x00secret", PlainToken{}, "NUL"},
		{"\x00alice\x00sec\x00ret", PlainToken{}, "NUL"},
		{"", PlainToken{}, "NUL"},
		{"\x00al\xffice\x00secret", PlainToken{}, "UTF-8"},
	}
	for _, c := range cases {
		got, err := ParsePlainToken([]byte(c.in))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: err %v, want %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: got %+v %v", c.in, got, err)
		}
		if b := string(got.Bytes()); b != c.in {
			t.Errorf("%+v.Bytes() = %q, want %q", got, b, c.in)
		}
	}
}

func TestCredentialsVerify(t *testing.T) {
	t.Parallel()
	c := NewCredentials(map[string]string{"root": "password"})
	cases := []struct {
		user, pw string
		want     bool
	}{
		{"root", "password", true},
		{"root", "passwore", false}, // same length, last byte differs
		{"root", "Password", false}, // same length, first byte differs
		{"root", "password2", false},
		{"root", "", false},
		{"nobody", "password", false},
	}
	for _, k := range cases {
		if got := c.Verify(k.user, k.pw); got != k.want {
			t.Errorf("Verify(%q,%q) = %v", k.user, k.pw, got)
		}
	}
	var none *Credentials
	if none.Verify("root", "password") {
		t.Fatal("nil credentials must refuse")
	}
}

func TestParseJAAS(t *testing.T) {
	t.Parallel()
	in := `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_admin="admin-pass" user_alice="alice-pass"  user_q="a \"quoted\" \\ pass;word";`
	entries, err := ParseJAAS(in)
	if err != nil {
		t.Fatal(err)
	}
	users, err := PlainUsers(entries)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"admin": "admin-pass", "alice": "alice-pass", "q": `a "quoted" \ pass;word`}
	if !reflect.DeepEqual(users, want) {
		t.Fatalf("users %q", users)
	}
	bad := []string{
		"",
		"org.x.Module",
		"org.x.Module required",
		"org.x.Module maybe;",
		`org.x.Module required user_a="unterminated;`,
		`org.x.Module required user_a=;`,
		`org.x.Module required user_a "x";`,
		`org.x.Module required user_a="x" user_a="y";`,
		`org.x.Module required user_a="x\`,
	}
	for _, b := range bad {
		if _, err := ParseJAAS(b); err == nil {
			t.Errorf("ParseJAAS(%q) accepted", b)
		}
	}
	other, _ := ParseJAAS(`org.x.Other required user_a="b";`)
	if _, err := PlainUsers(other); err == nil {
		t.Fatal("a JAAS config without PlainLoginModule must be refused")
	}
}

func TestDecodeResourceACL(t *testing.T) {
	t.Parallel()
	got, err := DecodeResourceACL([]byte(`{"version":1,"acls":[{"principal_type":"USER","principal_name":"Mike","permission_type":"ALLOW","host":"*","operation":"ALL"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []ACL{{Principal{"Mike", "USER"}, PermAllow, "*", OpAll}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
	if enc := EncodeResourceACL(want); string(enc) != `{"version":1,"acls":[{"principal_type":"USER","principal_name":"Mike","permission_type":"ALLOW","host":"*","operation":"ALL"}]}` {
		t.Fatalf("encode %s", enc)
	}
	for _, ok := range []string{``, `{"version":1}`, `{"version":7,"acls":"x"}`} {
		if acls, err := DecodeResourceACL([]byte(ok)); err != nil || len(acls) != 0 {
			t.Errorf("%q: %v %v", ok, acls, err)
		}
	}
	for _, bad := range []string{
		`{`,
		`{"acls":[{"principal_type":"User","principal_name":"a","permission_type":"allow","host":"*","operation":"ALL"}]}`,
		`{"acls":[{"principal_type":"User","principal_name":"a","permission_type":"ALLOW","host":"*","operation":"all"}]}`,
		`{"acls":[{"principal_type":"User","principal_name":"a","permission_type":"ALLOW","operation":"ALL"}]}`,
		`{"acls":[{"principal_type":"User","principal_name":"a","permission_type":"DENY","host":"*","operation":"ALL"}]}`,
		`{"acls":[7]}`,
	} {
		if _, err := DecodeResourceACL([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSettingsFromConfig(t *testing.T) {
	t.Parallel()
	c, err := config.Parse([]byte(`
bind.listeners: INTERNAL://127.0.0.1:0, CLIENT://127.0.0.1:0, OTHER://127.0.0.1:0
internal.listener.name: INTERNAL
security.protocol.map: CLIENT:sasl, INTERNAL:PLAINTEXT, OTHER:Sasl
security.sasl.enabled.mechanisms: plain
security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_admin="admin-pass" user_alice="alice-pass";
security.sasl.listener.name.other.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_x="y";
security.sasl.plain.credentials: bob:pw2,alice:new
authorizer.enabled: true
super.users: User:admin; User:bob
security.acl.principal.ignore-case: true
sidecar.authentication.timeout: 5 s
sidecar.authorization.require-table-for-empty: true
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := SettingsFromConfig(c, []string{"INTERNAL", "CLIENT", "OTHER"})
	if err != nil {
		t.Fatal(err)
	}
	if s.InternalListener != "INTERNAL" || !s.AuthorizerEnabled || !s.IgnoreCase || !s.RequireTableForEmpty || s.AuthTimeout.Seconds() != 5 {
		t.Fatalf("settings %+v", s)
	}
	if !reflect.DeepEqual(s.SuperUsers, []Principal{User("admin"), User("bob")}) {
		t.Fatalf("super users %+v", s.SuperUsers)
	}
	if s.Listeners["INTERNAL"].Protocol != ProtocolPlaintext || s.Listeners["CLIENT"].Protocol != ProtocolSASL {
		t.Fatalf("protocols %+v", s.Listeners)
	}
	client := s.Listeners["CLIENT"].Users
	for _, k := range []struct {
		u, p string
		ok   bool
	}{{"admin", "admin-pass", true}, {"alice", "new", true}, {"alice", "alice-pass", false}, {"bob", "pw2", true}, {"x", "y", false}} {
		if client.Verify(k.u, k.p) != k.ok {
			t.Errorf("CLIENT %s/%s: want %v", k.u, k.p, k.ok)
		}
	}
	if other := s.Listeners["OTHER"].Users; !other.Verify("x", "y") || other.Verify("admin", "admin-pass") || !other.Verify("bob", "pw2") {
		t.Error("OTHER must use its own JAAS key plus the dynamic credentials")
	}

	for _, bad := range []string{
		"security.protocol.map: CLIENT:ssl",
		"security.protocol.map: NOPE:sasl",
		"super.users: admin",
		"security.sasl.plain.credentials: bad-name:pw",
		"security.protocol.map: CLIENT:sasl\nsecurity.sasl.plain.jaas.config: nonsense",
		"authorizer.enabled: true\nauthorizer.type: custom",
	} {
		c, _ := config.Parse([]byte(bad))
		if _, err := SettingsFromConfig(c, []string{"CLIENT"}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
