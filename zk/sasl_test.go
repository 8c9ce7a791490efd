package zk

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk/digestmd5"
)

// testUsers are the SASL users of the test servers.
func testUsers() map[string]string {
	return map[string]string{"bob": "bobsecret", "alice": "alicesecret"}
}

// startSASLServer starts a private SASL server treating anonymous clients
// as req says.
func startSASLServer(t *testing.T, req zktest.SASLRequirement) *zktest.Server {
	t.Helper()
	zktest.SkipIfShort(t)
	cfg, err := zktest.SASLServerConfig(t.TempDir(), testUsers(), req)
	if err != nil {
		t.Fatal(err)
	}
	s, err := zktest.StartConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// withSASL makes the client log in as user with DIGEST-MD5.
func withSASL(user, password string) func(*Config) {
	return func(c *Config) {
		c.SASL = &SASL{Mechanism: "DIGEST-MD5", User: user,
			New: func() SASLExchange { return digestmd5.New(user, password) }}
	}
}

// slowTimeout sets a connection timeout far beyond the test's bounded
// context, so a Connect that returns an *AuthError did not wait for it.
func slowTimeout(c *Config) { c.ConnectionTimeout = 10 * time.Minute }

// connectRefused connects expecting a definitive refusal, and returns it.
func connectRefused(t *testing.T, addr string, mod ...func(*Config)) *AuthError {
	t.Helper()
	zktest.SkipIfShort(t)
	cfg := Config{Address: addr, Root: zktest.UniqueRoot(), Logger: testLogger(t)}
	for _, f := range append(mod, slowTimeout) {
		f(&cfg)
	}
	c, err := Connect(t.Context(), cfg)
	if err == nil {
		c.Close()
		t.Fatal("Connect succeeded, want a refusal")
	}
	var ae *AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("Connect: %v; want an *AuthError before the connection timeout", err)
	}
	t.Logf("Connect: %v", err)
	return ae
}

// registerLikeWork creates, reads, updates and deletes a znode through c.
func registerLikeWork(t *testing.T, c *Client) {
	t.Helper()
	ctx := t.Context()
	if _, err := c.Create(ctx, "/producers/job-1", []byte("v1"), Persistent); err != nil {
		t.Fatal(err)
	}
	data, st, err := c.Get(ctx, "/producers/job-1")
	if err != nil || string(data) != "v1" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	if _, err := c.Set(ctx, "/producers/job-1", []byte("v2"), st.Version); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get(ctx, "/producers/job-1"); err != nil || string(data) != "v2" {
		t.Fatalf("Get after Set = %q, %v", data, err)
	}
	if err := c.Delete(ctx, "/producers/job-1", -1); err != nil {
		t.Fatal(err)
	}
}

// serverLog returns the whole log of s.
func serverLog(s *zktest.Server) string { return s.LogTail(16 << 20) }

// refusedRequest is what ZooKeeper logs when it refuses a request sent
// before authentication (AuthenticationHelper.enforceAuthentication).
const refusedRequest = "does not match with any of the expected authentication scheme"

