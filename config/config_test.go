package config

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"24h", 24 * time.Hour, false},
		{"1 h", time.Hour, false},
		{"60 s", time.Minute, false},
		{"100ms", 100 * time.Millisecond, false},
		{"1min", time.Minute, false},
		{"2 d", 48 * time.Hour, false},
		{"500", 500 * time.Millisecond, false},
		{"0", 0, false},
		{"-1s", -time.Second, false},
		{"10 weeks", 0, true},
		{"h", 0, true},
		{"", 0, true},
		{"99999999999999d", 0, true},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		if c.bad != (err != nil) || got != c.want {
			t.Errorf("ParseDuration(%q) = %v, %v", c.in, got, err)
		}
	}
}

func TestParseMemorySize(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"100mb", 104857600, false},
		{"64 kb", 65536, false},
		{"1024", 1024, false},
		{"1g", 1 << 30, false},
		{"-1", 0, true},
		{"5 zb", 0, true},
	}
	for _, c := range cases {
		got, err := ParseMemorySize(c.in)
		if c.bad != (err != nil) || got != c.want {
			t.Errorf("ParseMemorySize(%q) = %v, %v", c.in, got, err)
		}
	}
}

func TestParseListeners(t *testing.T) {
	ls, err := ParseListeners("INTERNAL://10.0.0.5:9123, CLIENT://[::1]:9124")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0] != (Listener{"INTERNAL", "10.0.0.5", 9123}) || ls[1] != (Listener{"CLIENT", "::1", 9124}) {
		t.Fatalf("%+v", ls)
	}
	for _, good := range []string{"A://:9123", "A://[fe80::1%eth0]:1", "A://fe80::1:1", "A://my_host-1.example:1"} {
		if _, err := ParseListeners(good); err != nil {
			t.Errorf("ParseListeners(%q): %v", good, err)
		}
	}
	if ls[1].Address() != "[::1]:9124" || FormatListeners(ls) != "INTERNAL://10.0.0.5:9123,CLIENT://[::1]:9124" {
		t.Fatal(ls[1].Address(), FormatListeners(ls))
	}
	for _, bad := range []string{"", "host:9123", "A://h", "A://h:x", "A://h:1,A://h:2", "A://h:70000",
		"A:///[:1", "A://[h]]:1", "A://h h:1", "A://h/x:1", "A://[[::1]]:1"} {
		if _, err := ParseListeners(bad); err == nil {
			t.Errorf("ParseListeners(%q) accepted", bad)
		}
	}
}

func TestParseYAMLAndOverrides(t *testing.T) {
	c, err := Parse([]byte(`
# a Fluss server.yaml
zookeeper.address: 127.0.0.1:2181
zookeeper:
  path.root: /custom
remote.data.dir: /tmp/fluss-remote-data
coordinator.producer-offsets.ttl: 1 h
netty.server.max-request-size: 100mb
super.users: User:admin;User:bob
authorizer.enabled: true
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyOverride("-Dzookeeper.address=127.0.0.1:2182"); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyOverride("-Dnope"); err == nil {
		t.Fatal("override without = accepted")
	}
	if got := c.String("zookeeper.address", ""); got != "127.0.0.1:2182" {
		t.Errorf("override lost: %q", got)
	}
	if got := c.String("zookeeper.path.root", "/fluss"); got != "/custom" {
		t.Errorf("nested key: %q", got)
	}
	if d, _ := c.Duration("coordinator.producer-offsets.ttl", 0); d != time.Hour {
		t.Errorf("ttl %v", d)
	}
	if n, _ := c.MemorySize("netty.server.max-request-size", 0); n != 104857600 {
		t.Errorf("size %d", n)
	}
	if b, _ := c.Bool("authorizer.enabled", false); !b {
		t.Error("bool")
	}
	if got := c.String("missing", "def"); got != "def" {
		t.Error(got)
	}
	if _, err := Parse([]byte("a: [unclosed")); err == nil {
		t.Error("bad yaml accepted")
	}
}
