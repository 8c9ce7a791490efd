package wire

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// TestWithElsewhere: a key another server type serves is answered
// UNSUPPORTED_VERSION naming it and where it is served, is not listed by
// Versions, survives WithoutQuick, is counted by the Observer with its
// name, writes no WARN line, and leaves the connection up; an unknown key
// keeps the plain "not served" answer.
func TestWithElsewhere(t *testing.T) {
	mux := NewMux(testAPI(1000, 0, 0)).WithElsewhere([]messages.Key{1053, 1054}, "it is served by the coordinator").WithoutQuick()
	for _, a := range mux.Versions() {
		if a.Key != 1000 {
			t.Fatalf("Versions lists %v, an elsewhere key", a)
		}
	}
	var logs syncbuf.Buffer
	rec := newRecorder()
	_, addr := startServer(t, ServerConfig{
		Mux: mux, Observer: rec,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: &logs}),
	}, nil)
	rc := dialRaw(t, addr)
	for i, tt := range []struct {
		key       messages.Key
		version   int16
		code      flusserr.Code
		message   string
		elsewhere bool
	}{
		{key: 1053, code: flusserr.UnsupportedVersion, elsewhere: true,
			message: "The server does not support REGISTER_PRODUCER_OFFSETS(1053) version 0: it is served by the coordinator."},
		{key: 1054, version: 3, code: flusserr.UnsupportedVersion, elsewhere: true,
			message: "The server does not support GET_PRODUCER_OFFSETS(1054) version 3: it is served by the coordinator."},
		{key: 1055, code: flusserr.UnsupportedVersion,
			message: "The server does not support api key 1055 version 0; the key is not served."},
		{key: 1000, code: flusserr.None},
	} {
		id := int32(i + 1)
		rc.Write(AppendRequest(nil, RequestHeader{APIKey: tt.key, APIVersion: tt.version, RequestID: id}, mustMarshal(t, echoReq("x"))))
		r := rc.Read()
		if r.RequestID != id {
			t.Fatalf("key %d: answer for request %d", tt.key, r.RequestID)
		}
		if tt.code == flusserr.None {
			if r.Type != ResponseSuccess {
				t.Fatalf("key %d: %v %v", tt.key, r.Type, r.Err())
			}
			continue
		}
		fe, ok := flusserr.From(r.Err())
		if r.Type != ResponseError || !ok || fe.Code != tt.code || fe.Message != tt.message {
			t.Fatalf("key %d: %v %v, want code %d %q", tt.key, r.Type, r.Err(), tt.code, tt.message)
		}
		rec.mu.Lock()
		d := rec.done[id]
		rec.mu.Unlock()
		if d.Elsewhere != tt.elsewhere || (tt.elsewhere && d.API != tt.key.Name()) || d.Code != tt.code {
			t.Fatalf("key %d: observer saw %+v", tt.key, d)
		}
	}
	if strings.Contains(logs.String(), "REGISTER_PRODUCER_OFFSETS") || strings.Contains(logs.String(), "GET_PRODUCER_OFFSETS") {
		t.Fatalf("a key answered elsewhere was logged above debug level:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "api key 1055") {
		t.Fatalf("the unserved key's WARN line is missing, so the log check above proves nothing:\n%s", logs.String())
	}
}

// TestWithElsewherePanicsOnAServedKey: a key cannot be both served and
// elsewhere.
func TestWithElsewherePanicsOnAServedKey(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	NewMux(testAPI(1000, 0, 0)).WithElsewhere([]messages.Key{1000}, "x")
}
