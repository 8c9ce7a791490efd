package zktest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// echoServer answers every line with the same line, on 127.0.0.1.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(c, c)
				c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// roundTrip sends one line through conn and reads the echo; the deadline
// only prevents a hang.
func roundTrip(conn net.Conn, line string) (string, error) {
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return "", err
	}
	if _, err := io.WriteString(conn, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(conn).ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func TestCutter(t *testing.T) {
	cut := NewCutter(t, echoServer(t))
	if host, _, _ := net.SplitHostPort(cut.Addr()); host != "127.0.0.1" {
		t.Fatalf("cutter listens on %s, want 127.0.0.1 only", cut.Addr())
	}

	before := dial(t, cut.Addr())
	if got, err := roundTrip(before, "one"); err != nil || got != "one" {
		t.Fatalf("forwarding: %q %v", got, err)
	}

	cut.Cut()
	// The open connection is dropped: the next read ends.
	if got, err := roundTrip(before, "two"); err == nil {
		t.Fatalf("connection survived the cut: %q", got)
	}
	// A new connection is accepted and closed at once.
	during := dial(t, cut.Addr())
	if got, err := roundTrip(during, "three"); err == nil {
		t.Fatalf("new connection forwarded while cut: %q", got)
	} else if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("new connection left hanging while cut: %v", err)
	}

	cut.Restore()
	after := dial(t, cut.Addr())
	if got, err := roundTrip(after, "four"); err != nil || got != "four" {
		t.Fatalf("after Restore: %q %v", got, err)
	}
}

func TestCutterRefusesRemoteTargets(t *testing.T) {
	cases := []struct {
		target string
		ok     bool
	}{
		{"127.0.0.1:2181", true},
		{"127.0.0.2:2181", true},
		{"[::1]:2181", true},
		{"localhost:2181", true},
		{"10.0.0.1:2181", false},
		{"zk.example:2181", false},
		{"127.0.0.1", false},
	}
	for _, c := range cases {
		if got := isLoopback(c.target); got != c.ok {
			t.Errorf("isLoopback(%q) = %v, want %v", c.target, got, c.ok)
		}
	}
}

// Held tells a test that a request sent during a stall is held, so that it
// can act while the request is known to be on its way and unanswered.
func TestCutterHeld(t *testing.T) {
	cut := NewCutter(t, echoServer(t))
	conn := dial(t, cut.Addr())
	if got, err := roundTrip(conn, "before"); err != nil || got != "before" {
		t.Fatalf("forwarding: %q %v", got, err)
	}
	if cut.Held() != nil {
		t.Fatal("Held is not nil without a stall")
	}
	cut.Stall()
	held := cut.Held()
	select {
	case <-held:
		t.Fatal("Held closed before anything was sent")
	default:
	}
	reply := make(chan string, 1)
	go func() {
		got, err := roundTrip(conn, "during")
		if err != nil {
			got = err.Error()
		}
		reply <- got
	}()
	// The timer only prevents a hang.
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the line sent during the stall was not held")
	}
	select {
	case got := <-reply:
		t.Fatalf("answered during the stall: %q", got)
	default:
	}
	cut.Resume()
	if got := <-reply; got != "during" {
		t.Fatalf("after Resume: %q", got)
	}
	if cut.Held() != nil {
		t.Fatal("Held is not nil after Resume")
	}
}
