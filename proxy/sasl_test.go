package proxy_test

import (
	"context"
	"crypto/subtle"
	"net"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// credKey holds the PLAIN credentials a test security layer accepted.
type credKey struct{}

// testSecurity stands in for the sidecar's security layer: a SASL PLAIN
// AUTHENTICATE handler over a user table, and a gate that admits only
// API_VERSIONS and AUTHENTICATE before it succeeds.
func testSecurity(users map[string]string) (wire.API, wire.GateFunc, func(*wire.Session) (string, string, bool)) {
	auth := wire.API{
		Key: messages.KeyAuthenticate, Name: "AUTHENTICATE",
		NewRequest: func() proto.Message { return &messages.AuthenticateRequest{} },
		Handle: func(_ context.Context, s *wire.Session, r *wire.Request) (proto.Message, error) {
			tok, err := authz.ParsePlainToken(r.Msg.(*messages.AuthenticateRequest).GetToken())
			if err != nil {
				return nil, flusserr.New(flusserr.AuthenticateException, err.Error())
			}
			user, pass := tok.User, tok.Password
			if want, ok := users[user]; !ok || subtle.ConstantTimeCompare([]byte(want), []byte(pass)) != 1 {
				return nil, flusserr.New(flusserr.AuthenticateException, "bad credentials")
			}
			s.Attrs.Store(credKey{}, [2]string{user, pass})
			s.SetIdentity(user, true)
			return &messages.AuthenticateResponse{Challenge: []byte{}}, nil
		},
	}
	gate := func(_ context.Context, s *wire.Session, h wire.RequestHeader) error {
		if h.APIKey == messages.KeyAPIVersions || h.APIKey == messages.KeyAuthenticate || s.Authenticated() {
			return nil
		}
		return flusserr.New(flusserr.AuthenticateException, "The connection has not completed authentication yet.")
	}
	creds := func(s *wire.Session) (string, string, bool) {
		v, ok := s.Attrs.Load(credKey{})
		if !ok {
			return "", "", false
		}
		c := v.([2]string)
		return c[0], c[1], true
	}
	return auth, gate, creds
}

func TestSASLEndToEnd(t *testing.T) {
	fake := startFake(t, fakecoord.Config{Users: map[string]string{"alice": "alice-pw", "carol": "carol-pw"}})
	auth, gate, creds := testSecurity(map[string]string{"alice": "alice-pw", "carol": "carol-pw", "mallory": "m-pw"})
	ln := listener(t)
	local := newRealLocal(t, config.Listener{Name: "SASL", Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port})
	apis := []wire.API{auth}
	for _, a := range local.mux.Versions() {
		if a.Key != messages.KeyAuthenticate {
			apis = append(apis, a)
		}
	}
	serveProxy(t, ln, proxy.Config{
		Upstream: proxy.StaticUpstream(fake.Addr()), Local: wire.NewMux(apis...), UpstreamCredentials: creds,
	}, wire.ServerConfig{Gate: gate, ListenerName: "SASL"})

	login := func(c *rawConn, user, pass string) wire.Response {
		c.SendMsg(messages.KeyAuthenticate, 0, 1, &messages.AuthenticateRequest{
			Protocol: proto.String("PLAIN"), Token: []byte("\x00" + user + "\x00" + pass)})
		return c.Read()
	}

	t.Run("forwarded requests carry the client's identity", func(t *testing.T) {
		for _, user := range []string{"alice", "carol"} {
			c := dialRaw(t, ln.Addr().String())
			c.Handshake()
			c.Send(messages.KeyListDatabases, 0, 2, nil)
			wantCode(t, c.Read(), flusserr.AuthenticateException, "not completed authentication")
			if r := login(c, user, user+"-pw"); r.Type != wire.ResponseSuccess {
				t.Fatalf("login: %v", r.Err())
			}
			before := len(fake.Requests())
			c.Send(messages.KeyListDatabases, 0, 3, []byte(user))
			c.SendMsg(messages.KeyRegisterProducerOffsets, 0, 4, registerReq("job-"+user))
			got := readN(t, c, 2)
			if r := got[3]; r.Type != wire.ResponseSuccess || string(r.Body) != user {
				t.Fatalf("forwarded: %v %v", r.Type, r.Err())
			}
			var reg messages.RegisterProducerOffsetsResponse
			decode(t, got[4], &reg)
			if reg.GetResult() != 0 {
				t.Fatalf("register was not served locally: %v", &reg)
			}
			// The upstream connection opened only now, after the login:
			// its API_VERSIONS comes after before.
			seen := append([]fakecoord.Request(nil), fake.Requests()[before:]...)
			if len(seen) != 3 || seen[0].APIKey != messages.KeyAPIVersions || seen[1].APIKey != messages.KeyAuthenticate || seen[2].APIKey != messages.KeyListDatabases {
				t.Fatalf("upstream saw %+v, want API_VERSIONS, AUTHENTICATE then LIST_DATABASES on a new connection", seen)
			}
			seen = seen[1:]
			if seen[1].Principal != user {
				t.Fatalf("upstream principal %q, want %q", seen[1].Principal, user)
			}
		}
	})

	t.Run("user unknown upstream", func(t *testing.T) {
		c := dialRaw(t, ln.Addr().String())
		c.Handshake()
		if r := login(c, "mallory", "m-pw"); r.Type != wire.ResponseSuccess {
			t.Fatalf("local login: %v", r.Err())
		}
		c.Send(messages.KeyListDatabases, 0, 5, nil)
		wantCode(t, c.Read(), flusserr.AuthenticateException, "Invalid username or password")
		c.ExpectClosed("the proxy closes it")
	})
}
