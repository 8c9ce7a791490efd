package wire

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// OnConnect runs once per connection and Session.Close ends it at once.
func TestOnConnectAndSessionClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan *Session, 1)
	srv := NewServer(ServerConfig{ListenerName: "L", OnConnect: func(ctx context.Context, s *Session) { seen <- s }})
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(context.Background(), ln) }()
	defer func() { srv.Close(); <-done }()

	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var s *Session
	select {
	case s = <-seen:
	case <-time.After(30 * time.Second):
		t.Fatal("OnConnect did not run")
	}
	if s.ListenerName != "L" {
		t.Fatalf("session listener %q", s.ListenerName)
	}
	s.Close()
	s.Close() // idempotent
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("want EOF after Session.Close, got %v", err)
	}
	(&Session{}).Close() // a Session no server owns: no-op
}
