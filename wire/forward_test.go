package wire

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// Api keys of the Forwarder tests.
const (
	keyTaken    messages.Key = 2001 // the forwarder takes it and answers at Flush
	keyDeclined messages.Key = 2002 // Try declines it: Call answers
	keyRefused  messages.Key = 2003 // the gate refuses it
)

// holdingForwarder takes keyTaken requests, holds them, and answers all of
// them at the next Flush, from another goroutine, newest first.
type holdingForwarder struct {
	mu      sync.Mutex
	held    []RequestHeader
	bodies  [][]byte
	reply   *Replier
	offered []int32 // request ids offered to Try
}

// forwarder returns f as Try and Flush, with call as Call.
func (f *holdingForwarder) forwarder(call func(context.Context, *Session, RequestHeader, []byte) (Response, error)) Forwarder {
	return Forwarder{Call: call, Try: f.Try, Flush: f.Flush}
}

func (f *holdingForwarder) Try(_ *Session, h RequestHeader, body []byte, reply *Replier) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.offered = append(f.offered, h.RequestID)
	if h.APIKey != keyTaken {
		return false
	}
	f.held = append(f.held, h)
	f.bodies = append(f.bodies, body)
	f.reply = reply
	return true
}

func (f *holdingForwarder) Flush(*Session) {
	f.mu.Lock()
	held, bodies, reply := f.held, f.bodies, f.reply
	f.held, f.bodies = nil, nil
	f.mu.Unlock()
	if len(held) == 0 {
		return
	}
	go func() {
		for i := len(held) - 1; i >= 0; i-- {
			reply.Queue(held[i].RequestID, ResponseSuccess, append([]byte("fwd:"), bodies[i]...))
		}
		reply.Flush()
	}()
}