// TestSASLEnforced runs against a server that requires SASL
// (enforce.auth.enabled, enforce.auth.schemes=sasl): authenticated work
// succeeds; bad credentials make Connect fail at once with one clear error,
// without any other request reaching the server; the session's identity
// is the SASL user, as a sasl:bob ACL shows.
func TestSASLEnforced(t *testing.T) {
	srv := startSASLServer(t, zktest.SASLEnforced)

	t.Run("register-like work", func(t *testing.T) {
		c := connect(t, srv.Addr, zktest.UniqueRoot(), withSASL("bob", "bobsecret"))
		registerLikeWork(t, c)
	})

	// The unknown user's password must not be that of the last user who
	// logged in: ZooKeeper before 3.8.5/3.9.3 then lets it in
	// (ZOOKEEPER-4839, a server bug; Debian 12 ships 3.8.0).
	refusals := []struct{ name, user, password string }{
		{"wrong password", "bob", "not-bobs-secret"},
		{"unknown user", "mallory", "mallorys-guess"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			ae := connectRefused(t, srv.Addr, withSASL(tt.user, tt.password))
			msg := ae.Error()
			if want := "ZooKeeper SASL authentication as user " + tt.user + " failed"; !strings.Contains(msg, want) {
				t.Errorf("error %q lacks %q", msg, want)
			}
			if strings.Contains(msg, tt.password) {
				t.Errorf("error %q shows the password", msg)
			}
			if ae.Server != srv.Addr {
				t.Errorf("AuthError.Server = %q, want %q", ae.Server, srv.Addr)
			}
		})
	}

	t.Run("sasl ACL", func(t *testing.T) {
		ctx := t.Context()
		bob := connect(t, srv.Addr, zktest.UniqueRoot(), withSASL("bob", "bobsecret"))
		alice := connect(t, srv.Addr, bob.Root(), withSASL("alice", "alicesecret"))
		if _, err := bob.Create(ctx, "/open", nil, Persistent); err != nil {
			t.Fatal(err)
		}
		acl := []gozk.ACL{{Perms: gozk.PermAll, Scheme: "sasl", ID: "bob"}}
		if _, err := bob.conn.Create(bob.FullPath("/bobs"), []byte("mine"), 0, acl); err != nil {
			t.Fatal(err)
		}
		if data, _, err := bob.Get(ctx, "/bobs"); err != nil || string(data) != "mine" {
			t.Fatalf("bob reads his znode: %q, %v", data, err)
		}
		if _, _, err := alice.Get(ctx, "/bobs"); !errors.Is(err, gozk.ErrNoAuth) {
			t.Fatalf("alice reads bob's znode: %v, want ErrNoAuth", err)
		}
	})

	log := serverLog(srv)
	if n := strings.Count(log, "failed to SASL authenticate"); n < len(refusals) {
		t.Errorf("server log shows %d failed SASL logins, want at least %d", n, len(refusals))
	}
	if strings.Contains(log, refusedRequest) {
		t.Errorf("the server refused a request sent before authentication:\n%s", log)
	}
}

// TestSASLSessionRequired runs against a server configured with the older
// switch, sessionRequireClientSASLAuth=true.
func TestSASLSessionRequired(t *testing.T) {
	srv := startSASLServer(t, zktest.SASLSessionRequired)
	c := connect(t, srv.Addr, zktest.UniqueRoot(), withSASL("bob", "bobsecret"))
	registerLikeWork(t, c)
	connectRefused(t, srv.Addr, withSASL("bob", "wrong"))
	if log := serverLog(srv); strings.Contains(log, refusedRequest) {
		t.Errorf("the server refused a request sent before authentication:\n%s", log)
	}
}

// TestSASLOptionalServer: a SASL client works against a server that offers
// SASL without requiring it, and its session carries the SASL identity (an
// anonymous client cannot read its sasl:bob znode), while a bad password is
// still refused.
func TestSASLOptionalServer(t *testing.T) {
	srv := startSASLServer(t, zktest.SASLOptional)
	ctx := t.Context()
	c := connect(t, srv.Addr, zktest.UniqueRoot(), withSASL("bob", "bobsecret"))
	registerLikeWork(t, c)
	acl := []gozk.ACL{{Perms: gozk.PermAll, Scheme: "sasl", ID: "bob"}}
	if _, err := c.Create(ctx, "/open", nil, Persistent); err != nil {
		t.Fatal(err)
	}
	if _, err := c.conn.Create(c.FullPath("/bobs"), []byte("mine"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, "/bobs"); err != nil {
		t.Fatal(err)
	}
	anon := zktest.RawConn(t, srv.Addr)
	if _, _, err := anon.Get(c.FullPath("/bobs")); !errors.Is(err, gozk.ErrNoAuth) {
		t.Fatalf("anonymous read of bob's znode: %v, want ErrNoAuth", err)
	}
	connectRefused(t, srv.Addr, withSASL("bob", "wrong"))
}

// TestSASLReauthenticatesAfterReconnect cuts the client's connection and
// lets it reconnect to its session: the new connection authenticates again
// (the server logs a second SASL login for the session) and work goes on on
// a server that refuses unauthenticated requests.
func TestSASLReauthenticatesAfterReconnect(t *testing.T) {
	srv := startSASLServer(t, zktest.SASLEnforced)
	ctx := t.Context()
	cut := zktest.NewCutter(t, srv.Addr)
	c := connect(t, cut.Addr(), zktest.UniqueRoot(), withSASL("bob", "bobsecret"))
	if _, err := c.Create(ctx, "/before", nil, Persistent); err != nil {
		t.Fatal(err)
	}
	logins := func() int {
		return strings.Count(serverLog(srv),
			fmt.Sprintf("Session 0x%x: adding SASL authorization for authorizationID: bob", c.SessionID()))
	}
	if n := logins(); n != 1 {
		t.Fatalf("%d SASL logins for the session before the cut, want 1", n)
	}
	session := c.SessionID()
	cut.Cut()
	eventually.True(t, "the client to notice the cut", func() bool { return !c.Connected() })
	cut.Restore()
	eventually.True(t, "the client to reconnect", c.Connected)
	if c.SessionID() != session {
		t.Fatalf("session changed from 0x%x to 0x%x; want a reconnect to the same session", session, c.SessionID())
	}
	if _, err := c.Create(ctx, "/after", nil, Persistent); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "a second SASL login in the server log", func() bool { return logins() >= 2 })
	if log := serverLog(srv); strings.Contains(log, refusedRequest) {
		t.Errorf("the server refused a request sent before authentication:\n%s", log)
	}
}

