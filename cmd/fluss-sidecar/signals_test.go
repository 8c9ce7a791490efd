package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func TestShutdownStatus(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		want int
	}{
		{"clean", nil, 0},
		{"drain timed out", fmt.Errorf("close: %w", wire.ErrDrainTimeout), 3},
		{"drain timed out among others", errors.Join(errors.New("listener"), wire.ErrDrainTimeout), 3},
		{"other failure", errors.New("close remote storage: boom"), 1},
	} {
		if got := shutdownStatus(tt.err); got != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestSIGHUPDoesNotStopServe runs `serve` as its own process, sends it
// SIGHUP, checks that it still answers, then stops it with SIGTERM and
// expects a clean exit.
func TestSIGHUPDoesNotStopServe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, addr, lines := serveProcess(t, ctx)

	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLine(t, ctx, lines, regexp.MustCompile(`SIGHUP received and ignored`))
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		t.Fatalf("after SIGHUP: %v", err)
	}
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatalf("after SIGHUP: %v", err)
	}
	c.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v, want exit status 0", err)
	}
}

// serveProcess runs `fluss-sidecar serve` as its own process (this test
// binary re-executed, see runAsCommand) on a fresh ZooKeeper root and
// remote dir, and returns it, its address (its first stdout line) and its
// stderr lines.
func serveProcess(t *testing.T, ctx context.Context, extra ...string) (*exec.Cmd, string, <-chan string) {
	t.Helper()
	zktest.SkipIfShort(t)
	args := append([]string{"serve",
		"-Dbind.listeners=FLUSS://127.0.0.1:0",
		"-Dzookeeper.address=" + zkAddr,
		"-Dzookeeper.path.root=" + zktest.UniqueRoot(),
		"-Dremote.data.dir=" + filepath.Join(t.TempDir(), "remote"),
		// No accept delay unless a test sets one: SIGTERM drains at once.
		"-D" + app.KeyAcceptDelay + "=0",
	}, extra...)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsCommand+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // nobody is reading: drop
			}
		}
		close(lines)
		io.Copy(io.Discard, stderr) // after a line too long to scan: keep the pipe flowing
	}()
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no address: %v", err)
	}
	return cmd, strings.TrimSpace(first), lines
}

// waitLine reads stderr lines until one matches re, and returns its
// submatches.
func waitLine(t *testing.T, ctx context.Context, lines <-chan string, re *regexp.Regexp) []string {
	t.Helper()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended before logging %v", re)
			}
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-ctx.Done():
			t.Fatalf("no log line matching %v", re)
		}
	}
}

// metricsFlags turn the operations endpoint on, on a free loopback port.
var metricsFlags = []string{
	"-Dmetrics.reporters=prometheus",
	"-Dmetrics.reporter.prometheus.port=0",
	"-D" + app.KeyMetricsHost + "=127.0.0.1",
}

// metricsAddrRE finds the operations endpoint's address in the log.
var metricsAddrRE = regexp.MustCompile(`serving metrics and probes: addr=(\S+)`)

// readyz returns /readyz's status and body.
func readyz(t *testing.T, addr string) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatalf("/readyz: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// handshake opens a connection to addr and makes one API_VERSIONS round
// trip on it.
func handshake(ctx context.Context, addr string) error {
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Handshake(ctx)
	return err
}

// TestShutdownAcceptDelay: from the first SIGTERM /readyz answers 503
// "shutting down", while new connections are still accepted and served
// for sidecar.shutdown.accept-delay; a second SIGTERM skips the rest of
// the delay and the process drains and exits 0.
func TestShutdownAcceptDelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Far longer than the test: only the second signal ends it.
	cmd, addr, lines := serveProcess(t, ctx, append(metricsFlags, "-D"+app.KeyAcceptDelay+"=10 min")...)
	ops := waitLine(t, ctx, lines, metricsAddrRE)[1]
	eventually.Nil(t, "/readyz to answer 200", func() error {
		if code, _ := readyz(t, ops); code != http.StatusOK {
			return fmt.Errorf("/readyz answers %d", code)
		}
		return nil
	})
	before, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLine(t, ctx, lines, regexp.MustCompile(`still accepting new connections for the accept delay`))
	code, body := readyz(t, ops)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, app.ShuttingDown) {
		t.Fatalf("/readyz after SIGTERM: %d %q, want 503 %q", code, body, app.ShuttingDown)
	}
	for i := range 3 { // new connections are still served
		if err := handshake(ctx, addr); err != nil {
			t.Fatalf("new connection %d during the accept delay: %v", i, err)
		}
	}
	if _, err := before.Handshake(ctx); err != nil {
		t.Fatalf("a connection opened before SIGTERM, during the delay: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitLine(t, ctx, lines, regexp.MustCompile(`skipping the rest of the accept delay`))
	if err := cmd.Wait(); err != nil {
		t.Fatalf("serve after the second SIGTERM: %v, want exit status 0", err)
	}
	select {
	case <-before.Done():
	case <-ctx.Done():
		t.Fatal("the connection opened before SIGTERM is still open after the exit")
	}
}
