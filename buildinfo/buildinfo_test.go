package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name     string
		v, c, bt string
		bi       *debug.BuildInfo
		want     Info
	}{
		{"stamped wins", "0.3.0", "deadbeef", "2026-11-30T10:00:00Z", vcs,
			Info{"0.3.0", "deadbeef", "2026-11-30T10:00:00Z", "go1.99"}},
		{"vcs fallback", "", "", "", vcs,
			Info{"v1.2.3", "abc123-dirty", "2026-12-01T00:00:00Z", "go1.99"}},
		{"devel module", "", "", "", &debug.BuildInfo{GoVersion: "go1.98", Main: debug.Module{Version: "(devel)"}},
			Info{"dev", Unknown, Unknown, "go1.98"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolve(tt.v, tt.c, tt.bt, tt.bi); got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := resolve("", "", "", nil); got.Version != "dev" || got.GoVersion == "" {
		t.Fatalf("no build info: %+v", got)
	}
}

func TestString(t *testing.T) {
	s := Info{"1.0", "c0ffee", "2026-12-01T00:00:00Z", "go1.26"}.String()
	for _, want := range []string{"fluss-sidecar 1.0\n", "commit: c0ffee\n", "built: 2026-12-01T00:00:00Z\n", "go: go1.26\n"} {
		if !strings.Contains(s, want) {
			t.Fatalf("%q lacks %q", s, want)
		}
	}
}
