package wire

import (
	"strings"
	"testing"
)

func TestClientSoftwareText(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"fluss", "fluss"},
		{"fluss-rust", "fluss-rust"},
		{"0.1.0", "0.1.0"},
		{"1.0.0+build:7/a_b", "1.0.0+build:7/a_b"},
		{"a b\"c\nd", "a_b_c_d"},
		{"fluss\x00", "fluss_"},
		{"é", "__"}, // two bytes of one character
		{long[:64], long[:64]},
		{long, long[:63] + "~"},
	} {
		if got := ClientSoftwareText(tt.in); got != tt.want {
			t.Errorf("ClientSoftwareText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSessionClientSoftware(t *testing.T) {
	var s Session
	if n, v := s.ClientSoftware(); n != "" || v != "" {
		t.Fatalf("before API_VERSIONS: %q %q", n, v)
	}
	s.SetClientSoftware("fluss rust", strings.Repeat("9", 200))
	if n, v := s.ClientSoftware(); n != "fluss_rust" || len(v) != MaxClientSoftware || !strings.HasSuffix(v, "~") {
		t.Fatalf("kept %q %q", n, v)
	}
}

// FuzzClientSoftwareText: whatever a client sends, the kept text is at most
// MaxClientSoftware bytes of the allowed set, and kept text is kept as is.
func FuzzClientSoftwareText(f *testing.F) {
	f.Add("fluss")
	f.Add("fluss-rust")
	f.Add("\xff\xfe\n\"")
	f.Add(strings.Repeat("ab", 50))
	f.Fuzz(func(t *testing.T, in string) {
		got := ClientSoftwareText(in)
		if len(got) > MaxClientSoftware {
			t.Fatalf("%d bytes", len(got))
		}
		for i := 0; i < len(got); i++ {
			if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-+:/~", rune(got[i])) {
				t.Fatalf("byte %q kept in %q", got[i], got)
			}
		}
		// "~" only ever marks a cut; text kept whole is kept as is.
		if strings.Contains(got[:max(len(got)-1, 0)], "~") {
			t.Fatalf("a ~ that is no cut mark in %q", got)
		}
		if !strings.HasSuffix(got, "~") && ClientSoftwareText(got) != got {
			t.Fatalf("not stable: %q", got)
		}
	})
}
