package digestmd5

import (
	"strings"
	"testing"
)

// rfcClient is a client set up as in RFC 2831 section 4's IMAP example.
func rfcClient() *Client {
	c := New("chris", "secret")
	c.digestURI = "imap/elwood.innosoft.com"
	c.newCnonce = func() (string, error) { return "OA6MHXh6VqTrRk", nil }
	return c
}

const rfcChallenge = `realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8`

// TestRFC2831Example runs the whole IMAP example of RFC 2831 section 4: the
// client's response carries the RFC's response value and the client accepts
// the RFC's rspauth.
func TestRFC2831Example(t *testing.T) {
	c := rfcClient()
	first, done, err := c.Next(nil)
	if err != nil || done || len(first) != 0 || first == nil {
		t.Fatalf("first token = %q, %v, %v; want empty, not done", first, done, err)
	}
	resp, done, err := c.Next([]byte(rfcChallenge))
	if err != nil || done {
		t.Fatalf("response: %v, done %v", err, done)
	}
	want := `charset=utf-8,username="chris",realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",` +
		`nc=00000001,cnonce="OA6MHXh6VqTrRk",digest-uri="imap/elwood.innosoft.com",` +
		`response=d388dad90d4bbd760a152321f2143af7,qop=auth`
	if string(resp) != want {
		t.Fatalf("response\n got %s\nwant %s", resp, want)
	}
	last, done, err := c.Next([]byte("rspauth=ea40f60335c427b5527b84dbabcdfffd"))
	if err != nil || !done || last != nil {
		t.Fatalf("final: %q, done %v, %v; want nil, done", last, done, err)
	}
	if _, _, err := c.Next(nil); err == nil {
		t.Fatal("Next after completion succeeded")
	}
}

// TestRFC2831ACAPExample checks the values of RFC 2831 section 4's second
// (ACAP) example.
func TestRFC2831ACAPExample(t *testing.T) {
	const (
		nonce  = "OA9BSXrbuRhWay"
		cnonce = "OA9BSuZWMSpW8m"
		uri    = "acap/elwood.innosoft.com"
	)
	ha1 := sessionKey([]byte("chris"), []byte("elwood.innosoft.com"), []byte("secret"), nonce, cnonce)
	if got, want := responseValue(ha1, nonce, cnonce, "AUTHENTICATE:"+uri), "6084c6db3fede7352c551284490fd0fc"; got != want {
		t.Errorf("response = %s, want %s", got, want)
	}
	if got, want := responseValue(ha1, nonce, cnonce, ":"+uri), "2f0b3d7c3c2e486600ef710726aa2eae"; got != want {
		t.Errorf("rspauth = %s, want %s", got, want)
	}
}

// TestZooKeeperNames checks the digest-uri ZooKeeper's server expects.
func TestZooKeeperNames(t *testing.T) {
	c := New("bob", "pw")
	c.Next(nil)
	resp, _, err := c.Next([]byte(`realm="zk-sasl-md5",nonce="abc",charset=utf-8,algorithm=md5-sess`))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{`digest-uri="zookeeper/zk-sasl-md5"`, `realm="zk-sasl-md5"`, `username="bob"`, "qop=auth"} {
		if !strings.Contains(string(resp), part) {
			t.Errorf("response %s lacks %s", resp, part)
		}
	}
	if strings.Contains(string(resp), "pw") {
		t.Errorf("response %s contains the password", resp)
	}
}

// TestFinalMessage covers the server's last message: a wrong or missing
// rspauth is an error, case of the hex digits is not.
func TestFinalMessage(t *testing.T) {
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"match", "rspauth=ea40f60335c427b5527b84dbabcdfffd", true},
		{"upper case hex", "rspauth=EA40F60335C427B5527B84DBABCDFFFD", true},
		{"quoted", `rspauth="ea40f60335c427b5527b84dbabcdfffd"`, true},
		{"wrong", "rspauth=ea40f60335c427b5527b84dbabcdfff0", false},
		{"missing", "", false},
		{"other directive", "foo=bar", false},
		{"twice", "rspauth=ea40f60335c427b5527b84dbabcdfffd,rspauth=ea40f60335c427b5527b84dbabcdfffd", false},
		{"garbage", "rspauth", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rfcClient()
			c.Next(nil)
			if _, _, err := c.Next([]byte(rfcChallenge)); err != nil {
				t.Fatal(err)
			}
			_, done, err := c.Next([]byte(tt.token))
			if tt.ok != (err == nil) || tt.ok != done {
				t.Fatalf("done %v, err %v; want ok=%v", done, err, tt.ok)
			}
		})
	}
}

// TestEncoding covers how names and passwords are hashed: ISO 8859-1 when
// they fit, UTF-8 only when the server offered it.
func TestEncoding(t *testing.T) {
	tests := []struct {
		name, user string
		utf8       bool
		want       string // bytes hashed, "" for an error
	}{
		{"ascii", "bob", false, "bob"},
		{"latin-1 stays latin-1 under utf-8", "jörg", true, "j\xf6rg"},
		{"latin-1 without charset", "jörg", false, "j\xf6rg"},
		{"beyond latin-1 with utf-8", "józef€", true, "józef€"},
		{"beyond latin-1 without utf-8", "€", false, ""},
		{"invalid utf-8", "\xff", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeField("username", tt.user, tt.utf8)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("encoded %q, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
