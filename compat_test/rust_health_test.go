package compat_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// Fluss's Rust client asking GET_CLUSTER_HEALTH (fluss-rs-compat's health
// scenario, compat_test/rust/README.md): the sidecar's own answer in
// embedded and standalone mode, the coordinator's through the proxy.

// healthLineRe reads the health scenario's answer: the status as fluss-rs
// names it, its wire value and the four replica counts.
var healthLineRe = regexp.MustCompile(`^PASS health\.cluster-health outcome=Ok status=(\w+) status_code=(\d+) num_replicas=(-?\d+) in_sync_replicas=(-?\d+) num_leader_replicas=(-?\d+) active_leader_replicas=(-?\d+)$`)

// healthCodes are the wire values of the statuses fluss-rs names
// (docs/protocol.md §6).
var healthCodes = map[string]string{"Green": "0", "Yellow": "1", "Red": "2", "Unknown": "3"}

// rustHealth is one answer of the health scenario.
type rustHealth struct {
	status string    // Green, Yellow, Red or Unknown
	counts [4]string // num_replicas, in_sync_replicas, num_leader_replicas, active_leader_replicas
}

// parseRustHealth reads the health scenario's answer from a run; an error
// when the call failed or the line is not a well-formed answer.
func parseRustHealth(run clientRun) (rustHealth, error) {
	l := run.line("health.cluster-health")
	m := healthLineRe.FindStringSubmatch(l)
	if m == nil {
		return rustHealth{}, fmt.Errorf("health.cluster-health: %q, want a ClusterHealth\n%s", l, run.stdout)
	}
	if healthCodes[m[1]] != m[2] {
		return rustHealth{}, fmt.Errorf("health.cluster-health: status %s with wire value %s: %q", m[1], m[2], l)
	}
	return rustHealth{status: m[1], counts: [4]string{m[3], m[4], m[5], m[6]}}, nil
}

// checkRustHealth requires a run's answer to be status with every
// replica count 0, as the sidecar answers.
func checkRustHealth(t *testing.T, run clientRun, status string) {
	t.Helper()
	h, err := parseRustHealth(run)
	if err != nil {
		t.Fatal(err)
	}
	if h.status != status || h.counts != [4]string{"0", "0", "0", "0"} {
		t.Fatalf("fluss-rs got %+v, want %s with replica counts 0: %q", h, status, run.line("health.cluster-health"))
	}
}

// waitRustHealth runs the health scenario, each time on a new connection,
// until fluss-rs gets status; every answer must have replica counts 0.
func waitRustHealth(t *testing.T, bin, addr, status string) {
	t.Helper()
	var last clientRun
	eventually.Nil(t, "fluss-rs's GET_CLUSTER_HEALTH status "+status, func() error {
		last = runProgramQuietly(t, "fluss-rs-compat", time.Minute, []string{bin}, "--bootstrap", addr, "--timeout", "30", "health")
		h, err := parseRustHealth(last)
		if err != nil {
			return err
		}
		if h.counts != [4]string{"0", "0", "0", "0"} {
			t.Fatalf("replica counts %v, want 0: %q", h.counts, last.line("health.cluster-health"))
		}
		if h.status != status {
			return fmt.Errorf("status %s, want %s", h.status, status)
		}
		return nil
	})
	t.Logf("fluss-rs-compat health against %s:\n%s", addr, last.stdout)
}

// TestRustClientHealthFollowsZooKeeper: fluss-rs asks a standalone sidecar
// for the cluster's health on a new connection each time: GREEN while
// ZooKeeper and remote storage answer, RED once ZooKeeper is stopped (the
// sidecar itself still answers), GREEN again after ZooKeeper returns.
func TestRustClientHealthFollowsZooKeeper(t *testing.T) {
	bin := buildRustClient(t)
	zk := zktest.StartT(t) // this test's own server: it stops it
	a := apptest.Start(t, zk.Addr, nil)
	waitRustHealth(t, bin, a.Addr(), "Green")
	zk.Stop()
	waitRustHealth(t, bin, a.Addr(), "Red")
	if err := zk.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitRustHealth(t, bin, a.Addr(), "Green")
}

// TestRustClientHealthThroughProxy: through a proxy sidecar (rewriting
// GET_METADATA, so that fluss-rs takes the proxy for the coordinator)
// fluss-rs gets the upstream coordinator's own GET_CLUSTER_HEALTH answer.
// The upstream is an embedded sidecar made to fail the next request of
// key 1062 with an error and message only it sends; fluss-rs reports that
// error, and on the next call the upstream's GREEN.
func TestRustClientHealthThroughProxy(t *testing.T) {
	bin := buildRustClient(t)
	up, err := embedded.Start(t.Context(), embedded.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	px := apptest.Start(t, zktest.StartT(t).Addr, map[string]string{
		app.KeyMode:            "proxy",
		app.KeyUpstreamAddress: up.Addr(),
		app.KeyRewriteMetadata: "true",
	})
	// The proxy lists 1062 once it has the upstream's API_VERSIONS; until
	// then fluss-rs refuses to send it.
	waitRustHealth(t, bin, px.Addr(), "Green")

	const message = "health from the upstream embedded sidecar"
	up.FailNext(messages.KeyGetClusterHealth, flusserr.Code(48), message)
	run := runProgram(t, "fluss-rs-compat", 3*time.Minute, []string{bin, "--bootstrap", px.Addr(), "--timeout", "30"}, "health")
	if _, c, _ := strings.Cut(run.line("health.connect"), " coordinator="); !strings.Contains(c, px.Addr()) {
		t.Errorf("health.connect: %q, want the proxy %s as coordinator", run.line("health.connect"), px.Addr())
	}
	want := "FAIL health.cluster-health outcome=Err error=FlussAPIError code=48 fluss_error=AuthorizationException retriable=false reason=want a ClusterHealth: " + message
	if l := run.line("health.cluster-health"); l != want || run.passed {
		t.Fatalf("health.cluster-health with the upstream failing it: %q, want %q", l, want)
	}
	if n := up.PendingControls(messages.KeyGetClusterHealth); n != 0 {
		t.Fatalf("the upstream still holds %d controls for 1062: the request did not reach it", n)
	}
	run = runProgram(t, "fluss-rs-compat", 3*time.Minute, []string{bin, "--bootstrap", px.Addr(), "--timeout", "30"}, "health")
	checkRustHealth(t, run, "Green")
}
