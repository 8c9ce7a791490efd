package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/rawconn"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// Every case runs on one connection, in order, so the test also proves that
// the connection stays usable after each kind of ERROR answer.
func TestServerAnswers(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, newControl())
	c := dialClient(t, addr)
	ctx := t.Context()

	fail := func(mode string) []byte { return mustMarshal(t, echoReq(mode)) }
	tests := []struct {
		name     string
		key      messages.Key
		ver      int16
		body     []byte
		wantType ResponseType
		wantCode flusserr.Code
		wantMsg  []string // substrings of error_message
		noMsg    bool     // error_message must be absent
		check    func(t *testing.T, body []byte)
	}{
		{name: "echo", key: keyEcho, body: fail("hello"), wantType: ResponseSuccess,
			check: func(t *testing.T, body []byte) {
				var m messages.ApiVersionsRequest
				if err := proto.Unmarshal(body, &m); err != nil || m.GetClientSoftwareName() != "hello" {
					t.Fatalf("echo body %v, err %v", &m, err)
				}
			}},
		{name: "unknown key", key: 4242, body: nil, wantType: ResponseError, wantCode: 2,
			wantMsg: []string{"api key 4242", "version 0"}},
		{name: "version below range", key: keyVersions, ver: 0, body: fail("x"), wantType: ResponseError, wantCode: 2,
			wantMsg: []string{"VERSIONED(9004) version 0", "[1,2]"}},
		{name: "version above range", key: keyVersions, ver: 3, body: fail("x"), wantType: ResponseError, wantCode: 2,
			wantMsg: []string{"version 3", "[1,2]"}},
		{name: "negative version", key: keyEcho, ver: -1, body: fail("x"), wantType: ResponseError, wantCode: 2,
			wantMsg: []string{"ECHO(9001) version -1", "[0,0]"}},
		{name: "version in range", key: keyVersions, ver: 2, body: fail("x"), wantType: ResponseSuccess},
		{name: "garbage body", key: keyEcho, body: []byte{0xff, 0xff, 0xff}, wantType: ResponseError, wantCode: 3,
			wantMsg: []string{"ApiVersionsRequest", "ECHO(9001)"}},
		{name: "truncated field", key: keyEcho, body: []byte{0x0a, 0x05, 'f'}, wantType: ResponseError, wantCode: 3,
			wantMsg: []string{"ApiVersionsRequest"}},
		{name: "missing required field", key: keyEcho,
			body:     marshalPartial(t, &messages.ApiVersionsRequest{ClientSoftwareName: proto.String("only-name")}),
			wantType: ResponseError, wantCode: 3, wantMsg: []string{"ApiVersionsRequest", "required"}},
		{name: "empty body missing required", key: keyEcho, body: nil, wantType: ResponseError, wantCode: 3,
			wantMsg: []string{"required"}},
		{name: "flusserr passes through", key: keyFail, body: fail("code63"), wantType: ResponseError, wantCode: 63,
			wantMsg: []string{"Invalid producer ID 'a b': bad char"}},
		{name: "wrapped flusserr", key: keyFail, body: fail("wrapped21"), wantType: ResponseError, wantCode: 21,
			wantMsg: []string{"no table 5"}},
		{name: "flusserr without message", key: keyFail, body: fail("default7"), wantType: ResponseError, wantCode: 7,
			noMsg: true},
		{name: "flusserr code 0 is not an answer", key: keyFail, body: fail("code0"), wantType: ResponseError, wantCode: -1,
			wantMsg: []string{"not an error"}},
		{name: "plain error", key: keyFail, body: fail("plain"), wantType: ResponseError, wantCode: -1,
			wantMsg: []string{"boom"}},
		{name: "long error is cut", key: keyFail, body: fail("long"), wantType: ResponseError, wantCode: -1,
			check: func(t *testing.T, body []byte) {
				if msg := decodeErrorResponse(t, body).GetErrorMessage(); len(msg) > maxMessageLen || len(msg) < maxMessageLen-4 ||
					!strings.HasSuffix(msg, "... (6000 bytes in all)") {
					t.Fatalf("message length %d", len(msg))
				}
			}},
		{name: "panic", key: keyFail, body: fail("panic"), wantType: ResponseError, wantCode: -1,
			wantMsg: []string{"handler exploded"}},
		{name: "nil response", key: keyFail, body: fail("nil"), wantType: ResponseError, wantCode: -1,
			wantMsg: []string{"neither a response nor an error"}},
		{name: "typed nil response", key: keyFail, body: fail("typednil"), wantType: ResponseError, wantCode: -1,
			wantMsg: []string{"neither a response nor an error"}},
		{name: "response missing required field", key: keyFail, body: fail("missingrequired"), wantType: ResponseError, wantCode: -1,
			wantMsg: []string{"PbApiVersion", "required"}},
		{name: "still alive", key: messages.KeyAPIVersions, body: mustMarshal(t, echoReq("fluss")), wantType: ResponseSuccess,
			check: func(t *testing.T, body []byte) {
				var m messages.ApiVersionsResponse
				if err := proto.Unmarshal(body, &m); err != nil || len(m.ApiVersions) != 6 || m.ServerType != nil {
					t.Fatalf("ApiVersionsResponse %v, err %v", &m, err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := c.CallRaw(ctx, tt.key, tt.ver, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if r.Type != tt.wantType {
				t.Fatalf("type %v, want %v (body % x)", r.Type, tt.wantType, r.Body)
			}
			if r.Type == ResponseError {
				m := decodeErrorResponse(t, r.Body)
				if flusserr.Code(m.GetErrorCode()) != tt.wantCode {
					t.Fatalf("code %d, want %d (%q)", m.GetErrorCode(), tt.wantCode, m.GetErrorMessage())
				}
				if tt.noMsg && m.ErrorMessage != nil {
					t.Fatalf("error_message %q, want absent", m.GetErrorMessage())
				}
				for _, want := range tt.wantMsg {
					if !strings.Contains(m.GetErrorMessage(), want) {
						t.Fatalf("message %q does not contain %q", m.GetErrorMessage(), want)
					}
				}
			}
			if tt.check != nil {
				tt.check(t, r.Body)
			}
		})
	}
}

func TestClientCallErrors(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, newControl())
	c := dialClient(t, addr)
	ctx := t.Context()

	var resp messages.ApiVersionsRequest
	err := c.Call(ctx, keyFail, 0, echoReq("code63"), &resp)
	if fe, ok := flusserr.From(err); !ok || fe.Code != 63 {
		t.Fatalf("Call err = %v, want code 63", err)
	}
	err = c.Call(ctx, keyEcho, 0, &messages.ApiVersionsRequest{}, &resp)
	if err == nil || !strings.Contains(err.Error(), "encode") {
		t.Fatalf("Call with an incomplete request: %v", err)
	}
	if err := c.Call(ctx, keyEcho, 0, echoReq("ok"), &resp); err != nil || resp.GetClientSoftwareName() != "ok" {
		t.Fatalf("Call: %v %v", err, &resp)
	}
	hs, err := c.Handshake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs.ApiVersions) == 0 || hs.ApiVersions[0].GetApiKey() != 1000 {
		t.Fatalf("handshake %v", hs)
	}
}

