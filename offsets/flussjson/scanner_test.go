package flussjson

import "testing"

func TestScanner(t *testing.T) {
	t.Parallel()
	ints := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-1", -1, true}, {"1735538268000", 1735538268000, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"9223372036854775808", 0, false}, // overflows
		{"01", 0, false}, {"-", 0, false}, {"1.5", 0, false}, {"1e3", 0, false}, {"", 0, false},
	}
	for _, c := range ints {
		p := scanner{B: []byte(c.in)}
		got, ok := p.Int()
		if ok != c.ok || (ok && (got != c.want || !p.End())) {
			t.Errorf("Int(%q) = %d, %v", c.in, got, ok)
		}
	}
	strs := []struct {
		in, want string
		ok       bool
	}{
		{`"file:/x/1.offsets"`, "file:/x/1.offsets", true},
		{`""`, "", true},
		{`"a\"b"`, "", false},    // escapes take the slow path
		{"\"a\x01\"", "", false}, // control characters too
		{"\"\xff\"", "", false},  // invalid UTF-8
		{`"open`, "", false},
	}
	for _, c := range strs {
		p := scanner{B: []byte(c.in)}
		got, ok := p.Str()
		if ok != c.ok || got != c.want {
			t.Errorf("Str(%q) = %q, %v", c.in, got, ok)
		}
	}
	p := scanner{B: []byte(`{"a":1}`)}
	if !p.Lit(`{"a":`) || p.Lit(`}`) {
		t.Fatal("Lit")
	}
	if v, ok := p.Int(); !ok || v != 1 || !p.Lit("}") || !p.End() {
		t.Fatal("sequence")
	}
}
