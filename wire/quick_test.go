package wire

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

const keyQuick messages.Key = 9010

// quickAPI serves ApiVersionsRequests whose client_software_name starts
// with "quick" from its Quick path (answering the request echoed, as
// Handle does), panics in Quick for "panic", and declines the rest, which
// Handle echoes. It counts both paths. Its Subject is the name.
func quickAPI(quick, handled *atomic.Int64) API {
	return API{
		Key: keyQuick, Name: "QUICK", MinVersion: 0, MaxVersion: 1,
		NewRequest: func() proto.Message { return &messages.ApiVersionsRequest{} },
		Subject: Subject{Key: "client", Of: func(r *Request) string {
			return r.Msg.(*messages.ApiVersionsRequest).GetClientSoftwareName()
		}},
		Quick: Quick{Answer: func(s *Session, version int16, body, dst []byte) ([]byte, string, bool) {
			var req messages.ApiVersionsRequest
			if proto.Unmarshal(body, &req) != nil {
				return append(dst, "garbage that must be discarded"...), "", false
			}
			name := req.GetClientSoftwareName()
			if name == "panic" {
				panic("quick exploded")
			}
			if !strings.HasPrefix(name, "quick") {
				return append(dst, "garbage that must be discarded"...), "", false
			}
			quick.Add(1)
			return append(dst, body...), name, true
		}},
		Handle: func(ctx context.Context, s *Session, r *Request) (proto.Message, error) {
			handled.Add(1)
			return r.Msg, nil
		},
	}
}

func TestQuickAnswersAndDeclines(t *testing.T) {
	var quick, handled atomic.Int64
	obs := newRecorder()
	_, addr := startServer(t, ServerConfig{Mux: NewMux(quickAPI(&quick, &handled)), Observer: obs}, nil)
	c := dialClient(t, addr)
	ctx := t.Context()
	tests := []struct {
		name      string
		version   int16
		body      []byte
		wantQuick bool
		wantCode  flusserr.Code // of an ERROR answer; None for SUCCESS
	}{
		{name: "quick", body: mustMarshal(t, echoReq("quick-1")), wantQuick: true},
		{name: "declined", body: mustMarshal(t, echoReq("slow-1"))},
		{name: "undecodable body goes to the handler's checks", body: []byte{0xff}, wantCode: flusserr.CorruptMessage},
		// A version outside the range never reaches Quick.
		{name: "unsupported version", version: 7, body: mustMarshal(t, echoReq("quick-2")), wantCode: flusserr.UnsupportedVersion},
		{name: "panic", body: mustMarshal(t, echoReq("panic")), wantCode: flusserr.UnknownServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q0, h0 := quick.Load(), handled.Load()
			r, err := c.CallRaw(ctx, keyQuick, tt.version, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantCode != flusserr.None {
				fe, ok := flusserr.From(r.Err())
				if !ok || fe.Code != tt.wantCode {
					t.Fatalf("got %v %v, want code %d", r.Type, r.Err(), tt.wantCode)
				}
				return
			}
			if r.Type != ResponseSuccess || string(r.Body) != string(tt.body) {
				t.Fatalf("got %v %q, want SUCCESS echoing %q", r.Type, r.Body, tt.body)
			}
			if gotQuick := quick.Load() - q0; gotQuick != map[bool]int64{true: 1}[tt.wantQuick] {
				t.Fatalf("Quick answered %d times, want quick=%v", gotQuick, tt.wantQuick)
			}
			if gotHandled := handled.Load() - h0; gotHandled != map[bool]int64{false: 1}[tt.wantQuick] {
				t.Fatalf("Handle ran %d times, want quick=%v", gotHandled, tt.wantQuick)
			}
		})
	}
	// The connection survived the panic.
	r, err := c.CallRaw(ctx, keyQuick, 1, mustMarshal(t, echoReq("quick-3")))
	if err != nil || r.Type != ResponseSuccess {
		t.Fatalf("after the panic: %v %v", err, r.Err())
	}
	// Quick answers are traced like any other: started and done, with the
	// subject Quick named. RequestDone is told before the answer is
	// sent, so it is there now.
	obs.mu.Lock()
	defer obs.mu.Unlock()
	d, ok := obs.done[r.RequestID]
	if !ok || d.Subject != "quick-3" || d.SubjectKey != "client" || d.API != "QUICK" || !d.Local || d.Code != flusserr.None {
		t.Fatalf("trace of the quick answer: %+v (found %v)", d, ok)
	}
	if len(obs.started) != len(obs.done) || obs.doneRequests != len(tests)+1 {
		t.Fatalf("started %d ids, done %d ids, %d requests: every request must be started and done once", len(obs.started), len(obs.done), obs.doneRequests)
	}
}

