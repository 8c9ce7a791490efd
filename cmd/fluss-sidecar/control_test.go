package main

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestControlCommandAgainstServe starts `serve --embedded --control
// 127.0.0.1:0` as a process, reads the control URL from the second stdout
// line, and drives it with `fluss-sidecar control`: a rule fails the next
// GET with 25, the wait sees the hit, the log shows the call, the clock
// expires a snapshot, reset empties the store; bad usage exits 2, a
// refused request 1.
func TestControlCommandAgainstServe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, out, stderr := startEmbeddedServe(t, ctx, "--control", "127.0.0.1:0")
	first, _ := out.ReadString('\n')
	second, err := out.ReadString('\n')
	addr := strings.TrimSpace(first)
	u, ok := strings.CutPrefix(strings.TrimSpace(second), "control http://127.0.0.1:")
	if err != nil || !ok || u == "" {
		t.Fatalf("stdout %q %q, want the address then the control URL (stderr: %s)", first, second, stderr.String())
	}
	url := "http://127.0.0.1:" + u
	ctl := func(args ...string) (map[string]any, int, string) {
		return cli(t, append([]string{"control", "--url", url}, args...)...)
	}
	v, code, e := ctl("rule", "add", "--api-key", "1054", "--action", "error", "--code", "25", "--message", "again")
	if code != 0 || v["id"] == nil {
		t.Fatalf("rule add: %d %v %s", code, v, e)
	}
	id := strconv.FormatFloat(v["id"].(float64), 'f', -1, 64)
	if _, code, _ := cli(t, "offsets", "register", "--bootstrap", addr, "--producer-id", "c1", "--offset", "5:0=1"); code != 0 {
		t.Fatalf("register: %d", code)
	}
	if v, code, _ := cli(t, "offsets", "get", "--bootstrap", addr, "--producer-id", "c1"); code == 0 {
		t.Fatalf("get under the rule: %d %v, want the error", code, v)
	}
	if v, code, e := ctl("wait", id, "--timeout", "10s"); code != 0 || v["reached"] != true {
		t.Fatalf("wait: %d %v %s", code, v, e)
	}
	if v, code, _ := ctl("wait", id, "--hits", "2", "--timeout", "1ms"); code != 1 || v["reached"] != false {
		t.Fatalf("wait not reached: %d %v", code, v)
	}
	v, code, _ = ctl("log", "--api-key", "1054")
	entries, _ := v["entries"].([]any)
	if code != 0 || len(entries) != 1 || entries[0].(map[string]any)["code"] != 25.0 {
		t.Fatalf("log: %d %v", code, v)
	}
	if v, code, _ := ctl("clock", "advance", "200h"); code != 0 || v["expired"] != 1.0 {
		t.Fatalf("clock advance: %d %v", code, v)
	}
	if v, code, _ := ctl("store"); code != 0 || len(v["snapshots"].([]any)) != 0 {
		t.Fatalf("store after expiry: %d %v", code, v)
	}
	if v, code, _ := ctl("reset"); code != 0 || v["reset"] != true {
		t.Fatalf("reset: %d %v", code, v)
	}
	if _, code, e := ctl("rule", "add", "--action", "explode"); code != 1 || !strings.Contains(e, "field action") {
		t.Fatalf("refused rule: %d %s", code, e)
	}
	if _, code, _ := ctl("frobnicate"); code != 2 {
		t.Fatalf("unknown command: %d, want 2", code)
	}
	if _, code, _ := cli(t, "control", "server"); code != 2 && os.Getenv("FLUSS_SIDECAR_CONTROL") == "" {
		t.Fatalf("no URL: %d, want 2", code)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v (stderr: %s)", err, stderr.String())
	}
}

// TestControlRefusedOutsideEmbedded: --control without --embedded is a
// configuration error (exit 2) naming the key.
func TestControlRefusedOutsideEmbedded(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"serve", "-Dzookeeper.address=127.0.0.1:1", "-Dremote.data.dir=file:///nonexistent", "--control", "127.0.0.1:0"}, &out, &errOut)
	if code != 2 || !strings.Contains(errOut.String(), "sidecar.embedded.control.listen") {
		t.Fatalf("exit %d, stderr %s", code, errOut.String())
	}
}
