package wire

import (
	"context"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

func testAPI(key messages.Key, minV, maxV int16) API {
	return API{
		Key: key, Name: "T", MinVersion: minV, MaxVersion: maxV,
		NewRequest: func() proto.Message { return &messages.ApiVersionsRequest{} },
		Handle: func(ctx context.Context, s *Session, r *Request) (proto.Message, error) {
			return r.Msg, nil
		},
	}
}

func TestMux(t *testing.T) {
	m := NewMux(testAPI(1054, 0, 0), testAPI(1000, 0, 0), testAPI(1016, 0, 2))
	var keys []messages.Key
	for _, a := range m.Versions() {
		keys = append(keys, a.Key)
	}
	if want := []messages.Key{1000, 1016, 1054}; len(keys) != 3 || keys[0] != want[0] || keys[1] != want[1] || keys[2] != want[2] {
		t.Fatalf("Versions keys %v, want %v", keys, want)
	}
	m.Versions()[0].Key = 1 // a copy: must not change the Mux
	if a, ok := m.Lookup(1000); !ok || a.Key != 1000 {
		t.Fatalf("Lookup(1000) = %v, %v", a, ok)
	}
	if a, ok := m.Lookup(1016); !ok || a.MaxVersion != 2 {
		t.Fatalf("Lookup(1016) = %v, %v", a, ok)
	}
	if _, ok := m.Lookup(1); ok {
		t.Fatal("Lookup(1) found an API")
	}
	var nilMux *Mux
	if _, ok := nilMux.Lookup(1000); ok || nilMux.Versions() != nil {
		t.Fatal("nil Mux serves something")
	}
}

func TestNewMuxRejects(t *testing.T) {
	noHandler := testAPI(1001, 0, 0)
	noHandler.Handle = nil
	noRequest := testAPI(1001, 0, 0)
	noRequest.NewRequest = nil
	tests := []struct {
		name string
		apis []API
	}{
		{name: "duplicate key", apis: []API{testAPI(1000, 0, 0), testAPI(1000, 0, 1)}},
		{name: "inverted range", apis: []API{testAPI(1000, 2, 1)}},
		{name: "negative min", apis: []API{testAPI(1000, -1, 1)}},
		{name: "no handler", apis: []API{noHandler}},
		{name: "no request", apis: []API{noRequest}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("NewMux did not panic")
				}
			}()
			NewMux(tt.apis...)
		})
	}
}

func TestAPIString(t *testing.T) {
	tests := []struct {
		api  API
		want string
	}{
		{API{Key: 1000, Name: "API_VERSIONS"}, "API_VERSIONS(1000)"},
		{API{Key: 1099}, "api key 1099"},
	}
	for _, tt := range tests {
		if got := tt.api.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestSessionIdentity(t *testing.T) {
	var s Session
	if p, ok := s.Identity(); p != "" || ok {
		t.Fatalf("zero Session identity %q %v", p, ok)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			s.SetPrincipal("ANONYMOUS")
			s.SetAuthenticated(true)
			_ = s.Principal()
			_ = s.Authenticated()
		})
	}
	wg.Wait()
	if s.Principal() != "ANONYMOUS" || !s.Authenticated() {
		t.Fatalf("identity %q %v", s.Principal(), s.Authenticated())
	}
	s.SetIdentity("alice", false)
	if p, ok := s.Identity(); p != "alice" || ok {
		t.Fatalf("identity %q %v", p, ok)
	}
	s.Attrs.Store("k", 1)
	if v, ok := s.Attrs.Load("k"); !ok || v != 1 {
		t.Fatal("Attrs lost a value")
	}
}
