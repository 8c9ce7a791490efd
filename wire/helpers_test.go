package wire

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/rawconn"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// testTimeout only keeps a broken test from hanging; no test asserts on
// timing.
const testTimeout = 20 * time.Second

// readHex decodes a testdata file of hex byte pairs; '#' starts a comment.
func readHex(tb testing.TB, name string) []byte {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	var sb strings.Builder
	for line := range strings.Lines(string(raw)) {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		sb.WriteString(strings.Join(strings.Fields(line), ""))
	}
	b, err := hex.DecodeString(sb.String())
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return b
}

// Test api keys. They sit outside Fluss's range so they never look real.
const (
	keyEcho     messages.Key = 9001 // echoes the ApiVersionsRequest
	keySlow     messages.Key = 9002 // blocks until the test releases it
	keyFail     messages.Key = 9003 // fails as client_software_name says
	keyVersions messages.Key = 9004 // serves versions 1..2 only
	keyCtx      messages.Key = 9005 // waits for its context to end
)

// control lets a test steer the blocking test APIs.
type control struct {
	slowStarted chan struct{} // one value when each slow call starts
	release     chan struct{} // each receive lets one slow call finish
	ctxStarted  chan struct{}
	ctxDone     chan error
}

func newControl() *control {
	return &control{
		slowStarted: make(chan struct{}, 16),
		release:     make(chan struct{}),
		ctxStarted:  make(chan struct{}, 16),
		ctxDone:     make(chan error, 16),
	}
}

func echoReq(name string) *messages.ApiVersionsRequest {
	return &messages.ApiVersionsRequest{ClientSoftwareName: proto.String(name), ClientSoftwareVersion: proto.String("v")}
}

func testAPIs(ctl *control) []API {
	newReq := func() proto.Message { return &messages.ApiVersionsRequest{} }
	var mux *Mux
	apis := []API{
		{Key: messages.KeyAPIVersions, Name: "API_VERSIONS", NewRequest: newReq,
			Handle: func(ctx context.Context, s *Session, req *Request) (proto.Message, error) {
				resp := &messages.ApiVersionsResponse{}
				for _, a := range mux.Versions() {
					resp.ApiVersions = append(resp.ApiVersions, &messages.PbApiVersion{
						ApiKey: proto.Int32(int32(a.Key)), MinVersion: proto.Int32(int32(a.MinVersion)), MaxVersion: proto.Int32(int32(a.MaxVersion)),
					})
				}
				return resp, nil
			}},
		{Key: keyEcho, Name: "ECHO", NewRequest: newReq,
			Handle: func(ctx context.Context, s *Session, r *Request) (proto.Message, error) {
				return r.Msg, nil
			}},
		{Key: keySlow, Name: "SLOW", NewRequest: newReq,
			Handle: func(ctx context.Context, s *Session, r *Request) (proto.Message, error) {
				req := r.Msg
				ctl.slowStarted <- struct{}{}
				select {
				case <-ctl.release:
					return req, nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}},
		{Key: keyFail, Name: "FAIL", NewRequest: newReq,
			Handle: func(ctx context.Context, s *Session, r *Request) (proto.Message, error) {
				switch r.Msg.(*messages.ApiVersionsRequest).GetClientSoftwareName() {
				case "code63":
					return nil, flusserr.New(flusserr.InvalidProducerID, "Invalid producer ID 'a b': bad char")
				case "wrapped21":
					return nil, fmt.Errorf("lookup: %w", flusserr.New(flusserr.UnknownTableOrBucket, "no table 5"))
				case "default7":
					return nil, flusserr.New(7, "")
				case "code0":
					return nil, flusserr.New(flusserr.None, "not an error")
				case "plain":
					return nil, errors.New("boom")
				case "long":
					return nil, errors.New(strings.Repeat("é", 3000))
				case "panic":
					panic("handler exploded")
				case "nil":
					return nil, nil
				case "typednil":
					return (*messages.ApiVersionsResponse)(nil), nil
				case "missingrequired":
					return &messages.PbApiVersion{ApiKey: proto.Int32(1)}, nil
				}
				return nil, errors.New("unknown failure mode")
			}},
		{Key: keyVersions, Name: "VERSIONED", MinVersion: 1, MaxVersion: 2, NewRequest: newReq,
			Handle: func(ctx context.Context, s *Session, r *Request) (proto.Message, error) {
				return r.Msg, nil
			}},
		{Key: keyCtx, Name: "CTX", NewRequest: newReq,
			Handle: func(ctx context.Context, s *Session, req *Request) (proto.Message, error) {
				ctl.ctxStarted <- struct{}{}
				<-ctx.Done()
				ctl.ctxDone <- ctx.Err()
				return nil, ctx.Err()
			}},
	}
	mux = NewMux(apis...)
	return apis
}

// startServer serves cfg (with the test Mux unless cfg.Mux is set) on a
// loopback port and closes it when the test ends.
func startServer(tb testing.TB, cfg ServerConfig, ctl *control) (*Server, string) {
	tb.Helper()
	if cfg.Mux == nil {
		cfg.Mux = NewMux(testAPIs(ctl)...)
	}
	if cfg.Logger == nil {
		w := &testWriter{tb: tb}
		tb.Cleanup(w.stop) // runs after the server's Close below
		cfg.Logger = hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: w})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := NewServer(cfg)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background(), ln) }()
	tb.Cleanup(func() {
		srv.Close()
		if err := <-served; err != nil {
			tb.Errorf("Serve: %v", err)
		}
	})
	return srv, ln.Addr().String()
}

// testWriter sends log lines to the test log until the test ends; a
// goroutine that outlives a forced close must not log into a finished test.
type testWriter struct {
	mu      sync.Mutex
	tb      testing.TB
	stopped bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.tb.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
}

func dialClient(tb testing.TB, addr string) *Client {
	tb.Helper()
	c, err := Dial(tb.Context(), addr, ClientOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// rawConn is the raw connection of wire's tests; see package rawconn.
type rawConn = rawconn.Conn[Response]

// dialRaw opens a raw connection whose reads give up after testTimeout.
func dialRaw(tb testing.TB, addr string) *rawConn {
	tb.Helper()
	r := rawconn.Dial(tb, addr, ParseResponse)
	r.SetDeadline(testTimeout)
	return r
}

func mustMarshal(tb testing.TB, m proto.Message) []byte {
	tb.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// marshalPartial encodes m even if required fields are missing.
func marshalPartial(tb testing.TB, m proto.Message) []byte {
	tb.Helper()
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func decodeErrorResponse(tb testing.TB, body []byte) *messages.ErrorResponse {
	tb.Helper()
	var m messages.ErrorResponse
	if err := proto.Unmarshal(body, &m); err != nil {
		tb.Fatalf("decode ErrorResponse: %v", err)
	}
	return &m
}