// Responses leave in completion order: a slow request sent first is
// answered after a fast one sent second.
func TestOutOfOrderResponses(t *testing.T) {
	ctl := newControl()
	_, addr := startServer(t, ServerConfig{}, ctl)
	rc := dialRaw(t, addr)
	body := mustMarshal(t, echoReq("x"))
	var frames []byte
	frames = AppendRequest(frames, RequestHeader{APIKey: keySlow, RequestID: 0}, body)
	frames = AppendRequest(frames, RequestHeader{APIKey: keyEcho, RequestID: 1}, body)
	rc.Write(frames)

	<-ctl.slowStarted
	if r := rc.Read(); r.Type != ResponseSuccess || r.RequestID != 1 {
		t.Fatalf("first answer %v id %d, want SUCCESS id 1", r.Type, r.RequestID)
	}
	ctl.release <- struct{}{}
	if r := rc.Read(); r.Type != ResponseSuccess || r.RequestID != 0 {
		t.Fatalf("second answer %v id %d, want SUCCESS id 0", r.Type, r.RequestID)
	}
}

// With one in-flight slot the reader waits, so the second request starts
// only after the first has been answered.
func TestInFlightLimitBackpressure(t *testing.T) {
	ctl := newControl()
	_, addr := startServer(t, ServerConfig{MaxInFlightPerConn: 1}, ctl)
	rc := dialRaw(t, addr)
	body := mustMarshal(t, echoReq("x"))
	var frames []byte
	frames = AppendRequest(frames, RequestHeader{APIKey: keySlow, RequestID: 10}, body)
	frames = AppendRequest(frames, RequestHeader{APIKey: keyEcho, RequestID: 11}, body)
	rc.Write(frames)

	<-ctl.slowStarted
	ctl.release <- struct{}{}
	for _, want := range []int32{10, 11} {
		if r := rc.Read(); r.RequestID != want {
			t.Fatalf("answer id %d, want %d", r.RequestID, want)
		}
	}
}

