package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersionStamped builds the binary as make build does, with -ldflags,
// and checks both spellings of the command print the stamped facts.
func TestVersionStamped(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "fluss-sidecar")
	const pkg = "github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	ldflags := "-X " + pkg + ".version=9.8.7-test -X " + pkg + ".commit=0123abcd -X " + pkg + ".buildTime=2026-12-01T04:00:00Z"
	build := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		for _, want := range []string{"fluss-sidecar 9.8.7-test\n", "commit: 0123abcd\n", "built: 2026-12-01T04:00:00Z\n", "go: " + runtime.Version() + "\n"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s printed %q, lacking %q", arg, out, want)
			}
		}
	}
}

func TestVersionCommand(t *testing.T) {
	tests := []struct {
		args     []string
		code     int
		stdout   string
		stderrIn string
	}{
		{[]string{"version"}, 0, "fluss-sidecar ", ""},
		{[]string{"--version"}, 0, "go: go", ""},
		{[]string{"version", "--help"}, 0, "usage: fluss-sidecar version", ""},
		{[]string{"version", "extra"}, 2, "", "unexpected argument"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := run(tt.args, &out, &errOut)
		if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderrIn) {
			t.Errorf("%v: code %d stdout %q stderr %q", tt.args, code, out.String(), errOut.String())
		}
	}
}
