package flusstest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Release is a released Fluss version whose servers the kit can run.
type Release struct {
	// Name is the folder of its build file (maven/<Name>/pom.xml) and of
	// its resolved jars (.deps/maven/<Name>/lib).
	Name string
	// Version is the Maven version of its fluss-server artifact.
	Version string
	// Package is the root of its Java packages: the main classes and the
	// SASL login module live under it.
	Package string
	// HasRegistry says whether its coordinator serves the producer-offsets
	// API (keys 1053-1055).
	HasRegistry bool
}

var (
	// Fluss091 is org.apache.fluss:fluss-server:0.9.1-incubating, whose
	// coordinator keeps the producer-offsets registry.
	Fluss091 = Release{Name: "fluss-0.9.1", Version: "0.9.1-incubating", Package: "org.apache.fluss", HasRegistry: true}
	// Fluss070 is com.alibaba.fluss:fluss-server:0.7.0: the newest release
	// on Maven Central whose coordinator lacks the registry
	// (org.apache.fluss:fluss-server:0.8.0-incubating is not served there).
	Fluss070 = Release{Name: "fluss-0.7.0", Version: "0.7.0", Package: "com.alibaba.fluss"}
)

// ErrNotResolved means a release's jars are not in .deps/maven: run
// scripts/resolve-maven.sh (make test-deps does).
var ErrNotResolved = errors.New("flusstest: release not resolved")

// coordinatorMain and tabletMain are the servers' main classes.
func (r Release) coordinatorMain() string { return r.Package + ".server.coordinator.CoordinatorServer" }
func (r Release) tabletMain() string      { return r.Package + ".server.tablet.TabletServer" }

// loginModule is the class a server's JAAS config names for SASL/PLAIN.
func (r Release) loginModule() string {
	return r.Package + ".security.auth.sasl.plain.PlainLoginModule"
}

// Classpath returns the release's resolved jars as a java -cp value
// ("<dir>/*"), or an error wrapping ErrNotResolved.
func (r Release) Classpath() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return MavenClasspath(root, r.Name)
}

// MavenClasspath returns the jars scripts/resolve-maven.sh copied for the
// build file folder name (.deps/maven/<name>/lib under the repository root
// root) as a java -cp value, or an error wrapping ErrNotResolved.
func MavenClasspath(root, name string) (string, error) {
	lib := filepath.Join(root, ".deps", "maven", name, "lib")
	jars, _ := filepath.Glob(filepath.Join(lib, "*.jar"))
	if len(jars) == 0 {
		return "", fmt.Errorf("%w: no jars in %s (run scripts/resolve-maven.sh, or make test-deps)", ErrNotResolved, lib)
	}
	return filepath.Join(lib, "*"), nil
}

// RepoRoot is the folder holding the repository's go.mod, found from this
// source file's place (tests run in their package's folder, benchmarks too).
func RepoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("flusstest: cannot locate the repository")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("flusstest: no go.mod above " + filepath.Dir(file))
		}
		dir = parent
	}
}