// The Gate runs before Quick: a request it refuses is answered with its
// error, and neither Quick nor Handle runs.
func TestQuickAfterGate(t *testing.T) {
	var quick, handled atomic.Int64
	gate := func(ctx context.Context, s *Session, h RequestHeader) error {
		return flusserr.New(flusserr.AuthenticateException, "not yet")
	}
	_, addr := startServer(t, ServerConfig{Mux: NewMux(quickAPI(&quick, &handled)), Gate: gate}, nil)
	r, err := dialClient(t, addr).CallRaw(t.Context(), keyQuick, 0, mustMarshal(t, echoReq("quick")))
	if err != nil {
		t.Fatal(err)
	}
	if fe, ok := flusserr.From(r.Err()); !ok || fe.Code != flusserr.AuthenticateException {
		t.Fatalf("got %v, want code 46", r.Err())
	}
	if quick.Load() != 0 || handled.Load() != 0 {
		t.Fatalf("quick %d, handled %d: the gate must stop both", quick.Load(), handled.Load())
	}
}

// Frames that arrive together are read from one buffer, which the reader
// lends to Quick. A request Quick declines is copied before it goes to its
// own goroutine: each of many pipelined requests, mixing both paths and
// sizes up to past the read buffer, must get its own body back.
func TestQuickPipelinedBodiesStayIntact(t *testing.T) {
	var quick, handled atomic.Int64
	_, addr := startServer(t, ServerConfig{Mux: NewMux(quickAPI(&quick, &handled)), MaxRunningPerConn: 4}, nil)
	r := dialRaw(t, addr)
	const n = 400
	want := map[int32][]byte{}
	var frames []byte
	for i := range n {
		prefix := "slow"
		if i%3 == 0 {
			prefix = "quick"
		}
		name := fmt.Sprintf("%s-%d-%s", prefix, i, strings.Repeat("x", (i*997)%(70<<10)))
		body := mustMarshal(t, echoReq(name))
		want[int32(i)] = body
		frames = AppendRequest(frames, RequestHeader{APIKey: keyQuick, APIVersion: 0, RequestID: int32(i)}, body)
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.Write(frames) })
	for range n {
		resp := r.Read()
		if resp.Type != ResponseSuccess {
			t.Fatalf("request %d: %v %v", resp.RequestID, resp.Type, resp.Err())
		}
		if string(resp.Body) != string(want[resp.RequestID]) {
			t.Fatalf("request %d: body of %d bytes differs from the %d sent", resp.RequestID, len(resp.Body), len(want[resp.RequestID]))
		}
		delete(want, resp.RequestID)
	}
	wg.Wait()
	if len(want) != 0 || quick.Load() == 0 || handled.Load() == 0 {
		t.Fatalf("unanswered %d, quick %d, handled %d: both paths must have run", len(want), quick.Load(), handled.Load())
	}
}

// FuzzQuickFrames feeds a Quick-serving server arbitrary bytes after one
// valid request: whatever it makes of them, the first answer is right and
// the server keeps serving other connections.
func FuzzQuickFrames(f *testing.F) {
	var quick, handled atomic.Int64
	// Logged nowhere: a fuzz target's server must not log into f.
	_, addr := startServer(f, ServerConfig{Mux: NewMux(quickAPI(&quick, &handled)), Logger: hclog.NewNullLogger()}, nil)
	good := mustMarshal(f, echoReq("quick-ok"))
	f.Add(AppendRequest(nil, RequestHeader{APIKey: keyQuick, RequestID: 2}, good))
	f.Add(AppendRequest(nil, RequestHeader{APIKey: keyQuick, RequestID: 2}, []byte{0xff}))
	f.Add([]byte{0, 0, 0, 3, 1})
	f.Fuzz(func(t *testing.T, tail []byte) {
		r := dialRaw(t, addr)
		r.Write(append(AppendRequest(nil, RequestHeader{APIKey: keyQuick, RequestID: 1}, good), tail...))
		resp := r.Read()
		if resp.RequestID != 1 || resp.Type != ResponseSuccess || string(resp.Body) != string(good) {
			t.Fatalf("first answer: %+v", resp)
		}
		r.Net().Close()
		c := dialClient(t, addr)
		if resp, err := c.CallRaw(t.Context(), keyQuick, 0, good); err != nil || string(resp.Body) != string(good) {
			t.Fatalf("server stopped serving: %v", err)
		}
	})
}

