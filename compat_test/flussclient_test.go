package compat_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	compat "github.com/fluss-sidecar/fluss-sidecar/compat_test"
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
	compat.SkipIfShort(t)
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

// clientRun is what one run of a client's scenario program printed.
type clientRun struct {
	stdout, stderr string
	exit           int  // the exit status; -1 when a signal ended it
	passed         bool // RESULT PASS and exit status 0
}

// runProgram runs one client's scenario program (name for the log; argv
// the command and its arguments, args the scenario's, logged), bounded by
// timeout. It fails the test only when the program cannot be run.
func runProgram(t *testing.T, name string, timeout time.Duration, argv []string, args ...string) clientRun {
	t.Helper()
	start := time.Now()
	r := runProgramQuietly(t, name, timeout, argv, args...)
	t.Logf("%s %s ran %v:\n%s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond), r.stdout)
	return r
}

// runProgramQuietly is runProgram without the log line, for a wait that
// runs a program many times and reports only the last run.
func runProgramQuietly(t *testing.T, name string, timeout time.Duration, argv []string, args ...string) clientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := clientRun{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		r.exit = exit.ExitCode()
	default:
		t.Fatalf("%s: %v", name, err)
	}
	r.passed = r.exit == 0 && strings.Contains(r.stdout, "\nRESULT PASS\n")
	return r
}

// resolved is a path a script of scripts/ prints once it has installed or
// built what it names, found once per test binary.
type resolved struct {
	once sync.Once
	path string
	err  error
}

// get runs the script (a name under scripts/) the first time, bounded by
// timeout, and returns the path it printed.
func (r *resolved) get(t *testing.T, script string, timeout time.Duration) string {
	t.Helper()
	compat.SkipIfShort(t)
	r.once.Do(func() {
		root, err := flusstest.RepoRoot()
		if err != nil {
			r.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", script))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			r.err = fmt.Errorf("scripts/%s: %v\n%s", script, err, stderr.String())
			return
		}
		r.path = strings.TrimSpace(stdout.String())
		if _, err := os.Stat(r.path); err != nil {
			r.err = fmt.Errorf("scripts/%s printed %q: %v", script, r.path, err)
		}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.path
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
	argv := []string{"java", "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", c.classpath, "FlussClientScenario", "--bootstrap", bootstrap, "--timeout", "60"}
	if user != "" {
		argv = append(argv, "--user", user, "--password", proxyUsers[user])
	}
	return runProgram(t, "FlussClientScenario", 5*time.Minute, argv, args...)
}