func TestPipelinedCalls(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, newControl())
	c := dialClient(t, addr)
	ctx := t.Context()

	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("call-%d", i)
			var resp messages.ApiVersionsRequest
			if err := c.Call(ctx, keyEcho, 0, echoReq(name), &resp); err != nil {
				errs <- err
				return
			}
			if resp.GetClientSoftwareName() != name {
				errs <- fmt.Errorf("call %d got answer %q", i, resp.GetClientSoftwareName())
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Request ids start at 0, increase by one, and wrap from MaxInt32 to
// MinInt32; the server echoes negative ids unchanged.
func TestRequestIDs(t *testing.T) {
	var mu sync.Mutex
	var seen []int32
	gate := func(ctx context.Context, s *Session, h RequestHeader) error {
		mu.Lock()
		seen = append(seen, h.RequestID)
		mu.Unlock()
		return nil
	}
	_, addr := startServer(t, ServerConfig{Gate: gate}, newControl())
	c := dialClient(t, addr)
	ctx := t.Context()
	call := func() {
		t.Helper()
		if err := c.Call(ctx, keyEcho, 0, echoReq("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	call()
	call()
	c.nextID.Store(1<<31 - 1)
	call()
	call()
	want := []int32{0, 1, 1<<31 - 1, -1 << 31}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("request ids %v, want %v", seen, want)
	}
}

func TestBadFrameClosesConnection(t *testing.T) {
	tests := []struct {
		name     string
		maxFrame int32
		send     []byte
		wantCode flusserr.Code
		wantMsg  string
	}{
		{name: "oversized length", maxFrame: 64, send: lengthPrefix(61), wantCode: -1, wantMsg: "exceeds the maximum of 60"},
		{name: "oversized default limit", send: lengthPrefix(DefaultMaxFrameSize - 3), wantCode: -1, wantMsg: "exceeds the maximum of 104857596"},
		{name: "negative length", send: lengthPrefix(-5), wantCode: -1, wantMsg: "negative length -5"},
		{name: "shorter than header", send: append(lengthPrefix(7), 3, 0xe8, 0, 0, 0, 0, 0), wantCode: 3, wantMsg: "shorter than its header"},
		{name: "empty frame", send: lengthPrefix(0), wantCode: 3, wantMsg: "shorter than its header"},
		{name: "tls", send: []byte{0x16, 0x03, 0x01, 0x00, 0xc8, 0x01}, wantCode: -1, wantMsg: "TLS"},
		{name: "http", send: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), wantCode: -1, wantMsg: "HTTP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctl := newControl()
			srv, addr := startServer(t, ServerConfig{MaxFrameSize: tt.maxFrame}, ctl)

			// A bystander connection with a request in flight must not be
			// disturbed.
			other := dialClient(t, addr)
			slow := make(chan error, 1)
			go func() { slow <- other.Call(t.Context(), keySlow, 0, echoReq("x"), nil) }()
			<-ctl.slowStarted

			rc := dialRaw(t, addr)
			rc.Write(tt.send)
			r := rc.Read()
			if r.Type != ResponseServerFailure {
				t.Fatalf("type %v, want SERVER_FAILURE", r.Type)
			}
			m := decodeErrorResponse(t, r.Body)
			if flusserr.Code(m.GetErrorCode()) != tt.wantCode || !strings.Contains(m.GetErrorMessage(), tt.wantMsg) {
				t.Fatalf("got code %d %q, want %d containing %q", m.GetErrorCode(), m.GetErrorMessage(), tt.wantCode, tt.wantMsg)
			}
			rc.ExpectClosed("the server closes it")

			ctl.release <- struct{}{}
			if err := <-slow; err != nil {
				t.Fatalf("bystander call: %v", err)
			}
			fresh := dialClient(t, addr)
			if _, err := fresh.Handshake(t.Context()); err != nil {
				t.Fatalf("new connection after a bad frame: %v", err)
			}
			if n := srv.ActiveConns(); n < 2 {
				t.Fatalf("ActiveConns = %d, want at least the two live connections", n)
			}
		})
	}
}

// The client fails every call in flight when the server sends
// SERVER_FAILURE, and the failed calls see the server's reason.
func TestClientServerFailureFailsInFlight(t *testing.T) {
	ctl := newControl()
	_, addr := startServer(t, ServerConfig{}, ctl)
	c := dialClient(t, addr)
	slow := make(chan error, 1)
	go func() { slow <- c.Call(t.Context(), keySlow, 0, echoReq("x"), nil) }()
	<-ctl.slowStarted
	if err := c.SendRawFrame(lengthPrefix(-1)); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	var sf *ServerFailureError
	if err := <-slow; !errors.As(err, &sf) || sf.Code != -1 || !strings.Contains(sf.Message, "negative") {
		t.Fatalf("in-flight call err = %v, want ServerFailureError", err)
	}
	if _, ok := flusserr.From(c.Err()); ok {
		t.Fatalf("a server failure must not look like an API error: %v", c.Err())
	}
	if err := c.Call(t.Context(), keyEcho, 0, echoReq("x"), nil); !errors.As(err, &sf) {
		t.Fatalf("call after failure: %v", err)
	}
}

func TestClientContextCancel(t *testing.T) {
	ctl := newControl()
	_, addr := startServer(t, ServerConfig{}, ctl)
	c := dialClient(t, addr)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx, keySlow, 0, echoReq("x"), nil) }()
	<-ctl.slowStarted
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The late answer is dropped and the connection keeps working.
	ctl.release <- struct{}{}
	if err := c.Call(t.Context(), keyEcho, 0, echoReq("x"), nil); err != nil {
		t.Fatal(err)
	}
}

