// Package buildinfo says which build of the sidecar is running: version,
// commit and build time, stamped by `make build` through -ldflags, with the
// module and VCS facts the Go toolchain records as the fallback.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Stamped by the linker: make build passes
// -X github.com/fluss-sidecar/fluss-sidecar/buildinfo.version=... and the
// same for commit and buildTime. They are build-time constants, never
// written at run time.
var (
	version   string
	commit    string
	buildTime string
)

// Info describes one build.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildTime string `json:"build_time"`
	GoVersion string `json:"go_version"`
}

// Unknown fills a field nothing recorded.
const Unknown = "unknown"

// Get returns the running binary's build facts: the stamped values, else
// what runtime/debug.ReadBuildInfo recorded (module version, vcs.revision,
// vcs.time), else Unknown ("dev" for the version).
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return resolve(version, commit, buildTime, bi)
}

func resolve(v, c, t string, bi *debug.BuildInfo) Info {
	info := Info{Version: v, Commit: c, BuildTime: t, GoVersion: runtime.Version()}
	if bi != nil {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		modified := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.Commit == "" {
					info.Commit = s.Value
				}
			case "vcs.time":
				if info.BuildTime == "" {
					info.BuildTime = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && c == "" && info.Commit != "" {
			info.Commit += "-dirty"
		}
		if bi.GoVersion != "" {
			info.GoVersion = bi.GoVersion
		}
	}
	if info.Version == "" {
		info.Version = "dev"
	}
	if info.Commit == "" {
		info.Commit = Unknown
	}
	if info.BuildTime == "" {
		info.BuildTime = Unknown
	}
	return info
}

// String is the text `fluss-sidecar version` prints.
func (i Info) String() string {
	return fmt.Sprintf("fluss-sidecar %s\ncommit: %s\nbuilt: %s\ngo: %s\n", i.Version, i.Commit, i.BuildTime, i.GoVersion)
}
