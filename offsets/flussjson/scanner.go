package flussjson

import (
	"strconv"
	"unicode/utf8"
)

// scanner reads the compact, canonical JSON that Fluss's coordinator and
// the sidecar write (no whitespace, plain integers, strings without
// escapes), token by token from B at offset I, without reflection or
// allocations beyond the strings it returns. The decoders use it as a fast
// path and fall back to encoding/json for anything else.
type scanner struct {
	B []byte
	I int
}

// Lit consumes s if the input continues with it.
func (p *scanner) Lit(s string) bool {
	if len(p.B)-p.I >= len(s) && string(p.B[p.I:p.I+len(s)]) == s {
		p.I += len(s)
		return true
	}
	return false
}

// End reports whether the whole input was read.
func (p *scanner) End() bool { return p.I == len(p.B) }

// Int reads -?(0|[1-9][0-9]*) that fits an int64.
func (p *scanner) Int() (int64, bool) {
	start := p.I
	if p.I < len(p.B) && p.B[p.I] == '-' {
		p.I++
	}
	digits := p.I
	for p.I < len(p.B) && '0' <= p.B[p.I] && p.B[p.I] <= '9' {
		p.I++
	}
	if p.I == digits || (p.B[digits] == '0' && p.I-digits > 1) {
		return 0, false
	}
	if p.I < len(p.B) && (p.B[p.I] == '.' || p.B[p.I] == 'e' || p.B[p.I] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(p.B[start:p.I]), 10, 64)
	return v, err == nil
}

// Str reads a string without escapes or control characters, in valid UTF-8.
func (p *scanner) Str() (string, bool) {
	if !p.Lit(`"`) {
		return "", false
	}
	start := p.I
	for p.I < len(p.B) {
		c := p.B[p.I]
		switch {
		case c == '"':
			s := p.B[start:p.I]
			p.I++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.I++
	}
	return "", false
}
