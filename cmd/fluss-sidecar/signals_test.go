package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

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
	args := append([]string{"serve",
		"-Dbind.listeners=FLUSS://127.0.0.1:0",
		"-Dzookeeper.address=" + zkAddr,
		"-Dzookeeper.path.root=" + zktest.UniqueRoot(),
		"-Dremote.data.dir=" + filepath.Join(t.TempDir(), "remote"),
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

// waitLine reads stderr lines until one matches re.
func waitLine(t *testing.T, ctx context.Context, lines <-chan string, re *regexp.Regexp) {
	t.Helper()
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve ended before logging %v", re)
			}
			if re.MatchString(l) {
				return
			}
		case <-ctx.Done():
			t.Fatalf("no log line matching %v", re)
		}
	}
}