func TestForwarder(t *testing.T) {
	fw := &holdingForwarder{}
	var gateMu sync.Mutex
	gated := map[int32]int{}
	gate := func(_ context.Context, _ *Session, h RequestHeader) error {
		gateMu.Lock()
		gated[h.RequestID]++
		gateMu.Unlock()
		if h.APIKey == keyRefused {
			return flusserr.New(flusserr.AuthenticateException, "refused")
		}
		return nil
	}
	raw := func(_ context.Context, _ *Session, h RequestHeader, body []byte) (Response, error) {
		return Response{Type: ResponseSuccess, Body: append([]byte("raw:"), body...)}, nil
	}
	_, addr := startServer(t, ServerConfig{Gate: gate, Forward: fw.forwarder(raw)}, newControl())
	r := dialRaw(t, addr)

	tests := []struct {
		id       int32
		key      messages.Key
		body     string
		wantType ResponseType
		wantBody string
		wantCode flusserr.Code
		offered  bool
	}{
		{id: 1, key: keyTaken, body: "a", wantType: ResponseSuccess, wantBody: "fwd:a", offered: true},
		{id: 2, key: keyDeclined, body: "b", wantType: ResponseSuccess, wantBody: "raw:b", offered: true},
		{id: 3, key: keyTaken, body: "c", wantType: ResponseSuccess, wantBody: "fwd:c", offered: true},
		{id: 4, key: keyRefused, body: "d", wantType: ResponseError, wantCode: flusserr.AuthenticateException},
		{id: 5, key: keyEcho, body: "", wantType: ResponseSuccess},
		{id: 6, key: keyTaken, body: "e", wantType: ResponseSuccess, wantBody: "fwd:e", offered: true},
	}
	// One write: the server reads the whole batch before it waits again, so
	// the taken requests are held until then and answered newest first.
	var batch []byte
	for _, tt := range tests {
		body := []byte(tt.body)
		if tt.key == keyEcho {
			body = mustMarshal(t, echoReq("local"))
		}
		batch = AppendRequest(batch, RequestHeader{APIKey: tt.key, RequestID: tt.id}, body)
	}
	r.Write(batch)
	got := map[int32]Response{}
	for range tests {
		resp := r.Read()
		if _, dup := got[resp.RequestID]; dup {
			t.Fatalf("request id %d answered twice", resp.RequestID)
		}
		got[resp.RequestID] = resp
	}
	for _, tt := range tests {
		resp, ok := got[tt.id]
		if !ok {
			t.Fatalf("request id %d not answered", tt.id)
		}
		if resp.Type != tt.wantType {
			t.Errorf("id %d: type %v, want %v", tt.id, resp.Type, tt.wantType)
			continue
		}
		if tt.wantBody != "" && string(resp.Body) != tt.wantBody {
			t.Errorf("id %d: body %q, want %q", tt.id, resp.Body, tt.wantBody)
		}
		if tt.wantCode != 0 {
			if code := decodeErrorResponse(t, resp.Body).GetErrorCode(); flusserr.Code(code) != tt.wantCode {
				t.Errorf("id %d: code %d, want %d", tt.id, code, tt.wantCode)
			}
		}
		gateMu.Lock()
		n := gated[tt.id]
		gateMu.Unlock()
		if n != 1 {
			t.Errorf("id %d: gate ran %d times, want once", tt.id, n)
		}
	}
	fw.mu.Lock()
	offered := append([]int32(nil), fw.offered...)
	fw.mu.Unlock()
	want := []int32{}
	for _, tt := range tests {
		if tt.offered {
			want = append(want, tt.id)
		}
	}
	if !equalIDs(offered, want) {
		t.Errorf("offered to Forward: %v, want %v", offered, want)
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestForwarderFlushedBeforeSlotWait: with one in-flight slot, a held
// request must be flushed before the reader waits for the slot, or the
// connection would never make progress.
func TestForwarderFlushedBeforeSlotWait(t *testing.T) {
	fw := &holdingForwarder{}
	_, addr := startServer(t, ServerConfig{MaxInFlightPerConn: 1, Forward: fw.forwarder(nil)}, newControl())
	r := dialRaw(t, addr)
	var batch []byte
	for id := int32(1); id <= 3; id++ {
		batch = AppendRequest(batch, RequestHeader{APIKey: keyTaken, RequestID: id}, []byte{byte('0' + id)})
	}
	r.Write(batch)
	for id := int32(1); id <= 3; id++ {
		resp := r.Read()
		want := []byte{'f', 'w', 'd', ':', byte('0' + id)}
		if resp.RequestID != id || !bytes.Equal(resp.Body, want) {
			t.Fatalf("got id %d body %q, want id %d body %q", resp.RequestID, resp.Body, id, want)
		}
	}
}

func TestClientSendAndQueue(t *testing.T) {
	_, addr := startServer(t, ServerConfig{}, newControl())
	c := dialClient(t, addr)
	type answer struct {
		tag int64
		r   Response
		err error
	}
	answers := make(chan answer, 4)
	fn := func(tag int64, r Response, err error) { answers <- answer{tag, r, err} }
	body := mustMarshal(t, echoReq("sent"))
	if err := c.Send(keyEcho, 0, body, 10, fn); err != nil {
		t.Fatal(err)
	}
	for tag := int64(11); tag <= 13; tag++ {
		if err := c.Queue(keyEcho, 0, body, tag, fn); err != nil {
			t.Fatal(err)
		}
	}
	c.Flush()
	seen := map[int64]bool{}
	for range 4 {
		a := <-answers
		if a.err != nil || a.r.Type != ResponseSuccess || seen[a.tag] {
			t.Fatalf("tag %d: %v %v (seen before: %v)", a.tag, a.r.Type, a.err, seen[a.tag])
		}
		seen[a.tag] = true
	}
	for tag := int64(10); tag <= 13; tag++ {
		if !seen[tag] {
			t.Errorf("tag %d not answered", tag)
		}
	}
}

// TestClientSendFailure: a connection lost with a request in flight calls
// its callback once with the error; Send on a failed client returns the
// error and never calls the callback.
func TestClientSendFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		ReadFrame(nc, 0) // the request arrives; then the peer vanishes
		nc.Close()
	}()
	c := dialClient(t, ln.Addr().String())
	calls := make(chan error, 4)
	fn := func(_ int64, _ Response, err error) { calls <- err }
	if err := c.Send(1012, 0, []byte("x"), 1, fn); err != nil {
		t.Fatal(err)
	}
	<-c.Done()
	if err := <-calls; err == nil || errors.Is(err, ErrClientClosed) {
		t.Fatalf("callback error %v, want the lost connection", err)
	}
	if err := c.Send(1012, 0, nil, 2, fn); err == nil {
		t.Fatal("Send on a failed client returned nil")
	}
	c.Close()
	select {
	case err := <-calls:
		t.Fatalf("callback called again: %v", err)
	default:
	}
}
