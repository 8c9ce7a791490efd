package digestmd5

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseChallenge covers well-formed challenges and what is taken from
// them.
func TestParseChallenge(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want challenge
	}{
		{"rfc example", rfcChallenge,
			challenge{realms: []string{"elwood.innosoft.com"}, nonce: "OA6MG9tEQGm2hh", qops: []string{"auth"}, utf8: true, hasAuth: true}},
		{"zookeeper 3.8", `realm="zk-sasl-md5",nonce="Xq2Q+r0b",charset=utf-8,algorithm=md5-sess`,
			challenge{realms: []string{"zk-sasl-md5"}, nonce: "Xq2Q+r0b", qops: []string{"auth"}, utf8: true, hasAuth: true}},
		{"no realm, several qops, maxbuf", `nonce="n",qop="auth-conf,auth-int, auth",maxbuf=1024,algorithm=md5-sess`,
			challenge{nonce: "n", qops: []string{"auth-conf", "auth-int", "auth"}, maxbuf: 1024, hasAuth: true}},
		{"two realms, white space, blank elements", " realm = \"a\" ,, realm=\"b\",\r\n nonce=\"n\" , algorithm=MD5-SESS,",
			challenge{realms: []string{"a", "b"}, nonce: "n", qops: []string{"auth"}, hasAuth: true}},
		{"escapes and unknown directives", `nonce="a\"b\\c",cipher="rc4",x-ext=1,algorithm=md5-sess,stale=false`,
			challenge{nonce: `a"b\c`, qops: []string{"auth"}, hasAuth: true}},
		{"only integrity offered", `nonce="n",qop="auth-int",algorithm=md5-sess`,
			challenge{nonce: "n", qops: []string{"auth-int"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseChallenge([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Fatalf("got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// TestParseChallengeMalformed lists challenges that must be refused, with a
// word the error must contain.
func TestParseChallengeMalformed(t *testing.T) {
	tests := []struct {
		name, in, errHas string
	}{
		{"empty", "", "empty challenge"},
		{"too long", `nonce="` + strings.Repeat("a", 2048) + `",algorithm=md5-sess`, "2048"},
		{"no nonce", `realm="r",algorithm=md5-sess`, "no nonce"},
		{"empty nonce", `nonce="",algorithm=md5-sess`, "empty nonce"},
		{"no algorithm", `nonce="n"`, "no algorithm"},
		{"md5 algorithm", `nonce="n",algorithm=md5`, "unsupported algorithm"},
		{"two nonces", `nonce="a",nonce="b",algorithm=md5-sess`, "more than once"},
		{"two qops", `nonce="a",qop="auth",qop="auth",algorithm=md5-sess`, "more than once"},
		{"two charsets", `nonce="a",charset=utf-8,charset=utf-8,algorithm=md5-sess`, "more than once"},
		{"latin-1 charset", `nonce="a",charset=iso-8859-1,algorithm=md5-sess`, "charset"},
		{"stale", `nonce="a",stale=true,algorithm=md5-sess`, "stale"},
		{"maxbuf text", `nonce="a",maxbuf=big,algorithm=md5-sess`, "maxbuf"},
		{"maxbuf small", `nonce="a",maxbuf=15,algorithm=md5-sess`, "maxbuf"},
		{"maxbuf huge", `nonce="a",maxbuf=16777216,algorithm=md5-sess`, "maxbuf"},
		{"unterminated quote", `nonce="a`, "unterminated"},
		{"unterminated escape", `nonce="a\`, "unterminated"},
		{"no equals", `nonce`, "no '='"},
		{"no value", `nonce=,algorithm=md5-sess`, "no value"},
		{"junk after value", `nonce="a"x,algorithm=md5-sess`, "unexpected"},
		{"separator as name", `=a`, "unexpected"},
		{"binary", "nonce=\x00", "no value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseChallenge([]byte(tt.in))
			if err == nil {
				t.Fatalf("parsed %+v, want an error", got)
			}
			if !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("error %q does not contain %q", err, tt.errHas)
			}
		})
	}
}

// TestNoAuthQop checks that a server offering only security layers is
// refused with a message that says so.
func TestNoAuthQop(t *testing.T) {
	c := New("bob", "pw")
	c.Next(nil)
	_, _, err := c.Next([]byte(`nonce="n",qop="auth-int,auth-conf",algorithm=md5-sess`))
	if err == nil || !strings.Contains(err.Error(), `not "auth"`) {
		t.Fatalf("err = %v, want a refusal naming qop auth", err)
	}
}

// FuzzParseChallenge feeds arbitrary bytes to the challenge parser: it must
// not panic, and the directives of anything it accepts must survive being
// written back (values quoted) and parsed again.
func FuzzParseChallenge(f *testing.F) {
	f.Add([]byte(rfcChallenge))
	f.Add([]byte(`realm="zk-sasl-md5",nonce="Xq2Q",charset=utf-8,algorithm=md5-sess`))
	f.Add([]byte(`nonce="a\"b\\c",qop="auth-int, auth",,maxbuf=1024,algorithm=md5-sess`))
	f.Add([]byte(` , realm = "" , nonce=x`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = parseChallenge(b)
		ds, err := parseDirectives(string(b))
		if err != nil {
			return
		}
		var parts []string
		for _, d := range ds {
			parts = append(parts, d.name+"="+quote(d.value))
		}
		again, err := parseDirectives(strings.Join(parts, ","))
		if err != nil {
			t.Fatalf("re-encoded %q does not parse: %v", parts, err)
		}
		if len(again) != len(ds) {
			t.Fatalf("re-encoded %d directives, parsed %d", len(ds), len(again))
		}
		for i := range ds {
			if again[i] != ds[i] {
				t.Fatalf("directive %d: %+v became %+v", i, ds[i], again[i])
			}
		}
	})
}
