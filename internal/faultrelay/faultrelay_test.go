package faultrelay

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestFaults: each fault does to an HTTP exchange what its comment says.
func TestFaults(t *testing.T) {
	var handled atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return // a cut request: not handled
		}
		handled.Add(1)
		w.Write([]byte(strings.Repeat("answer;", 100) + string(body)))
	}))
	defer srv.Close()
	r, err := Start(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	post := func(timeout time.Duration) (int, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", r.URL()+"/x", strings.NewReader(strings.Repeat("b", 300)))
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	want := strings.Repeat("answer;", 100) + strings.Repeat("b", 300)
	set := func(f Fault) {
		t.Helper()
		if err := r.Set(f); err != nil {
			t.Fatal(err)
		}
	}

	if code, body, err := post(10 * time.Second); err != nil || code != 200 || body != want {
		t.Fatalf("none: %d %q %v", code, body, err)
	}
	set(Refuse)
	if _, _, err := post(10 * time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("refuse: %v", err)
	}
	set(ResetRequest)
	before := handled.Load()
	if _, _, err := post(10 * time.Second); err == nil {
		t.Fatal("reset-request: no error")
	}
	set(ResetResponse)
	if _, _, err := post(10 * time.Second); err == nil {
		t.Fatal("reset-response: no error")
	}
	if got := handled.Load() - before; got != 1 {
		t.Fatalf("server handled %d requests under reset-request then reset-response, want 1 (the second)", got)
	}
	set(Stall)
	if _, _, err := post(200 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stall: %v", err)
	}
	set(Slow)
	if code, body, err := post(30 * time.Second); err != nil || code != 200 || body != want {
		t.Fatalf("slow: %d %q %v", code, body, err)
	}
	for _, f := range []Fault{HTTP500, HTTP503} {
		set(f)
		before := handled.Load()
		code, _, err := post(10 * time.Second)
		if err != nil || (f == HTTP500) != (code == 500) || (f == HTTP503) != (code == 503) || handled.Load() != before {
			t.Fatalf("%s: %d %v", f, code, err)
		}
	}
	set(None)
	if code, body, err := post(10 * time.Second); err != nil || code != 200 || body != want {
		t.Fatalf("none again: %d %q %v", code, body, err)
	}
	if r.Faulted() < 6 {
		t.Fatalf("faulted %d connections", r.Faulted())
	}
}
