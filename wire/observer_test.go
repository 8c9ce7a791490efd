package wire

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu                         sync.Mutex
	accepted, closed           int
	refused                    []string
	started                    map[int32]int
	done                       map[int32]RequestDone
	startedBytes, doneRequests int
	allClosed                  chan struct{}
}

func newRecorder() *recorder {
	return &recorder{started: map[int32]int{}, done: map[int32]RequestDone{}, allClosed: make(chan struct{}, 16)}
}

func (r *recorder) ConnAccepted(string) { r.mu.Lock(); r.accepted++; r.mu.Unlock() }
func (r *recorder) ConnRefused(_, reason string) {
	r.mu.Lock()
	r.refused = append(r.refused, reason)
	r.mu.Unlock()
}
func (r *recorder) ConnClosed(string) {
	r.mu.Lock()
	r.closed++
	r.mu.Unlock()
	r.allClosed <- struct{}{}
}
func (r *recorder) RequestStarted(_ string, h RequestHeader, size int) {
	r.mu.Lock()
	r.started[h.RequestID] = size
	r.startedBytes += size
	r.mu.Unlock()
}
func (r *recorder) RequestDone(_ string, d RequestDone) {
	r.mu.Lock()
	r.done[d.Header.RequestID] = d
	r.doneRequests++
	r.mu.Unlock()
}

// waitDone waits until request id has been reported done and returns what
// was reported.
func (r *recorder) waitDone(t *testing.T, id int32) RequestDone {
	t.Helper()
	var d RequestDone
	eventually.True(t, fmt.Sprintf("request %d to be reported", id), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		var ok bool
		d, ok = r.done[id]
		return ok
	})
	return d
}

// TestObserver: every request is started and done once, with its size,
// code, subject (a producer id) and whether it was served here or passed
// on; errors this server made are logged at WARN with their code,
// passed-on ones are not.
func TestObserver(t *testing.T) {
	rec := newRecorder()
	fw := &holdingForwarder{}
	var logs syncbuf.Buffer
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: &logs})
	gate := func(_ context.Context, _ *Session, h RequestHeader) error {
		if h.APIKey == keyRefused {
			return flusserr.New(flusserr.AuthorizationException, "not allowed")
		}
		return nil
	}
	raw := func(_ context.Context, _ *Session, h RequestHeader, body []byte) (Response, error) {
		return Response{Type: ResponseError, Body: AppendErrorResponse(nil, flusserr.StorageException, "upstream says no")}, nil
	}
	apis := append(testAPIs(newControl()), API{Key: 1053, Name: "REGISTER_PRODUCER_OFFSETS",
		NewRequest: func() proto.Message { return &messages.RegisterProducerOffsetsRequest{} },
		Subject:    Subject{Key: "producer_id", Of: registerProducerID},
		Handle: func(ctx context.Context, s *Session, req *Request) (proto.Message, error) {
			return nil, flusserr.New(flusserr.InvalidProducerID, "bad id")
		}})
	_, addr := startServer(t, ServerConfig{Mux: NewMux(apis...), Logger: log, Gate: gate, Forward: fw.forwarder(raw), Observer: rec}, nil)
	r := dialRaw(t, addr)

	echo := mustMarshal(t, echoReq("local"))
	reg := mustMarshal(t, &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("job-7")})
	tests := []struct {
		id      int32
		key     messages.Key
		body    []byte
		local   bool
		passed  bool
		code    flusserr.Code
		pid     string
		warnLog bool
	}{
		{id: 1, key: keyEcho, body: echo, local: true},
		{id: 2, key: 1053, body: reg, local: true, code: flusserr.InvalidProducerID, pid: "job-7", warnLog: true},
		{id: 3, key: keyTaken, body: []byte("x"), passed: true},
		{id: 4, key: keyDeclined, body: []byte("y"), code: flusserr.StorageException, passed: true},
		{id: 5, key: keyRefused, body: nil, code: flusserr.AuthorizationException, warnLog: true},
		{id: 6, key: keyFail, body: mustMarshal(t, echoReq("plain")), local: true, code: flusserr.UnknownServerError, warnLog: true},
	}
	var batch []byte
	for _, tt := range tests {
		batch = AppendRequest(batch, RequestHeader{APIKey: tt.key, RequestID: tt.id}, tt.body)
	}
	r.Write(batch)
	for range tests {
		r.Read()
	}
	r.Net().Close()
	select {
	case <-rec.allClosed:
	case <-time.After(testTimeout):
		t.Fatal("connection close not observed")
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.accepted != 1 || rec.closed != 1 {
		t.Errorf("accepted %d closed %d, want 1 and 1", rec.accepted, rec.closed)
	}
	if rec.doneRequests != len(tests) {
		t.Errorf("%d RequestDone, want %d", rec.doneRequests, len(tests))
	}
	for _, tt := range tests {
		d, ok := rec.done[tt.id]
		if !ok {
			t.Errorf("id %d: no RequestDone", tt.id)
			continue
		}
		if size := rec.started[tt.id]; size != requestHeaderSize+len(tt.body) || d.Size != size {
			t.Errorf("id %d: started size %d, done size %d, want %d", tt.id, size, d.Size, requestHeaderSize+len(tt.body))
		}
		if d.Local != tt.local || d.Code != tt.code || d.Subject != tt.pid || d.Header.APIKey != tt.key {
			t.Errorf("id %d: %+v, want local=%v code=%v pid=%q", tt.id, d, tt.local, tt.code, tt.pid)
		}
		if d.Passed != tt.passed {
			t.Errorf("id %d: passed %v, want %v", tt.id, d.Passed, tt.passed)
		}
		if d.Duration < 0 {
			t.Errorf("id %d: negative duration", tt.id)
		}
	}
	out := logs.String()
	for _, tt := range tests {
		line := "request_id=" + strconv.Itoa(int(tt.id)) + " "
		has := strings.Contains(out, line)
		if has != tt.warnLog {
			t.Errorf("id %d: WARN line present=%v, want %v\n%s", tt.id, has, tt.warnLog, out)
		}
	}
	for _, want := range []string{"code=INVALID_PRODUCER_ID_EXCEPTION", "error_code=63", "producer_id=job-7", "code=AUTHORIZATION_EXCEPTION"} {
		if !strings.Contains(out, want) {
			t.Errorf("WARN log lacks %q:\n%s", want, out)
		}
	}
}

