package compat_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	compat "github.com/fluss-sidecar/fluss-sidecar/compat_test"
	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The embedded sidecar's control API driven from Python, a process that is
// neither Go nor the sidecar: compat_test/python/control_client.py talks to
// `fluss-sidecar serve --embedded --control` with urllib alone. Which
// Fluss client meets the server in each scenario, and why:
//
//   - pyfluss 1.0.0 (the venv of scripts/resolve-pip.sh) for what it sends
//     to an embedded sidecar, API_VERSIONS and GET_METADATA: its own retry
//     of a 25 (a new connection, up to 4 tries), no retry of a -1, and a
//     stall longer than its caller's timeout (pyfluss has none).
//   - the raw-protocol client of compat_test/python/compat_client.py (Debian's
//     python3-protobuf and messages/fluss.proto) for the producer-offsets
//     calls, which pyfluss does not have: a 25 and this client's retry; an
//     unknown outcome (apply_then_drop, apply_then_error) against a plain
//     drop; a stall past its socket timeout; a delay; TTL expiry by the
//     clock; the request log; reset.

// startControlSidecar builds cmd/fluss-sidecar and starts `serve --embedded
// --listen 127.0.0.1:0 --control 127.0.0.1:0`, as a suite in another
// language would; it returns the Fluss address and the control URL, read
// from the first two stdout lines. The process gets SIGTERM at cleanup.
func startControlSidecar(t *testing.T) (addr, controlURL string) {
	t.Helper()
	bin := buildCommand(t, t.Context(), "fluss-sidecar", "CGO_ENABLED=0")
	cmd := exec.Command(bin, "serve", "--embedded", "--listen", "127.0.0.1:0", "--control", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil {
			t.Errorf("the sidecar's exit after SIGTERM: %v\nstderr:\n%s", err, stderr.String())
		}
	})
	lines := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var got []string
		for len(got) < 2 && sc.Scan() {
			got = append(got, sc.Text())
		}
		lines <- got
		for sc.Scan() { // nothing else is printed; drain to be sure
		}
	}()
	var got []string
	select {
	case got = <-lines:
	case err := <-exited:
		t.Fatalf("the sidecar exited before serving: %v\nstderr:\n%s", err, stderr.String())
	case <-time.After(time.Minute):
		t.Fatalf("no address from the sidecar in a minute\nstderr:\n%s", stderr.String())
	}
	if len(got) != 2 || !strings.HasPrefix(got[1], "control http://127.0.0.1:") {
		t.Fatalf("stdout %q, want the address and then the control URL", got)
	}
	return got[0], strings.TrimPrefix(got[1], "control ")
}

// protobufPython is a python3 with google.protobuf (Debian's
// python3-protobuf), which compat_client.py needs; scripts/install-deps.sh
// installs it when root.
func protobufPython(t *testing.T) string {
	t.Helper()
	compat.SkipIfShort(t)
	find := func() string {
		for _, py := range []string{"/usr/bin/python3", "python3"} {
			if exec.Command(py, "-c", "import google.protobuf").Run() == nil {
				return py
			}
		}
		return ""
	}
	if py := find(); py != "" {
		return py
	}
	if os.Geteuid() != 0 {
		t.Skip("SKIPPING: no python3 with google.protobuf and not root to install it; run scripts/install-deps.sh as root")
	}
	if out, err := exec.Command("../scripts/install-deps.sh").CombinedOutput(); err != nil || find() == "" {
		t.Fatalf("python3 with google.protobuf still missing after scripts/install-deps.sh (%v):\n%s", err, out)
	}
	return find()
}

// serverStillServes: after a client's run the sidecar answers both its
// control API and a producer-offsets round trip.
func serverStillServes(t *testing.T, addr, controlURL string) {
	t.Helper()
	ctx := t.Context()
	if _, err := (&controlapi.Client{Base: controlURL}).Server(ctx); err != nil {
		t.Fatalf("the control API after the run: %v", err)
	}
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		t.Fatalf("dial after the run: %v", err)
	}
	defer c.Close()
	var got messages.GetProducerOffsetsResponse
	if err := c.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("after")}, &got); err != nil {
		t.Fatalf("a GET after the run: %v", err)
	}
}