// A Mux.WithoutQuick serves every request through Handle.
func TestWithoutQuick(t *testing.T) {
	var quick, handled atomic.Int64
	_, addr := startServer(t, ServerConfig{Mux: NewMux(quickAPI(&quick, &handled)).WithoutQuick()}, nil)
	body := mustMarshal(t, echoReq("quick-1"))
	r, err := dialClient(t, addr).CallRaw(t.Context(), keyQuick, 0, body)
	if err != nil || r.Type != ResponseSuccess || string(r.Body) != string(body) {
		t.Fatalf("got %v %v", err, r.Err())
	}
	if quick.Load() != 0 || handled.Load() != 1 {
		t.Fatalf("quick %d, handled %d: want Handle alone", quick.Load(), handled.Load())
	}
}

// A Quick answer takes no in-flight slot: with the connection's only slot
// held by a slow request, a Quick request is still answered at once, and
// one Quick declines waits for the slot.
func TestQuickNeedsNoSlot(t *testing.T) {
	var quick, handled atomic.Int64
	ctl := newControl()
	mux := NewMux(append(testAPIs(ctl), quickAPI(&quick, &handled))...)
	_, addr := startServer(t, ServerConfig{Mux: mux, MaxInFlightPerConn: 1}, ctl)
	r := dialRaw(t, addr)
	r.Write(AppendRequest(nil, RequestHeader{APIKey: keySlow, RequestID: 1}, mustMarshal(t, echoReq("slow"))))
	<-ctl.slowStarted
	r.Write(AppendRequest(nil, RequestHeader{APIKey: keyQuick, RequestID: 2}, mustMarshal(t, echoReq("quick-x"))))
	if resp := r.Read(); resp.RequestID != 2 || resp.Type != ResponseSuccess {
		t.Fatalf("first answer %+v, want the quick request's while the slot is held", resp)
	}
	r.Write(AppendRequest(nil, RequestHeader{APIKey: keyQuick, RequestID: 3}, mustMarshal(t, echoReq("declined"))))
	ctl.release <- struct{}{}
	for _, want := range []int32{1, 3} {
		if resp := r.Read(); resp.RequestID != want || resp.Type != ResponseSuccess {
			t.Fatalf("got %+v, want request %d", resp, want)
		}
	}
	if quick.Load() != 1 || handled.Load() != 1 {
		t.Fatalf("quick %d, handled %d", quick.Load(), handled.Load())
	}
}

// testWaiter is a Waiter the test settles by hand.
type testWaiter struct {
	done chan struct{}
	err  error
}

func newTestWaiter() *testWaiter            { return &testWaiter{done: make(chan struct{})} }
func (w *testWaiter) Done() <-chan struct{} { return w.done }
func (w *testWaiter) Err() error            { return w.err }
func (w *testWaiter) settle(err error)      { w.err = err; close(w.done) }
func waitingAPI(quick, handled *atomic.Int64, waiters chan *testWaiter) API {
	api := quickAPI(quick, handled)
	api.Quick.Wait = func(*Session, int16, []byte) Waiter {
		w := newTestWaiter()
		waiters <- w
		return w
	}
	api.Handle = func(ctx context.Context, s *Session, r *Request) (proto.Message, error) {
		req := r.Msg
		if _, ok := Arrival(ctx); !ok {
			return nil, fmt.Errorf("the handler was not told when its request arrived")
		}
		handled.Add(1)
		return req, nil
	}
	return api
}

