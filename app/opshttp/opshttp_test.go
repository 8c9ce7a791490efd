package opshttp

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestParsePorts(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"9249", []int{9249}, ""},
		{" 9250-9253 ", []int{9250, 9251, 9252, 9253}, ""},
		{"9249,9300-9301", []int{9249, 9300, 9301}, ""},
		{"0", []int{0}, ""},
		{"", nil, "no port"},
		{"9260-9250", nil, "ends before it starts"},
		{"65536", nil, "outside"},
		{"-5", nil, "empty port"},
		{"92a", nil, "not a number"},
		{"1-", nil, "empty port"},
		{"+1", nil, "not a number"},
		{"1-65535,1-65535", nil, "more than"},
	}
	for _, tt := range tests {
		got, err := ParsePorts(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("%q: %v %v, want %v", tt.in, got, err, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%q: %v, want %v", tt.in, got, tt.want)
			}
		}
	}
}

func FuzzParsePorts(f *testing.F) {
	for _, s := range []string{"9249", "9250-9260", "1,2-3", "", "-", "65535-0", "0-65535"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ports, err := ParsePorts(s)
		if err != nil {
			return
		}
		if len(ports) == 0 || len(ports) > maxPorts {
			t.Fatalf("%q: %d ports", s, len(ports))
		}
		for _, p := range ports {
			if p < 0 || p > 65535 {
				t.Fatalf("%q: port %d", s, p)
			}
		}
	})
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 20 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEndpoints: the first free port of the range is bound; /readyz says
// what is missing with 503 until nothing is, and lists warnings without
// changing its status; pprof only when enabled.
func TestEndpoints(t *testing.T) {
	// Take a port, then offer it first in the range: the next one is used.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	busy := taken.Addr().(*net.TCPAddr).Port
	var ready, warn atomic.Bool
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "fluss_sidecar_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	for _, pprofOn := range []bool{false, true} {
		s, err := Start(Config{
			Host: "127.0.0.1", Ports: []int{busy, 0}, Gatherer: reg, Pprof: pprofOn,
			Ready: func() []string {
				if ready.Load() {
					return nil
				}
				return []string{"zookeeper: no session"}
			},
			Warnings: func() []string {
				if warn.Load() {
					return []string{"proxy: clients are sent around the sidecar"}
				}
				return nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(s.Addr(), ":"+strconv.Itoa(busy)) {
			t.Fatalf("bound the busy port %s", s.Addr())
		}
		base := "http://" + s.Addr()
		if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
			t.Errorf("healthz %d %q", code, body)
		}
		ready.Store(false)
		code, body := get(t, base+"/readyz")
		var r readiness
		if err := json.Unmarshal([]byte(body), &r); err != nil || code != 503 || r.Ready || len(r.Missing) != 1 || r.Missing[0] != "zookeeper: no session" {
			t.Errorf("readyz while not ready: %d %q %v", code, body, err)
		}
		ready.Store(true)
		if code, body := get(t, base+"/readyz"); code != 200 || strings.TrimSpace(body) != `{"ready":true}` {
			t.Errorf("readyz when ready: %d %q", code, body)
		}
		warn.Store(true)
		if code, body := get(t, base+"/readyz"); code != 200 || strings.TrimSpace(body) != `{"ready":true,"warnings":["proxy: clients are sent around the sidecar"]}` {
			t.Errorf("readyz when ready with a warning: %d %q", code, body)
		}
		ready.Store(false)
		code, body = get(t, base+"/readyz")
		r = readiness{}
		if err := json.Unmarshal([]byte(body), &r); err != nil || code != 503 || r.Ready || len(r.Missing) != 1 || len(r.Warnings) != 1 {
			t.Errorf("readyz while not ready with a warning: %d %q %v", code, body, err)
		}
		ready.Store(true)
		warn.Store(false)
		if code, body := get(t, base+"/metrics"); code != 200 || !strings.Contains(body, "fluss_sidecar_test_total 3") {
			t.Errorf("metrics %d %q", code, body)
		}
		code, _ = get(t, base+"/debug/pprof/cmdline")
		if (code == 200) != pprofOn {
			t.Errorf("pprof %v: /debug/pprof/cmdline answered %d", pprofOn, code)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		if err := s.Close(ctx); err != nil {
			t.Error(err)
		}
		cancel()
	}
}

func TestNoFreePort(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	busy := taken.Addr().(*net.TCPAddr).Port
	_, err = Start(Config{Host: "127.0.0.1", Ports: []int{busy}, Gatherer: prometheus.NewRegistry()})
	if err == nil || !strings.Contains(err.Error(), "no free port") {
		t.Fatalf("err %v", err)
	}
}
