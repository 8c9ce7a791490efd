package main

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/strictclient"
)

// runAsCommand makes the test binary run the command instead of the tests
// (TestMain), so that a test can start `fluss-sidecar serve` as a process
// without building it.
const runAsCommand = "FLUSS_SIDECAR_TEST_RUN_COMMAND"

// TestServeEmbeddedProcess is the harness contract of embedded mode: the
// process prints its bound address as the first stdout line, and nothing
// else on stdout; the address answers API_VERSIONS and the producer
// offsets APIs; SIGTERM stops it with status 0.
func TestServeEmbeddedProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, out, stderr := startEmbeddedServe(t, ctx)
	first, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("first stdout line: %v (stderr: %s)", err, stderr.String())
	}
	addr := strings.TrimSuffix(first, "\n")
	host, port, err := net.SplitHostPort(addr)
	if n, _ := strconv.Atoi(port); err != nil || host != "127.0.0.1" || n <= 0 {
		t.Fatalf("first stdout line %q is not the bound 127.0.0.1:port", first)
	}
	// As fluss-go and Java bootstrap: the coordinator, then the tablet
	// server GET_METADATA names, each with its own server type.
	cl, err := strictclient.Bootstrap(ctx, addr, strictclient.Options{})
	if err != nil {
		t.Fatalf("bootstrap: %v (stderr: %s)", err, stderr.String())
	}
	if ta := cl.Tablets[0].Addr; ta == addr || !strings.HasPrefix(ta, "127.0.0.1:") {
		t.Fatalf("tablet server at %s beside the coordinator at %s", ta, addr)
	}
	cl.Close()
	if v, code, e := cli(t, "offsets", "register", "--bootstrap", addr, "--producer-id", "e1", "--offset", "5:0=1"); code != 0 || v["result"] != "CREATED" {
		t.Fatalf("register: %d %v %s", code, v, e)
	}
	if v, code, _ := cli(t, "offsets", "get", "--bootstrap", addr, "--producer-id", "e1"); code != 0 || v["found"] != true {
		t.Fatalf("get: %d %v", code, v)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := out.ReadString(0)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v (stderr: %s)", err, stderr.String())
	}
	if rest != "" {
		t.Fatalf("more than the address on stdout: %q", rest)
	}
	if !strings.Contains(stderr.String(), "embedded mode") {
		t.Fatalf("stderr does not say embedded mode: %s", stderr.String())
	}
}

// TestServeFlags: --embedded and --listen are shorthands for keys and win
// over the file and -D.
func TestServeFlags(t *testing.T) {
	rest, apply, err := serveFlags([]string{"-Dbind.listeners=FLUSS://127.0.0.1:1", "--embedded", "--listen", "127.0.0.1:0", "-Dx=y"})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(rest)
	if err != nil {
		t.Fatal(err)
	}
	apply(cfg)
	s, err := app.FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Embedded || len(s.Listeners) != 1 || s.Listeners[0].Address() != "127.0.0.1:0" || s.Listeners[0].Name != "FLUSS" {
		t.Fatalf("settings: embedded %v, listeners %v", s.Embedded, s.Listeners)
	}
	_, apply, _ = serveFlags([]string{"--listen=CLIENT://127.0.0.1:7"})
	cfg = config.New()
	apply(cfg)
	if v, _ := cfg.Lookup("bind.listeners"); v != "CLIENT://127.0.0.1:7" {
		t.Fatalf("--listen with a listener name: %q", v)
	}
	if _, _, err := serveFlags([]string{"--listen"}); err == nil {
		t.Fatal("--listen without a value was accepted")
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--tablet-listen", "127.0.0.1:9124"}, "FLUSS://127.0.0.1:9124"},
		{[]string{"--tablet-listen=CLIENT://127.0.0.1:9126"}, "CLIENT://127.0.0.1:9126"},
	} {
		_, apply, err := serveFlags(tt.args)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		cfg = config.New()
		apply(cfg)
		if v, _ := cfg.Lookup(app.KeyTabletListeners); v != tt.want {
			t.Fatalf("%v: %s = %q, want %q", tt.args, app.KeyTabletListeners, v, tt.want)
		}
	}
	if _, _, err := serveFlags([]string{"--tablet-listen"}); err == nil {
		t.Fatal("--tablet-listen without a value was accepted")
	}
	for _, args := range [][]string{
		{"serve", "--listen"},
		{"serve", "--embedded", "-Dzookeeper.address=127.0.0.1:2181"},
	} {
		if _, code, _ := cli(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// startEmbeddedServe runs this test binary as `serve --embedded` on
// loopback ports chosen by the system, with extra arguments, in a
// temporary folder; it returns the process (killed when the test ends),
// its stdout and its stderr.
func startEmbeddedServe(t *testing.T, ctx context.Context, extra ...string) (*exec.Cmd, *bufio.Reader, *bytes.Buffer) {
	t.Helper()
	args := append([]string{"serve", "--embedded", "--listen", "127.0.0.1:0", "--tablet-listen", "127.0.0.1:0"}, extra...)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsCommand+"=1")
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, bufio.NewReader(stdout), stderr
}