// With Quick.Wait, no answer goes out before the Waiter settles; a met wait
// is answered by Quick, a failed one by Handle (which is told when the
// request arrived), and requests behind a waiting one are still read.
func TestQuickWaitHoldsTheAnswer(t *testing.T) {
	var quick, handled atomic.Int64
	waiters := make(chan *testWaiter, 4)
	_, addr := startServer(t, ServerConfig{Mux: NewMux(waitingAPI(&quick, &handled, waiters))}, nil)
	c := dialClient(t, addr)
	ctx := t.Context()
	type answer struct {
		r   Response
		err error
	}
	call := func(name string) <-chan answer {
		out := make(chan answer, 1)
		go func() {
			r, err := c.CallRaw(ctx, keyQuick, 0, mustMarshal(t, echoReq(name)))
			out <- answer{r, err}
		}()
		return out
	}
	first, second := call("quick-a"), call("quick-b")
	w1, w2 := <-waiters, <-waiters // both read while neither is answered
	select {
	case a := <-first:
		t.Fatalf("answered before its wait settled: %+v", a)
	case a := <-second:
		t.Fatalf("answered before its wait settled: %+v", a)
	default:
	}
	w1.settle(nil)
	w2.settle(fmt.Errorf("sync failed"))
	for _, ch := range []<-chan answer{first, second} {
		a := <-ch
		if a.err != nil || a.r.Type != ResponseSuccess {
			t.Fatalf("answer %v %v", a.err, a.r.Err())
		}
	}
	if quick.Load() != 1 || handled.Load() != 1 {
		t.Fatalf("quick %d, handled %d: want the met wait answered by Quick, the failed one by Handle", quick.Load(), handled.Load())
	}
}

// A connection that closes while a request waits frees its slot: the
// server shuts down without waiting for the Waiter.
func TestQuickWaitEndsWithTheConnection(t *testing.T) {
	var quick, handled atomic.Int64
	waiters := make(chan *testWaiter, 1)
	srv, addr := startServer(t, ServerConfig{Mux: NewMux(waitingAPI(&quick, &handled, waiters))}, nil)
	c := dialClient(t, addr)
	go c.CallRaw(t.Context(), keyQuick, 0, mustMarshal(t, echoReq("quick-never")))
	w := <-waiters
	c.Close()
	if err := srv.Close(); err != nil {
		t.Fatalf("shutdown with a request waiting on a closed connection: %v", err)
	}
	w.settle(nil)
	if quick.Load() != 0 || handled.Load() != 0 {
		t.Fatalf("quick %d, handled %d after the connection closed", quick.Load(), handled.Load())
	}
}

// Requests that wait for the same Waiter (one sync round) are answered
// together once it settles; a connection that closes meanwhile withdraws
// its own at once, and the others are still answered.
func TestQuickWaitSharedRound(t *testing.T) {
	var quick, handled atomic.Int64
	round := newTestWaiter()
	asked := make(chan struct{}, 200)
	api := quickAPI(&quick, &handled)
	api.Quick.Wait = func(*Session, int16, []byte) Waiter {
		asked <- struct{}{}
		return round
	}
	srv, addr := startServer(t, ServerConfig{Mux: NewMux(api)}, nil)
	stay, leave := dialClient(t, addr), dialClient(t, addr)
	ctx := t.Context()
	const n = 150 // more than one answering chunk
	answers := make(chan error, n)
	for i := range n {
		go func() {
			r, err := stay.CallRaw(ctx, keyQuick, 0, mustMarshal(t, echoReq(fmt.Sprintf("quick-%d", i))))
			if err == nil && r.Type != ResponseSuccess {
				err = r.Err()
			}
			answers <- err
		}()
	}
	go leave.CallRaw(ctx, keyQuick, 0, mustMarshal(t, echoReq("quick-leaving")))
	for range n + 1 {
		<-asked
	}
	leave.Close()
	// The leaving connection's request is withdrawn without the round:
	// its connection finishes (the server's count drops to one).
	eventually.True(t, "the leaving connection to close while its request waits", func() bool {
		return srv.ActiveConns() == 1
	})
	select {
	case err := <-answers:
		t.Fatalf("answered before the round settled: %v", err)
	default:
	}
	round.settle(nil)
	for range n {
		if err := <-answers; err != nil {
			t.Fatal(err)
		}
	}
	if quick.Load() != n {
		t.Fatalf("quick answered %d, want %d (the leaving request not among them)", quick.Load(), n)
	}
}
