package wire

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// closeInBackground starts srv.Close and returns once the listener no
// longer accepts, so that the drain has begun.
func closeInBackground(t *testing.T, srv *Server, addr string) <-chan error {
	t.Helper()
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	eventually.True(t, "the listener to close", func() bool {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			return true
		}
		nc.Close()
		return false
	})
	return closed
}

// allDraining reports whether every connection of srv stopped reading new
// requests.
func allDraining(srv *Server) bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for c := range srv.conns {
		if !c.reader.draining.Load() {
			return false
		}
	}
	return true
}

// waitClosed waits for Close's result.
func waitClosed(t *testing.T, closed <-chan error) error {
	t.Helper()
	select {
	case err := <-closed:
		return err
	case <-time.After(testTimeout):
		t.Fatal("Close did not return")
		return nil
	}
}

func echoFrame(t *testing.T, id int32) []byte {
	return AppendRequest(nil, RequestHeader{APIKey: keyEcho, RequestID: id}, mustMarshal(t, echoReq("held")))
}

// TestDrainAnswersHeldFrames: requests whose bytes reached the socket
// before the shutdown, but that the reader had not read yet, are read and
// answered before the connection closes; a frame whose rest never comes is
// not waited for.
func TestDrainAnswersHeldFrames(t *testing.T) {
	for _, tt := range []struct {
		name string
		// hold sets the server up so that the frames written next stay
		// held, and returns what lets them be served.
		cfg  func(b *Budget) ServerConfig
		hold func(t *testing.T, ctl *control, b *Budget, rc *rawConn) (release func(), wantFirst []int32)
		held []int32
		key  messages.Key // of the held requests; keyEcho when 0
	}{
		{
			name: "forwarded, answered at the Forward hook's Flush",
			cfg: func(*Budget) ServerConfig {
				return ServerConfig{MaxInFlightPerConn: 1, Forward: (&holdingForwarder{}).forwarder(nil)}
			},
			hold: func(t *testing.T, ctl *control, _ *Budget, rc *rawConn) (func(), []int32) {
				rc.Write(AppendRequest(nil, RequestHeader{APIKey: keySlow, RequestID: 1}, mustMarshal(t, echoReq("slow"))))
				<-ctl.slowStarted
				return func() { ctl.release <- struct{}{} }, []int32{1}
			},
			held: []int32{2, 3},
			key:  keyTaken,
		},
		{
			name: "behind a full in-flight limit",
			cfg:  func(*Budget) ServerConfig { return ServerConfig{MaxInFlightPerConn: 1} },
			hold: func(t *testing.T, ctl *control, _ *Budget, rc *rawConn) (func(), []int32) {
				rc.Write(AppendRequest(nil, RequestHeader{APIKey: keySlow, RequestID: 1}, mustMarshal(t, echoReq("slow"))))
				<-ctl.slowStarted
				return func() { ctl.release <- struct{}{} }, []int32{1}
			},
			held: []int32{2, 3, 4},
		},
		{
			name: "waiting for room in the budget",
			cfg:  func(b *Budget) ServerConfig { return ServerConfig{Budget: b} },
			hold: func(t *testing.T, _ *control, b *Budget, _ *rawConn) (func(), []int32) {
				if !b.TryAcquire(b.Size()) {
					t.Fatal("could not fill the budget")
				}
				return func() { b.Release(b.Size()) }, nil
			},
			held: []int32{2, 3},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctl := newControl()
			budget := NewBudget(64 << 10)
			cfg := tt.cfg(budget)
			cfg.DrainTimeout = testTimeout // a failure ends at the test's deadline first
			rec := newRecorder()
			cfg.Observer = rec
			srv, addr := startServer(t, cfg, ctl)
			rc := dialRaw(t, addr)
			release, first := tt.hold(t, ctl, budget, rc)
			var pipelined []byte
			key := tt.key
			if key == 0 {
				key = keyEcho
			}
			for _, id := range tt.held {
				pipelined = append(pipelined, AppendRequest(nil, RequestHeader{APIKey: key, RequestID: id}, mustMarshal(t, echoReq("held")))...)
			}
			rc.Write(pipelined)
			if tt.name == "waiting for room in the budget" {
				eventually.True(t, "the reader to wait for room", func() bool { return budget.Waiting() == 1 })
			}
			closed := closeInBackground(t, srv, addr)
			release()
			want := append(first, tt.held...)
			for range want {
				r := rc.Read()
				if r.Type != ResponseSuccess {
					t.Fatalf("request %d: %v %v", r.RequestID, r.Type, r.Err())
				}
			}
			rc.ExpectClosed("the server closes it")
			if err := waitClosed(t, closed); err != nil {
				t.Fatalf("Close: %v", err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, id := range want {
				if d, ok := rec.done[id]; !ok || d.Outcome != OutcomeAnswered {
					t.Errorf("request %d: done %v, outcome %v; want answered", id, ok, d.Outcome)
				}
			}
		})
	}
}

// TestDrainSkipsPartialFrame: a frame whose rest has not arrived is not
// waited for; the drain ends cleanly well before its timeout.
func TestDrainSkipsPartialFrame(t *testing.T) {
	srv, addr := startServer(t, ServerConfig{DrainTimeout: testTimeout}, newControl())
	rc := dialRaw(t, addr)
	rc.Write(echoFrame(t, 1))
	if r := rc.Read(); r.Type != ResponseSuccess {
		t.Fatalf("first request: %v", r.Type)
	}
	f := echoFrame(t, 2)
	rc.Write(f[:len(f)-3])
	closed := closeInBackground(t, srv, addr)
	if err := waitClosed(t, closed); err != nil {
		t.Fatalf("Close: %v", err)
	}
	rc.ExpectClosed("the server closes it")
}

// TestDrainTimeoutCountsCut: a request still running at the drain timeout
// is reported cut, not answered, and logs no WARN of its own: the drain
// says in one line how many it cut.
func TestDrainTimeoutCountsCut(t *testing.T) {
	var logs syncbuf.Buffer
	rec := newRecorder()
	ctl := newControl()
	srv, addr := startServer(t, ServerConfig{
		DrainTimeout: 50 * time.Millisecond, Observer: rec,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &logs}),
	}, ctl)
	rc := dialRaw(t, addr)
	rc.Write(AppendRequest(nil, RequestHeader{APIKey: keyCtx, RequestID: 7}, mustMarshal(t, echoReq("x"))))
	<-ctl.ctxStarted
	if err := srv.Close(); !errors.Is(err, ErrDrainTimeout) {
		t.Fatalf("Close: %v, want ErrDrainTimeout", err)
	}
	rc.ExpectClosed("the server closes it")
	d := rec.waitDone(t, 7)
	if d.Outcome != OutcomeCut {
		t.Fatalf("outcome %v, want cut", d.Outcome)
	}
	out := logs.String()
	if strings.Contains(out, "request answered with an error") {
		t.Fatalf("a cut request was logged as answered:\n%s", out)
	}
	if !strings.Contains(out, "drain timeout; cutting the requests still in flight") || !strings.Contains(out, "requests=1") {
		t.Fatalf("no summary line of the cut:\n%s", out)
	}
}

