package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// TestSplitList holds SplitList to the way Fluss splits a list option
// written as one string (StructuredOptionsSplitter with ','), the cases of
// its own tests among them.
func TestSplitList(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want []string
		err  string // substring of the error; "" when it splits
	}{
		{in: "", want: nil},
		{in: "   ", want: nil},
		{in: ",", want: nil},
		{in: "s3://a/fluss", want: []string{"s3://a/fluss"}},
		{in: "s3://a/fluss,s3://b/fluss", want: []string{"s3://a/fluss", "s3://b/fluss"}},
		{in: "  s3://a/fluss ,\ts3://b/fluss  ", want: []string{"s3://a/fluss", "s3://b/fluss"}},
		{in: "a,", want: []string{"a"}},
		{in: ",a", want: []string{"a"}},
		{in: "a,,b", want: []string{"a", "", "b"}},
		{in: "a, ,b", want: []string{"a", "", "b"}},
		{in: ",,a", want: []string{"", "a"}},
		{in: "a,,", want: []string{"a", ""}},
		{in: ",,", want: []string{""}},
		{in: "'A,B',C", want: []string{"A,B", "C"}},
		{in: `"A,B","C"`, want: []string{"A,B", "C"}},
		{in: "'AB''D,B',C", want: []string{"AB'D,B", "C"}},
		{in: `"AB""D,B",C`, want: []string{`AB"D,B`, "C"}},
		{in: "A'BD,B',C", want: []string{"A'BD", "B'", "C"}},
		{in: `'AB"''D,B',C`, want: []string{`AB"'D,B`, "C"}},
		{in: "   'A,B'    ,   C   ", want: []string{"A,B", "C"}},
		{in: "'A,B'    ,C A", want: []string{"A,B", "C A"}},
		{in: "' A    ,B'    ,'   C'", want: []string{" A    ,B", "   C"}},
		{in: "'',a", want: []string{"", "a"}},
		{in: "'AB'D,B,C", err: "text after the quoted item at offset 0"},
		{in: "'a' 'b'", err: "text after the quoted item"},
		{in: "'A", err: "not closed"},
		{in: `C,"`, err: "the quote at offset 2 is not closed"},
	} {
		got, err := SplitList(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("SplitList(%q) = %q, %v; want an error containing %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SplitList(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzSplitList: whatever a value splits into, quoting every item again
// (a quote doubled inside) and joining them with ',' splits into the same
// items.
func FuzzSplitList(f *testing.F) {
	for _, s := range []string{"a,b", "'A,B',C", `"x""y",,z`, ",,", " a , 'b' ", "'unclosed", "é, ,\u00a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		items, err := SplitList(s)
		if err != nil {
			return
		}
		quoted := make([]string, len(items))
		for i, it := range items {
			quoted[i] = "'" + strings.ReplaceAll(it, "'", "''") + "'"
		}
		again, err := SplitList(strings.Join(quoted, ","))
		if err != nil || !slices.Equal(again, items) {
			t.Fatalf("%q split into %q, which quoted and joined splits into %q, %v", s, items, again, err)
		}
	})
}

// TestFromSequence: a YAML sequence is kept joined with ",", and the
// Config remembers which keys were one, through Merge too; setting the key
// again forgets it.
func TestFromSequence(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(`
remote.data.dirs:
  - s3://a/fluss
  - s3://b/fluss
remote:
  data.dirs.weights: [1, 2]
remote.data.dir: s3://a/fluss
bind.listeners: FLUSS://127.0.0.1:9123
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String("remote.data.dirs", ""); got != "s3://a/fluss,s3://b/fluss" {
		t.Errorf("block sequence joined as %q", got)
	}
	if got := c.String("remote.data.dirs.weights", ""); got != "1,2" {
		t.Errorf("flow sequence joined as %q", got)
	}
	for key, want := range map[string]bool{"remote.data.dirs": true, "remote.data.dirs.weights": true,
		"remote.data.dir": false, "bind.listeners": false, "missing": false} {
		if c.FromSequence(key) != want {
			t.Errorf("FromSequence(%q) = %v, want %v", key, !want, want)
		}
	}
	merged := New()
	merged.Set("remote.data.dirs.weights", "3")
	merged.Merge(c)
	if !merged.FromSequence("remote.data.dirs") || !merged.FromSequence("remote.data.dirs.weights") || merged.FromSequence("remote.data.dir") {
		t.Error("Merge lost or invented a sequence")
	}
	c.Set("remote.data.dirs", "s3://a/fluss")
	if err := c.ApplyOverride("-Dremote.data.dirs.weights=1,2"); err != nil {
		t.Fatal(err)
	}
	if c.FromSequence("remote.data.dirs") || c.FromSequence("remote.data.dirs.weights") {
		t.Error("a key set again is still a sequence")
	}
}
