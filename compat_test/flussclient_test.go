package compat_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
)

// flussClient is Fluss's released Java client (compat_test/flussclient),
// compiled for one test.
type flussClient struct {
	classpath string
}

// buildFlussClient compiles compat_test/flussclient/FlussClientScenario.java
// against the client jars scripts/resolve-maven.sh resolved.
func buildFlussClient(t *testing.T) *flussClient {
	t.Helper()
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	jars, err := flusstest.MavenClasspath(root, "flussclient")
	if err != nil {
		t.Fatal(err)
	}
	classes := t.TempDir()
	src := filepath.Join(root, "compat_test", "flussclient", "FlussClientScenario.java")
	if out, err := exec.CommandContext(t.Context(), "javac", "-cp", jars, "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac FlussClientScenario: %v\n%s", err, out)
	}
	return &flussClient{classpath: classes + string(filepath.ListSeparator) + jars}
}

// clientRun is what one run of the scenario program printed.
type clientRun struct {
	stdout, stderr string
	passed         bool // RESULT PASS and exit status 0
}

// line returns the report line of step ("PASS <step> ..." or "FAIL <step> ..."),
// or "" when the run has none.
func (r clientRun) line(step string) string {
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[1] == step {
			return l
		}
	}
	return ""
}

// run runs the scenarios against bootstrap, logged in as user (with the
// rig's password) when user is not "".
func (c *flussClient) run(t *testing.T, bootstrap, user string, args ...string) clientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	argv := []string{"--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", c.classpath, "FlussClientScenario", "--bootstrap", bootstrap, "--timeout", "60"}
	if user != "" {
		argv = append(argv, "--user", user, "--password", proxyUsers[user])
	}
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, "java", argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := clientRun{stdout: stdout.String(), stderr: stderr.String()}
	r.passed = err == nil && strings.Contains(r.stdout, "RESULT PASS")
	return r
}