// TestSASLRefusedAfterStart changes bob's password on the server and
// restarts it: the connected client logs each refused reconnection as an
// error (without the password) and keeps retrying, and gets its session
// back once the password is restored.
func TestSASLRefusedAfterStart(t *testing.T) {
	srv := startSASLServer(t, zktest.SASLEnforced)
	ctx := t.Context()
	var logs syncbuf.Buffer
	c := connect(t, srv.Addr, zktest.UniqueRoot(), withSASL("bob", "bobsecret"), func(cfg *Config) {
		cfg.Logger = newBufferLogger(t, &logs)
	})
	jaas := filepath.Join(srv.Config().Dir, "jaas.conf")
	orig, err := os.ReadFile(jaas)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(orig), `user_bob="bobsecret"`, `user_bob="changed"`, 1)
	if err := os.WriteFile(jaas, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	refusedLogged := func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "[ERROR]") && strings.Contains(line, "ZooKeeper refused the connection; retrying") &&
				strings.Contains(line, "ZooKeeper SASL authentication as user bob failed") {
				return true
			}
		}
		return false
	}
	eventually.True(t, "the refusal to be logged", refusedLogged)
	if strings.Contains(logs.String(), "bobsecret") {
		t.Error("the client logged the password")
	}
	if err := os.WriteFile(jaas, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	eventually.True(t, "the client to reconnect", c.Connected)
	registerLikeWork(t, c)
}

// newBufferLogger logs to the test, as testLogger, and to buf.
func newBufferLogger(t *testing.T, buf *syncbuf.Buffer) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: io.MultiWriter(w, buf)})
}

// TestSASLAgainstServerWithoutSASL: a server with no SASL login configured
// answers the first SASL request with an empty token; like ZooKeeper's
// Java client, the client gives up at once, saying why.
func TestSASLAgainstServerWithoutSASL(t *testing.T) {
	ae := connectRefused(t, zkAddr, withSASL("bob", "bobsecret"))
	if !strings.Contains(ae.Error(), "does the server offer DIGEST-MD5?") {
		t.Fatalf("error %q does not say the server offers no DIGEST-MD5", ae)
	}
}

// TestSASLRetriesRefusedTCP: a refused TCP connection is not a refusal of
// the credentials: Connect keeps trying until a SASL server comes up on the
// port, then authenticates.
func TestSASLRetriesRefusedTCP(t *testing.T) {
	zktest.SkipIfShort(t)
	port := zktest.LoopbackPort(t)
	cfg, err := zktest.SASLServerConfig(t.TempDir(), testUsers(), zktest.SASLEnforced)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Port = port
	type result struct {
		c   *Client
		err error
	}
	done := make(chan result, 1)
	var logs syncbuf.Buffer
	logger := newBufferLogger(t, &logs)
	go func() {
		ccfg := Config{Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Root: zktest.UniqueRoot(), Logger: logger}
		withSASL("bob", "bobsecret")(&ccfg)
		slowTimeout(&ccfg)
		c, err := Connect(t.Context(), ccfg)
		done <- result{c, err}
	}()
	srv, err := zktest.StartConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	r := <-done
	if r.err != nil {
		t.Fatalf("Connect: %v", r.err)
	}
	t.Cleanup(r.c.Close)
	if !strings.Contains(logs.String(), "connection refused") {
		t.Error("the client never met a refused connection; the test proves nothing")
	}
	registerLikeWork(t, r.c)
}