// runControlClient runs control_client.py's scenarios with python against
// a fresh sidecar, requires RESULT PASS and each step's line to hold its
// fragment, and the sidecar to serve afterwards.
func runControlClient(t *testing.T, python string, want map[string]string, scenarios ...string) {
	t.Helper()
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	addr, controlURL := startControlSidecar(t)
	argv := []string{python, filepath.Join(root, "compat_test", "python", "control_client.py"), "--control", controlURL, "--bootstrap", addr}
	run := runProgram(t, "control_client.py", 3*time.Minute, argv, scenarios...)
	if !run.passed {
		t.Errorf("control_client.py: exit %d, want RESULT PASS\nstderr:\n%s", run.exit, run.stderr)
	}
	steps := map[string][2]string{}
	for step, fragment := range want {
		steps[step] = [2]string{"PASS", fragment}
	}
	requireSteps(t, run, steps)
	serverStillServes(t, addr, controlURL)
}

// TestControlAPIFromPython: from Python, against `serve --embedded
// --control`, each kind of rule (error, stall, delay, drop,
// apply_then_error, apply_then_drop) installed and waited for, the request
// log read, the clock advanced past a TTL, and reset; see control_client.py
// for what each step asserts.
func TestControlAPIFromPython(t *testing.T) {
	t.Run("raw-protocol", func(t *testing.T) {
		t.Parallel()
		runControlClient(t, protobufPython(t), map[string]string{
			"retry.25-then-success":                "outcome=ok attempts=2 log=[(25, ",
			"unknown.apply-then-drop":              "found=True offsets=[(100, 0, 7)] retry_result=1",
			"unknown.apply-then-error":             "client_saw=error=25 message=lost found=False",
			"unknown.drop-does-not-apply":          "found=True",
			"stall.client-gives-up-server-goes-on": "outcome=client_gone found_after=False register_again=0",
			"delay.answered-after-delay":           "outcome=ok held_us=",
			"ttl.expired-by-the-clock":             "offset_ms=90000000 expired=1 store_after=[] found_after=False",
			"log.asserts-the-calls":                "calls=[(1053, 1), (1054, 2), (1054, 3), (1055, 4)] entries=6",
			"reset.empties-everything":             "rules=0 snapshots=0 files=0 offset_ms=0 found=False",
		}, "retry", "unknown", "stall", "delay", "ttl", "log", "reset")
	})
	t.Run("pyfluss", func(t *testing.T) {
		t.Parallel()
		python := pyfluss.get(t, "resolve-pip.sh", 10*time.Minute)
		runControlClient(t, python, map[string]string{
			"pyfluss-retry.retried-after-25":               "nodes=2 get_metadata=25@conn",
			"pyfluss-retry.not-retried-after-minus-1":      "error=-1 get_metadata=1",
			"pyfluss-retry.gives-up-after-its-tries":       "error=25 attempts=4 connections=4",
			"pyfluss-stall.client-gives-up-server-goes-on": "released=1 nodes_after=2",
		}, "pyfluss-retry", "pyfluss-stall")
	})
}

// pythonBlockRe finds the fenced python blocks of a Markdown file.
var pythonBlockRe = regexp.MustCompile("(?s)```python\n(.*?)```")

// TestDocsPythonExample runs the control API's Python example of
// docs/embedded.md as the file has it (cut out here, never copied), so
// that the doc cannot drift from the API: doc_example.py runs its test_*
// functions against a fresh sidecar with a small raw-protocol client.
func TestDocsPythonExample(t *testing.T) {
	python := protobufPython(t)
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "embedded.md"))
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, m := range pythonBlockRe.FindAllStringSubmatch(string(doc), -1) {
		if strings.Contains(m[1], "/v1/rules") {
			if example != "" {
				t.Fatal("docs/embedded.md has two Python blocks on /v1/rules; say which one this test runs")
			}
			example = m[1]
		}
	}
	if example == "" {
		t.Fatal("no Python block on /v1/rules in docs/embedded.md")
	}
	path := filepath.Join(t.TempDir(), "embedded_md_example.py")
	if err := os.WriteFile(path, []byte(example), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, controlURL := startControlSidecar(t)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, filepath.Join(root, "compat_test", "python", "doc_example.py"), "--bootstrap", addr, path)
	cmd.Env = append(os.Environ(), "FLUSS_SIDECAR_CONTROL="+controlURL)
	out, err := cmd.CombinedOutput()
	t.Logf("doc_example.py:\n%s", out)
	if err != nil || !strings.Contains(string(out), "\nRESULT PASS tests=2\n") {
		t.Fatalf("the example of docs/embedded.md: %v, want RESULT PASS with its two tests", err)
	}
	for _, name := range []string{"test_get_is_retried_after_25", "test_snapshot_expires"} {
		if !strings.Contains(string(out), "PASS "+name+"\n") {
			t.Errorf("no PASS for %s", name)
		}
	}
	serverStillServes(t, addr, controlURL)
}
