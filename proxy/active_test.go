package proxy

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestDecodeActiveCoordinator(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		json     string
		listener string
		want     string
		wantID   string
		wantErr  string
	}{
		{name: "v2 named", json: `{"version":2,"id":"1","listeners":"CLIENT://10.0.0.1:9124,FLUSS://10.0.0.1:9123"}`,
			listener: "FLUSS", want: "10.0.0.1:9123", wantID: "1"},
		{name: "v2 name case-insensitive", json: `{"version":2,"id":"1","listeners":"CLIENT://h:9124"}`,
			listener: "client", want: "h:9124", wantID: "1"},
		{name: "v2 first by default", json: `{"version":2,"id":"0","listeners":"CLIENT://h1:1,FLUSS://h2:2"}`,
			want: "h1:1", wantID: "0"},
		{name: "v2 ipv6", json: `{"version":2,"id":"2","listeners":"CLIENT://[::1]:9124"}`,
			listener: "CLIENT", want: "[::1]:9124", wantID: "2"},
		{name: "v1 host port, numeric id", json: `{"version":1,"id":3,"host":"c1","port":9123}`,
			listener: "ANY", want: "c1:9123", wantID: "3"},
		{name: "v2 missing listener", json: `{"version":2,"id":"1","listeners":"CLIENT://h:1"}`,
			listener: "INTERNAL", wantErr: `no listener "INTERNAL" (it has CLIENT)`},
		{name: "v2 without listeners", json: `{"version":2,"id":"1","host":"h","port":1}`, wantErr: "needs listeners"},
		{name: "v1 without port", json: `{"version":1,"host":"h"}`, wantErr: "needs host and port"},
		{name: "v1 bad port", json: `{"version":1,"host":"h","port":70000}`, wantErr: "invalid address"},
		{name: "unknown version", json: `{"version":3,"listeners":"CLIENT://h:1"}`, wantErr: "unsupported version 3"},
		{name: "no version", json: `{"listeners":"CLIENT://h:1"}`, wantErr: "no version"},
		{name: "not json", json: `CLIENT://h:1`, wantErr: "not valid JSON"},
		{name: "trailing data", json: `{"version":1,"host":"h","port":1} {}`, wantErr: "data after"},
		{name: "bad listeners", json: `{"version":2,"listeners":"h:1"}`, wantErr: "invalid listeners"},
		{name: "bracket in host", json: `{"version":2,"listeners":"A:///[:1"}`, wantErr: "invalid listeners"},
		{name: "port zero", json: `{"version":2,"listeners":"CLIENT://h:0"}`, wantErr: "invalid address"},
		{name: "bad id", json: `{"version":1,"id":[1],"host":"h","port":1}`, wantErr: "neither a string nor a number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := DecodeActiveCoordinator([]byte(tt.json))
			var got string
			if err == nil {
				got, err = a.Address(tt.listener)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || a.ID != tt.wantID {
				t.Fatalf("got %s id %q, want %s id %q", got, a.ID, tt.want, tt.wantID)
			}
		})
	}
}

func FuzzDecodeActiveCoordinator(f *testing.F) {
	f.Add([]byte(`{"version":2,"id":"1","listeners":"CLIENT://10.0.0.1:9124,FLUSS://10.0.0.1:9123"}`), "FLUSS")
	f.Add([]byte(`{"version":1,"id":3,"host":"c1","port":9123}`), "")
	f.Add([]byte(`{"version":2,"listeners":"A://[::1]:1"}`), "A")
	f.Add([]byte(`{"version":2,"listeners":"A:///[:1"}`), "A")
	f.Fuzz(func(t *testing.T, data []byte, listener string) {
		a, err := DecodeActiveCoordinator(data)
		if err != nil {
			return
		}
		if len(a.Listeners) == 0 {
			t.Fatal("decoded without listeners")
		}
		addr, err := a.Address(listener)
		if err != nil {
			return
		}
		if _, _, err := splitAddr(addr); err != nil {
			t.Fatalf("address %q does not split: %v", addr, err)
		}
	})
}

func TestIsSelf(t *testing.T) {
	t.Parallel()
	lookup := func(_ context.Context, host string) ([]string, error) {
		switch host {
		case "localhost":
			return []string{"127.0.0.1", "::1"}, nil
		case "me.example":
			return []string{"10.1.2.3"}, nil
		case "other.example":
			return []string{"10.9.9.9"}, nil
		}
		return nil, errors.New("no such host")
	}
	local := func() []netip.Addr {
		return []netip.Addr{netip.MustParseAddr("10.1.2.3"), netip.MustParseAddr("127.0.0.1")}
	}
	tests := []struct {
		name     string
		self     []string
		upstream string
		want     bool
	}{
		{"identical", []string{"127.0.0.1:9123"}, "127.0.0.1:9123", true},
		{"other port", []string{"127.0.0.1:9123"}, "127.0.0.1:9124", false},
		{"localhost vs loopback", []string{"127.0.0.1:9123"}, "localhost:9123", true},
		{"any loopback is this host", []string{"127.0.0.2:9123"}, "[::1]:9123", true},
		{"bound on all, upstream local ip", []string{"0.0.0.0:9123"}, "10.1.2.3:9123", true},
		{"bound on all, upstream by name", []string{"[::]:9123"}, "me.example:9123", true},
		{"bound on all, remote upstream", []string{"0.0.0.0:9123"}, "other.example:9123", false},
		{"advertised name", []string{"127.0.0.1:9000", "me.example:9123"}, "10.1.2.3:9123", true},
		{"remote coordinator", []string{"me.example:9123"}, "other.example:9123", false},
		{"unresolvable", []string{"me.example:9123"}, "nowhere:9123", false},
		{"no self addresses", nil, "127.0.0.1:9123", false},
		{"malformed upstream", []string{"127.0.0.1:9123"}, "127.0.0.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := selfCheck{self: tt.self, lookup: lookup, localIPs: local}
			if got := c.isSelf(context.Background(), tt.upstream); got != tt.want {
				t.Fatalf("isSelf(%s) with self %v = %v, want %v", tt.upstream, tt.self, got, tt.want)
			}
		})
	}
}