// TestClientGoneCounted: a client that closes or resets its connection
// while its request runs is counted as gone, not as an error this server
// made, and logs no WARN.
func TestClientGoneCounted(t *testing.T) {
	for _, tt := range []struct {
		name  string
		leave func(nc *net.TCPConn)
	}{
		{"close", func(nc *net.TCPConn) { nc.Close() }},
		{"reset", func(nc *net.TCPConn) { nc.SetLinger(0); nc.Close() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			rec := newRecorder()
			ctl := newControl()
			_, addr := startServer(t, ServerConfig{
				Observer: rec, Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Info, Output: &logs}),
			}, ctl)
			rc := dialRaw(t, addr)
			rc.Write(AppendRequest(nil, RequestHeader{APIKey: keyCtx, RequestID: 9}, mustMarshal(t, echoReq("x"))))
			<-ctl.ctxStarted
			tt.leave(rc.Net().(*net.TCPConn))
			if err := <-ctl.ctxDone; !errors.Is(err, context.Canceled) {
				t.Fatalf("handler ctx: %v", err)
			}
			d := rec.waitDone(t, 9)
			if d.Outcome != OutcomeClientGone {
				t.Fatalf("outcome %v (code %v), want client_gone", d.Outcome, d.Code)
			}
			if out := logs.String(); strings.Contains(out, "[WARN]") {
				t.Fatalf("a client's disconnect was logged as a warning:\n%s", out)
			}
		})
	}
}

// TestDrainDropsFrameCutByTheDrain: a large frame the reader was in the
// middle of when the drain began is dropped with its connection; the rest
// of its bytes, arriving while a request in flight keeps the connection
// draining, are not taken for frames of their own.
func TestDrainDropsFrameCutByTheDrain(t *testing.T) {
	ctl := newControl()
	budget := NewBudget(1 << 20)
	srv, addr := startServer(t, ServerConfig{Budget: budget, DrainTimeout: testTimeout}, ctl)
	rc := dialRaw(t, addr)
	rc.Write(AppendRequest(nil, RequestHeader{APIKey: keySlow, RequestID: 1}, mustMarshal(t, echoReq("slow"))))
	<-ctl.slowStarted
	f := AppendRequest(nil, RequestHeader{APIKey: keyEcho, RequestID: 2}, mustMarshal(t, echoReq(strings.Repeat("x", 200<<10))))
	rc.Write(f[:100<<10])
	eventually.True(t, "the reader to read the frame's payload", func() bool { return budget.InUse() >= 200<<10 })
	closed := closeInBackground(t, srv, addr)
	// The listener closes before the connections are told to drain: the
	// rest of the frame must arrive after the drain began, or it is simply
	// a frame read in full.
	eventually.True(t, "the connection to drain", func() bool { return allDraining(srv) })
	rc.Write(f[100<<10:])
	ctl.release <- struct{}{}
	if r := rc.Read(); r.Type != ResponseSuccess || r.RequestID != 1 {
		t.Fatalf("the request in flight: %v %d", r.Type, r.RequestID)
	}
	rc.ExpectClosed("the server closes it")
	if err := waitClosed(t, closed); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