func TestClientClose(t *testing.T) {
	ctl := newControl()
	_, addr := startServer(t, ServerConfig{}, ctl)
	c := dialClient(t, addr)
	done := make(chan error, 1)
	go func() { done <- c.Call(t.Context(), keySlow, 0, echoReq("x"), nil) }()
	<-ctl.slowStarted
	c.Close()
	c.Close()
	if err := <-done; !errors.Is(err, ErrClientClosed) {
		t.Fatalf("in-flight call err = %v, want ErrClientClosed", err)
	}
	if err := c.Call(t.Context(), keyEcho, 0, echoReq("x"), nil); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("call after Close: %v", err)
	}
}

func TestHandlerContextCancelledOnDisconnect(t *testing.T) {
	ctl := newControl()
	_, addr := startServer(t, ServerConfig{}, ctl)
	c := dialClient(t, addr)
	go c.Call(t.Context(), keyCtx, 0, echoReq("x"), nil)
	<-ctl.ctxStarted
	c.Close()
	select {
	case err := <-ctl.ctxDone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("handler ctx err = %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("handler context was not cancelled")
	}
}

func TestGate(t *testing.T) {
	gate := func(ctx context.Context, s *Session, h RequestHeader) error {
		if h.APIKey == messages.KeyAPIVersions || s.Authenticated() {
			return nil
		}
		return flusserr.New(flusserr.AuthenticateException, "The connection has not completed authentication yet.")
	}
	_, addr := startServer(t, ServerConfig{Gate: gate}, newControl())
	c := dialClient(t, addr)
	ctx := t.Context()

	if _, err := c.Handshake(ctx); err != nil {
		t.Fatalf("API_VERSIONS must pass the gate: %v", err)
	}
	tests := []struct {
		name string
		key  messages.Key
		body []byte
	}{
		{name: "served key", key: keyEcho, body: mustMarshal(t, echoReq("x"))},
		// The gate runs before the key is looked up or the body decoded.
		{name: "unknown key", key: 4242},
		{name: "bad body", key: keyEcho, body: []byte{0xff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := c.CallRaw(ctx, tt.key, 0, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			fe, ok := flusserr.From(r.Err())
			if !ok || fe.Code != 46 || !strings.Contains(fe.Message, "authentication") {
				t.Fatalf("got %v, want code 46", r.Err())
			}
		})
	}
}

func TestGateAndSession(t *testing.T) {
	gate := func(ctx context.Context, s *Session, h RequestHeader) error {
		if h.APIKey == messages.KeyAPIVersions || h.APIKey == 1038 || s.Authenticated() {
			return nil
		}
		return flusserr.New(flusserr.AuthenticateException, "not authenticated")
	}
	var sessions sync.Map // ConnID -> *Session seen by the handler
	mux := NewMux(append(testAPIs(newControl()), API{
		Key: 1038, Name: "AUTHENTICATE", NewRequest: func() proto.Message { return &messages.AuthenticateRequest{} },
		Handle: func(ctx context.Context, s *Session, req *Request) (proto.Message, error) {
			sessions.Store(s.ConnID, s)
			s.SetIdentity("alice", true)
			return &messages.AuthenticateResponse{Challenge: []byte{}}, nil
		},
	})...)
	_, addr := startServer(t, ServerConfig{Mux: mux, Gate: gate, ListenerName: "CLIENT"}, nil)
	ctx := t.Context()

	authed, other := dialClient(t, addr), dialClient(t, addr)
	var resp messages.AuthenticateResponse
	if err := authed.Call(ctx, 1038, 0, &messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: []byte("\x00alice\x00pw")}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Challenge == nil || len(resp.Challenge) != 0 {
		t.Fatalf("challenge %v, want empty bytes", resp.Challenge)
	}
	if err := authed.Call(ctx, keyEcho, 0, echoReq("x"), nil); err != nil {
		t.Fatalf("after auth: %v", err)
	}
	// Authentication state is per connection.
	if err := other.Call(ctx, keyEcho, 0, echoReq("x"), nil); err == nil {
		t.Fatal("a second connection inherited authentication")
	}
	sessions.Range(func(_, v any) bool {
		s := v.(*Session)
		if p, ok := s.Identity(); p != "alice" || !ok || s.ListenerName != "CLIENT" || s.RemoteAddr == nil {
			t.Fatalf("session %+v", s)
		}
		return true
	})
}

// Close stops accepting, waits for the request in flight, and only then
// closes its connection; Serve returns nil.
func TestCloseDrains(t *testing.T) {
	ctl := newControl()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(ServerConfig{Mux: NewMux(testAPIs(ctl)...)})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), ln) }()
	addr := ln.Addr().String()

	c := dialClient(t, addr)
	slow := make(chan error, 1)
	go func() { slow <- c.Call(t.Context(), keySlow, 0, echoReq("x"), nil) }()
	<-ctl.slowStarted

	closed := closeInBackground(t, srv, addr)
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a request was in flight", err)
	default:
	}
	ctl.release <- struct{}{}
	if err := <-slow; err != nil {
		t.Fatalf("in-flight call during drain: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if n := srv.ActiveConns(); n != 0 {
		t.Fatalf("ActiveConns after Close = %d", n)
	}
	<-c.Done()
	if err := srv.Serve(context.Background(), mustListen(t)); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
}

