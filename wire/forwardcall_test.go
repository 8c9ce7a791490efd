package wire

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// TestForwarderCall: what Forwarder.Call answers goes back whole under the
// request's own id; a SERVER_FAILURE or a Go error becomes an error answer.
func TestForwarderCall(t *testing.T) {
	errBody := AppendErrorResponse(nil, flusserr.NotCoordinatorLeader, "not leader upstream")
	raw := func(ctx context.Context, s *Session, h RequestHeader, body []byte) (Response, error) {
		switch h.APIKey {
		case 1012:
			return Response{Type: ResponseSuccess, RequestID: 999, Body: append([]byte("up:"), body...)}, nil
		case 1013:
			return Response{Type: ResponseError, Body: errBody}, nil
		case 1014:
			return Response{Type: ResponseServerFailure, Body: errBody}, nil
		}
		return Response{}, errors.New("upstream unreachable")
	}
	_, addr := startServer(t, ServerConfig{Forward: Forwarder{Call: raw}}, newControl())
	r := dialRaw(t, addr)
	tests := []struct {
		name     string
		key      messages.Key
		wantType ResponseType
		wantBody []byte
		wantCode flusserr.Code
	}{
		{name: "success body kept, id replaced", key: 1012, wantType: ResponseSuccess, wantBody: []byte("up:abc")},
		{name: "error body passed through unchanged", key: 1013, wantType: ResponseError, wantBody: errBody},
		{name: "server failure is not passed on", key: 1014, wantType: ResponseError, wantCode: flusserr.UnknownServerError},
		{name: "go error", key: 1015, wantType: ResponseError, wantCode: flusserr.UnknownServerError},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := int32(-5 + i)
			r.Write(AppendRequest(nil, RequestHeader{APIKey: tt.key, RequestID: id}, []byte("abc")))
			got := r.Read()
			if got.Type != tt.wantType || got.RequestID != id {
				t.Fatalf("got %v id %d, want %v id %d", got.Type, got.RequestID, tt.wantType, id)
			}
			if tt.wantBody != nil {
				if !bytes.Equal(got.Body, tt.wantBody) {
					t.Fatalf("body %x, want %x", got.Body, tt.wantBody)
				}
				return
			}
			if code := decodeErrorResponse(t, got.Body).GetErrorCode(); flusserr.Code(code) != tt.wantCode {
				t.Fatalf("code %d, want %d", code, tt.wantCode)
			}
		})
	}
}

func TestSessionCloseWhenIdle(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	raw := func(ctx context.Context, s *Session, h RequestHeader, body []byte) (Response, error) {
		if h.APIKey == 1012 {
			entered <- struct{}{}
			<-release
			return Response{Type: ResponseSuccess, Body: []byte("slow")}, nil
		}
		s.CloseWhenIdle()
		return Response{Type: ResponseSuccess, Body: []byte("closing")}, nil
	}
	_, addr := startServer(t, ServerConfig{Forward: Forwarder{Call: raw}}, newControl())
	r := dialRaw(t, addr)
	r.Write(AppendRequest(nil, RequestHeader{APIKey: 1012, RequestID: 1}, nil))
	<-entered
	r.Write(AppendRequest(nil, RequestHeader{APIKey: 1013, RequestID: 2}, nil))
	if got := r.Read(); got.RequestID != 2 || string(got.Body) != "closing" {
		t.Fatalf("first answer %+v", got)
	}
	close(release)
	// The request read before CloseWhenIdle is still answered, then the
	// connection closes.
	if got := r.Read(); got.RequestID != 1 || string(got.Body) != "slow" {
		t.Fatalf("second answer %+v", got)
	}
	r.ExpectClosed("the server closes it")
	// A Session no server owns ignores the call.
	(&Session{}).CloseWhenIdle()
}
