package flusserr

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxEcho is how many characters of a client's input an error message
// repeats; the rest is replaced by the input's full length.
const MaxEcho = 256

// Echo returns client input for quoting in an error message: valid UTF-8
// (see ValidUTF8) and at most MaxEcho characters, followed by
// "... (N bytes in all)" when it was longer, so that a huge invalid value
// does not make a huge answer.
func Echo(s string) string {
	if utf8.RuneCountInString(s) <= MaxEcho {
		return ValidUTF8(s)
	}
	cut, n := 0, 0
	for cut < len(s) && n < MaxEcho {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		n++
	}
	return ValidUTF8(s[:cut]) + fmt.Sprintf("... (%d bytes in all)", len(s))
}

// ValidUTF8 returns s with every ill-formed UTF-8 sequence replaced by
// U+FFFD, one replacement per maximal ill-formed subpart (the Unicode
// recommendation, which Java's UTF-8 decoder follows): what a Fluss client
// decoding the bytes as a string would show. Protobuf string fields must
// hold valid UTF-8; strict decoders reject anything else.
func ValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size > 1 {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		b.WriteRune(utf8.RuneError)
		i += illFormedLen(s[i:])
	}
	return b.String()
}

// illFormedLen is the length of the maximal ill-formed subpart at the start
// of s: the lead byte and the continuation bytes that could still have
// begun a valid sequence.
func illFormedLen(s string) int {
	need, lo, hi := 0, byte(0x80), byte(0xBF)
	switch c := s[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 2
	case c == 0xE0:
		need, lo = 3, 0xA0
	case c == 0xED:
		need, hi = 3, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 3
	case c == 0xF0:
		need, lo = 4, 0x90
	case c == 0xF4:
		need, hi = 4, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 4
	default:
		return 1
	}
	n := 1
	if n < len(s) && s[n] >= lo && s[n] <= hi {
		n++
		for n < need && n < len(s) && s[n] >= 0x80 && s[n] <= 0xBF {
			n++
		}
	}
	return min(n, need-1)
}