// A handler that outlives the drain timeout has its context cancelled.
func TestCloseDrainTimeout(t *testing.T) {
	ctl := newControl()
	srv, addr := startServer(t, ServerConfig{DrainTimeout: time.Millisecond}, ctl)
	c := dialClient(t, addr)
	call := make(chan error, 1)
	go func() { call <- c.Call(t.Context(), keyCtx, 0, echoReq("x"), nil) }()
	<-ctl.ctxStarted
	if err := srv.Close(); !errors.Is(err, ErrDrainTimeout) {
		t.Fatalf("Close after cutting a request: %v, want ErrDrainTimeout", err)
	}
	if err := <-ctl.ctxDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ctx err = %v", err)
	}
	if err := <-call; err == nil {
		t.Fatal("call survived a forced close")
	}
}

func TestServeStopsOnContext(t *testing.T) {
	srv := NewServer(ServerConfig{Mux: NewMux(testAPIs(newControl())...)})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	ln := mustListen(t)
	go func() { served <- srv.Serve(ctx, ln) }()
	c := dialClient(t, ln.Addr().String())
	if _, err := c.Handshake(t.Context()); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	<-c.Done()
}

func TestMaxConns(t *testing.T) {
	srv, addr := startServer(t, ServerConfig{MaxConns: 1}, newControl())
	first := dialClient(t, addr)
	if _, err := first.Handshake(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := srv.ActiveConns(); n != 1 {
		t.Fatalf("ActiveConns = %d, want 1", n)
	}
	second := dialRaw(t, addr)
	second.Write(AppendRequest(nil, RequestHeader{APIKey: messages.KeyAPIVersions}, mustMarshal(t, echoReq("fluss"))))
	second.ExpectClosed("the server closes it")
	if _, err := first.Handshake(t.Context()); err != nil {
		t.Fatalf("first connection after refusing the second: %v", err)
	}
}

func TestIdleTimeout(t *testing.T) {
	_, addr := startServer(t, ServerConfig{IdleTimeout: 20 * time.Millisecond}, newControl())
	rc := dialRaw(t, addr)
	rc.ExpectClosed("the server closes it")
}

// A connection with a request in flight is not idle, whatever the time.
func TestIdleTimeoutSparesInFlight(t *testing.T) {
	ctl := newControl()
	const idle = 50 * time.Millisecond
	_, addr := startServer(t, ServerConfig{IdleTimeout: idle}, ctl)
	rc := dialRaw(t, addr)
	rc.Write(AppendRequest(nil, RequestHeader{APIKey: keySlow, RequestID: 3}, mustMarshal(t, echoReq("x"))))
	<-ctl.slowStarted
	// A sleep, as the test asserts that nothing happens for a while:
	// several idle periods pass while the request is in flight, and the
	// connection is not closed (its answer still arrives).
	time.Sleep(5 * idle)
	ctl.release <- struct{}{}
	if r := rc.Read(); r.Type != ResponseSuccess || r.RequestID != 3 {
		t.Fatalf("got %v id %d", r.Type, r.RequestID)
	}
	rc.ExpectClosed("the server closes it")
}

func TestServerConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     ServerConfig
		wantErr bool
	}{
		{name: "zero", cfg: ServerConfig{}},
		{name: "small frame limit", cfg: ServerConfig{MaxFrameSize: 11}, wantErr: true},
		{name: "smallest frame limit", cfg: ServerConfig{MaxFrameSize: 12}},
		{name: "negative in-flight", cfg: ServerConfig{MaxInFlightPerConn: -1}, wantErr: true},
		{name: "negative conns", cfg: ServerConfig{MaxConns: -1}, wantErr: true},
		{name: "negative idle", cfg: ServerConfig{IdleTimeout: -time.Second}, wantErr: true},
		{name: "negative drain", cfg: ServerConfig{DrainTimeout: -time.Second}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate() = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				srv := NewServer(tt.cfg)
				if serr := srv.Serve(context.Background(), mustListen(t)); serr == nil {
					t.Fatal("Serve accepted an invalid config")
				}
			}
		})
	}
}

