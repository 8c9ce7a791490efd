package flusserr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidUTF8(t *testing.T) {
	t.Parallel()
	const r = "\uFFFD"
	for _, tt := range []struct{ name, in, want string }{
		{"valid", "héllo €", "héllo €"},
		{"literal replacement char kept", r, r},
		{"lone 0xFF", "a\xffb", "a" + r + "b"},
		{"lone continuation bytes", "\x80\x80", r + r},
		{"truncated 3-byte sequence is one subpart", "\xe2\x82z", r + "z"},
		{"truncated 4-byte sequence is one subpart", "\xf0\x9f\x98", r},
		{"surrogate: ED A0 is never valid", "\xed\xa0\x80", r + r + r},
		{"overlong C0 AF", "\xc0\xaf", r + r},
		{"F4 above U+10FFFF", "\xf4\x90\x80\x80", r + r + r + r},
		{"lead byte at the end", "ok\xe2", "ok" + r},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidUTF8(tt.in)
			if got != tt.want || !utf8.ValidString(got) {
				t.Fatalf("ValidUTF8(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEcho(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, in, want string }{
		{"short", "job-1", "job-1"},
		{"exactly the limit", strings.Repeat("a", MaxEcho), strings.Repeat("a", MaxEcho)},
		{"one over", strings.Repeat("a", MaxEcho+1), strings.Repeat("a", MaxEcho) + "... (257 bytes in all)"},
		{"multibyte counted as characters", strings.Repeat("é", 300), strings.Repeat("é", MaxEcho) + "... (600 bytes in all)"},
		{"invalid bytes replaced", "a\xffb", "a\uFFFDb"},
		{"48 MiB", strings.Repeat("x", 48<<20), strings.Repeat("x", MaxEcho) + "... (50331648 bytes in all)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Echo(tt.in); got != tt.want {
				t.Fatalf("Echo = %.80q... (%d bytes), want %.80q... (%d bytes)", got, len(got), tt.want, len(tt.want))
			}
		})
	}
}

func FuzzValidUTF8(f *testing.F) {
	for _, s := range []string{"", "a\xffb", "\xe2\x82", "\xf0\x9f\x98\x80", "\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := ValidUTF8(s)
		if !utf8.ValidString(got) {
			t.Fatalf("ValidUTF8(%q) = %q is not valid", s, got)
		}
		if utf8.ValidString(s) && got != s {
			t.Fatalf("valid input changed: %q -> %q", s, got)
		}
		if e := Echo(s); !utf8.ValidString(e) || utf8.RuneCountInString(e) > MaxEcho+40 {
			t.Fatalf("Echo(%q) = %q", s, e)
		}
	})
}