// TestObserverDebugLine: at DEBUG every request gets one line with its
// api, producer id, result and duration.
func TestObserverDebugLine(t *testing.T) {
	var logs syncbuf.Buffer
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, Output: &logs})
	_, addr := startServer(t, ServerConfig{Logger: log}, newControl())
	r := dialRaw(t, addr)
	r.Write(AppendRequest(nil, RequestHeader{APIKey: keyEcho, RequestID: 42}, mustMarshal(t, echoReq("x"))))
	r.Read()
	out := logs.String()
	if !strings.Contains(out, "request: conn=1 api=ECHO api_key=9001 request_id=42 result=SUCCESS duration=") {
		t.Fatalf("no request line:\n%s", out)
	}
}

// TestObserverRefused: connections beyond MaxConns are reported refused.
func TestObserverRefused(t *testing.T) {
	rec := newRecorder()
	_, addr := startServer(t, ServerConfig{MaxConns: 1, Observer: rec}, newControl())
	first := dialRaw(t, addr)
	first.Write(AppendRequest(nil, RequestHeader{APIKey: keyEcho, RequestID: 1}, mustMarshal(t, echoReq("x"))))
	first.Read()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetReadDeadline(time.Now().Add(testTimeout))
	if _, err := nc.Read(make([]byte, 1)); err == nil {
		t.Fatal("the second connection must be closed")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.refused) != 1 || rec.refused[0] != "limit" || rec.accepted != 1 {
		t.Fatalf("refused %v accepted %d", rec.refused, rec.accepted)
	}
}

// registerProducerID is a test Subject: the producer_id of a
// RegisterProducerOffsetsRequest, decoded or not.
func registerProducerID(r *Request) string {
	if r.Msg != nil {
		return r.Msg.(*messages.RegisterProducerOffsetsRequest).GetProducerId()
	}
	return bodyProducerID(r.Body)
}

// bodyProducerID decodes a RegisterProducerOffsetsRequest body for its
// producer_id.
func bodyProducerID(body []byte) string {
	var req messages.RegisterProducerOffsetsRequest
	proto.UnmarshalOptions{AllowPartial: true}.Unmarshal(body, &req)
	return req.GetProducerId()
}

// TestSubjectIsBounded: the subject a request's log line and RequestDone
// carry is cut like an echo, whether the body was decoded, left raw
// (RawBody) or answered by Quick.
func TestSubjectIsBounded(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	want := strings.Repeat("x", 256) + "... (1048576 bytes in all)"
	subject := Subject{Key: "producer_id", Of: registerProducerID}
	newReq := func() proto.Message { return &messages.RegisterProducerOffsetsRequest{} }
	answer := func(context.Context, *Session, *Request) (proto.Message, error) {
		return &messages.RegisterProducerOffsetsResponse{}, nil
	}
	mux := NewMux(
		API{Key: 1053, Name: "DECODED", NewRequest: newReq, Subject: subject, Handle: answer},
		API{Key: 1054, Name: "RAW", NewRequest: newReq, Subject: subject, RawBody: true, Handle: answer},
		API{Key: 1055, Name: "QUICK", NewRequest: newReq, Subject: subject, Handle: answer,
			Quick: Quick{Answer: func(_ *Session, _ int16, body, dst []byte) ([]byte, string, bool) {
				return dst, bodyProducerID(body), true
			}}},
	)
	rec := newRecorder()
	_, addr := startServer(t, ServerConfig{Mux: mux, Observer: rec, MaxFrameSize: 4 << 20}, nil)
	c := dialClient(t, addr)
	body := marshalPartial(t, &messages.RegisterProducerOffsetsRequest{ProducerId: &long})
	for _, key := range []messages.Key{1053, 1054, 1055} {
		r, err := c.CallRaw(t.Context(), key, 0, body)
		if err != nil || r.Type != ResponseSuccess {
			t.Fatalf("key %d: %v %v", key, err, r.Err())
		}
		if d := rec.waitDone(t, r.RequestID); d.Subject != want || d.SubjectKey != "producer_id" {
			t.Fatalf("key %d: subject of %d bytes under %q, want %d bytes under producer_id", key, len(d.Subject), d.SubjectKey, len(want))
		}
	}
}