func mustListen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

// Frames that arrive together are served from the bytes one read took
// (readRequest's chunk path), and a frame split across reads is read on
// from the socket: every request is answered, with its own body.
func TestFramesArrivingTogether(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, newControl())
	rc := dialRaw(t, addr)
	var frames []byte
	for id := range int32(4) {
		frames = rawconn.AppendRequest(frames, keyEcho, 0, id, mustMarshal(t, echoReq(fmt.Sprintf("call-%d", id))))
	}
	last := len(rawconn.AppendRequest(nil, keyEcho, 0, 3, mustMarshal(t, echoReq("call-3"))))
	split := len(frames) - last + 5 // three whole frames and 5 bytes of the fourth
	check := func(want map[int32]bool) {
		t.Helper()
		for len(want) > 0 {
			r := rc.Read()
			if r.Type != ResponseSuccess || !want[r.RequestID] {
				t.Fatalf("answer %v to request %d, want SUCCESS to one of %v", r.Type, r.RequestID, want)
			}
			var m messages.ApiVersionsRequest
			if err := proto.Unmarshal(r.Body, &m); err != nil || m.GetClientSoftwareName() != fmt.Sprintf("call-%d", r.RequestID) {
				t.Fatalf("request %d answered %q (%v)", r.RequestID, m.GetClientSoftwareName(), err)
			}
			delete(want, r.RequestID)
		}
	}
	rc.Write(frames[:split])
	check(map[int32]bool{0: true, 1: true, 2: true})
	rc.Write(frames[split:])
	check(map[int32]bool{3: true})
}
