package compat_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// Apache Fluss's Rust client (crate fluss-rs, pinned in
// compat_test/rust/Cargo.toml and Cargo.lock) through the producer-offsets
// registry: compat_test/rust/README.md says what each step does and what
// fluss-rs reports.

// rustClient is the fluss-rs-compat binary, built once per test binary by
// scripts/resolve-cargo.sh: offline and warm when make test-deps has built
// it, a fetch and a cold build otherwise.
var rustClient resolved

func buildRustClient(t *testing.T) string {
	t.Helper()
	return rustClient.get(t, "resolve-cargo.sh", 20*time.Minute)
}

// runRust runs fluss-rs-compat's scenarios against bootstrap, logged in as
// user with password when user is not "", and wants RESULT PASS.
func runRust(t *testing.T, bin, bootstrap, user, password string, args ...string) clientRun {
	t.Helper()
	argv := []string{bin, "--bootstrap", bootstrap, "--timeout", "30"}
	if user != "" {
		argv = append(argv, "--user", user, "--password", password)
	}
	r := runProgram(t, "fluss-rs-compat", 3*time.Minute, argv, args...)
	if !r.passed {
		t.Errorf("fluss-rs-compat against %s: exit %d, want RESULT PASS\nstderr:\n%s", bootstrap, r.exit, r.stderr)
	}
	return r
}

// invalidIDs are the scenario's invalid producer ids by step name, with
// the reason a Fluss coordinator gives (docs/storage-format.md §7.4).
var invalidIDs = []struct{ name, id, reason string }{
	{"slash", "a/b", "'a/b' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
	{"dotdot", "..", "'..' is not allowed"},
	{"dot", ".", "'.' is not allowed"},
	{"empty", "", "the empty string is not allowed"},
	{"space", "a b", "'a b' contains one or more characters other than ASCII alphanumerics, '_' and '-'"},
	{"long", strings.Repeat("x", 201), "the length of '" + strings.Repeat("x", 201) + "' is longer than the max allowed length 200"},
}

// rustOutcomes is what fluss-rs must report for each step of the offsets
// scenario: a fragment of its line (the outcome, and for errors the code,
// FlussError name, retriable flag and message).
func rustOutcomes(suffix string) map[string]string {
	id := "rs-" + suffix
	notFound := "outcome=Ok producer_id=None expiration_time=None tables=0 offsets=none"
	want := map[string]string{
		"offsets.connect":               "coordinator=",
		"offsets.register":              "tables=2 offsets=T1001B0:100,T1001B1:0,T1001B2:42,T1002P7B0:1000,T1002P7B1:1001,T1002P8B0:2000 outcome=Ok(Some(Created))",
		"offsets.get":                   "outcome=Ok producer_id=" + id + " expiration_time=",
		"offsets.register-again":        "outcome=Ok(Some(AlreadyExists))",
		"offsets.get-after-again":       "tables=2 offsets=T1001B0:100,T1001B1:0,T1001B2:42,T1002P7B0:1000,T1002P7B1:1001,T1002P8B0:2000",
		"offsets.register-many":         "ttl_ms=None tables=20 ",
		"offsets.get-many":              "tables=20 offsets=T3001B0:0,T3001B1:1,T3001B2:2,T3002B0:10,",
		"offsets.register-empty":        "tables=0 offsets=none outcome=Ok(Some(Created))",
		"offsets.get-empty":             "outcome=Ok producer_id=" + id + "-empty expiration_time=",
		"offsets.register-short-ttl":    "ttl_ms=1 tables=1 offsets=T1001B0:1 outcome=Ok(Some(Created))",
		"offsets.register-over-expired": "offsets=T1001B0:2 outcome=Ok(Some(Created))",
		"offsets.get-over-expired":      "tables=1 offsets=T1001B0:2",
		// The error enum has no name for -1's neighbours above 57 either;
		// -1 itself is UnknownServerError.
		"offsets.register-no-offset": "outcome=Err error=FlussAPIError code=-1 fluss_error=UnknownServerError retriable=false message=",
		"offsets.get-no-offset":      notFound,
		"offsets.delete":             "outcome=Ok(())",
		"offsets.get-deleted":        notFound,
		"offsets.delete-missing":     "outcome=Ok(())",
		"offsets.get-missing":        notFound,
		"offsets.delete-many":        "outcome=Ok(())",
		"offsets.delete-empty":       "outcome=Ok(())",
		"offsets.delete-ttl":         "outcome=Ok(())",
	}
	for _, bad := range invalidIDs {
		// fluss-rs 1.0.0's FlussError has no INVALID_PRODUCER_ID_EXCEPTION:
		// code 63 keeps its number and is named UnknownServerError.
		line := "outcome=Err error=FlussAPIError code=63 fluss_error=UnknownServerError retriable=false message=Invalid producer ID '" + bad.id + "': " + bad.reason
		for _, op := range []string{"register", "get", "delete"} {
			want["offsets."+op+"-invalid-"+bad.name] = line
		}
	}
	return want
}

// checkRustOffsets requires every step of the offsets scenario to have
// passed with the outcome rustOutcomes names, and the -1 for a bucket
// without log_end_offset to name the producer.
func checkRustOffsets(t *testing.T, run clientRun, suffix string) {
	t.Helper()
	for step, fragment := range rustOutcomes(suffix) {
		l := run.line(step)
		if !strings.HasPrefix(l, "PASS ") || !strings.Contains(l, fragment) {
			t.Errorf("step %s: %q, want PASS with %q", step, l, fragment)
		}
		if strings.HasSuffix(step, "-invalid-empty") || strings.HasSuffix(step, "-invalid-long") || strings.HasSuffix(step, "-invalid-slash") {
			// The message runs to the end of the line: nothing after the reason.
			if !strings.HasSuffix(l, fragment) {
				t.Errorf("step %s: %q, want it to end with the reason", step, l)
			}
		}
	}
	// The sidecar names the table and bucket, a 0.9.1 coordinator sends
	// a Java stack trace; both name the producer.
	want := "producer offsets for producer rs-" + suffix + "-no-offset"
	if l := run.line("offsets.register-no-offset"); !strings.Contains(l, want) {
		t.Errorf("register-no-offset: %q, want a message with %q", l, want)
	}
}

// expirationRe finds a get's expiration time.
var expirationRe = regexp.MustCompile(`expiration_time=(-?\d+)`)

// TestRustClient runs Fluss's Rust client, unchanged, against an embedded
// sidecar, one with SASL/PLAIN, and a sidecar in ZooKeeper mode: every
// step passes, fluss-rs reports the outcomes of rustOutcomes, and its
// GET_CLUSTER_HEALTH gets GREEN with replica counts 0.
func TestRustClient(t *testing.T) {
	bin := buildRustClient(t)
	const user, password = "rust", "rust-secret"
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) string
		user  string
	}{
		{"embedded", func(t *testing.T) string {
			logs := &auditLog{}
			srv, err := embedded.Start(t.Context(), embedded.Config{Logger: logs.logger()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			// After the run: one audit line per REGISTER and DELETE, each
			// naming fluss-rs's client software.
			t.Cleanup(func() { logs.check(t, "fluss-rust") })
			return srv.Addr()
		}, ""},
		{"embedded-sasl", func(t *testing.T) string {
			srv, err := embedded.Start(t.Context(), embedded.Config{Security: embedded.Users(map[string]string{user: password})})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			return srv.Addr()
		}, user},
		{"zookeeper", func(t *testing.T) string {
			return apptest.Start(t, zktest.StartT(t).Addr, nil).Addr()
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := tc.start(t)
			suffix := strings.ReplaceAll(tc.name, "-", "")
			run := runRust(t, bin, addr, tc.user, password, "--id-suffix", suffix, "ping", "offsets", "health")
			if l := run.line("ping.server-nodes"); !strings.HasPrefix(l, "PASS ") {
				t.Errorf("ping.server-nodes: %q, want PASS", l)
			}
			checkRustOffsets(t, run, suffix)
			checkRustHealth(t, run, "Green")
		})
	}
}

// TestRustClientSASLRefused: a wrong password fails at connect with the
// server's AUTHENTICATE error, which fluss-rs keeps with its code.
func TestRustClientSASLRefused(t *testing.T) {
	bin := buildRustClient(t)
	srv, err := embedded.Start(t.Context(), embedded.Config{Security: embedded.Users(map[string]string{"rust": "rust-secret"})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cmd := exec.CommandContext(t.Context(), bin, "--bootstrap", srv.Addr(), "--timeout", "30", "--user", "rust", "--password", "wrong", "ping")
	out, err := cmd.Output()
	t.Logf("fluss-rs-compat with a wrong password:\n%s", out)
	if err == nil || !strings.Contains(string(out), "\nRESULT FAIL\n") {
		t.Fatalf("a wrong password: %v, want RESULT FAIL", err)
	}
	if l := (clientRun{stdout: string(out)}).line("ping.connect"); !strings.HasPrefix(l, "FAIL ") || !strings.Contains(l, "code=") {
		t.Fatalf("ping.connect with a wrong password: %q, want FAIL with the server's code", l)
	}
}

// TestRustClientProxyRealCluster runs Fluss's Rust client through a proxy
// sidecar in front of a real Fluss 0.9.1 cluster (deployment (b) of
// docs/proxy.md: the sidecar rewrites GET_METADATA, the coordinator
// advertises itself), and the same scenario straight at the coordinator:
// both pass with the same outcomes, the coordinator's -1 message aside.
// GET_CLUSTER_HEALTH, which 0.9.1 lacks, fails alike in both at once:
// fluss-rs refuses to send a key the server does not list.
func TestRustClientProxyRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Fluss 0.9.1 cluster (JVMs)")
	}
	bin := buildRustClient(t)
	r := startProxyRig(t, flusstest.Fluss091, "b", false)
	via := runRust(t, bin, r.addr, "", "", "--id-suffix", "proxy", "ping", "offsets")
	if l := via.line("offsets.connect"); !strings.Contains(l, "coordinator=") || !strings.Contains(l, r.addr) {
		t.Errorf("through the proxy the client took the coordinator from %q, want the sidecar %s", l, r.addr)
	}
	checkRustOffsets(t, via, "proxy")

	coordinator := r.cluster.Coordinator.Endpoint(clientListener)
	direct := runRust(t, bin, coordinator, "", "", "--id-suffix", "direct", "ping", "offsets")
	if l := direct.line("offsets.connect"); !strings.Contains(l, coordinator) {
		t.Errorf("straight at the coordinator the client took %q, want %s", l, coordinator)
	}
	checkRustOffsets(t, direct, "direct")

	// The same outcome from both for every step once the producer ids and
	// expiration times are masked, but for the message of the -1: a Java
	// stack trace from the coordinator.
	const noOffset = "offsets.register-no-offset"
	if l := direct.line(noOffset); !strings.Contains(l, "UnknownServerException: Failed to register producer offsets for producer rs-direct-no-offset") {
		t.Errorf("the coordinator's -1 for a bucket without log_end_offset: %q", l)
	}
	for step := range rustOutcomes("") {
		if step == "offsets.connect" {
			continue
		}
		a, b := maskRun(via.line(step), "proxy"), maskRun(direct.line(step), "direct")
		if step == noOffset {
			a, _, _ = strings.Cut(a, " message=")
			b, _, _ = strings.Cut(b, " message=")
		}
		if a != b {
			t.Errorf("step %s: through the proxy %q, at the coordinator %q", step, a, b)
		}
	}

	// Fluss 0.9.1 has no GET_CLUSTER_HEALTH: its API_VERSIONS does not
	// list 1062, nor does the proxy's, which lists it only when the
	// upstream does. fluss-rs then fails the call itself, without sending
	// it, with its UnsupportedVersion error, through the proxy and at the
	// coordinator alike.
	const unsupported = "FAIL health.cluster-health outcome=Err error=UnsupportedVersion retriable=false reason=want a ClusterHealth: Unsupported API version: The server does not support GetClusterHealth."
	for _, tc := range []struct{ name, addr string }{{"through the proxy", r.addr}, {"at the coordinator", coordinator}} {
		run := runProgram(t, "fluss-rs-compat", 3*time.Minute, []string{bin, "--bootstrap", tc.addr, "--timeout", "30"}, "health")
		if l := run.line("health.cluster-health"); l != unsupported || run.exit != 1 {
			t.Errorf("GET_CLUSTER_HEALTH %s of Fluss 0.9.1: exit %d, %q, want exit 1 and %q", tc.name, run.exit, l, unsupported)
		}
	}
}

// maskRun replaces a run's producer ids (rs-<suffix>) and expiration
// times, so that two runs' lines compare.
func maskRun(line, suffix string) string {
	line = strings.ReplaceAll(line, "rs-"+suffix, "rs-S")
	return expirationRe.ReplaceAllString(line, "expiration_time=T")
}

// TestRustClientEmbeddedScript runs `scripts/compat-embedded.sh --fluss-rs`
// (make fluss-rs-embedded): the fluss-sidecar binary in embedded mode on a
// free port and the Rust client's ping and offsets scenarios against it.
func TestRustClientEmbeddedScript(t *testing.T) {
	buildRustClient(t) // builds once for every test; the script's build is then a no-op
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "fluss-sidecar")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/fluss-sidecar")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "compat-embedded.sh"), "--fluss-rs")
	cmd.Env = append(os.Environ(), "FLUSS_SIDECAR_BIN="+bin)
	out, err := cmd.CombinedOutput()
	t.Logf("scripts/compat-embedded.sh --fluss-rs:\n%s", out)
	if err != nil || !strings.Contains(string(out), "\nRESULT PASS\n") || strings.Contains(string(out), "\nFAIL ") {
		t.Fatalf("scripts/compat-embedded.sh --fluss-rs: %v, want RESULT PASS and no FAIL", err)
	}
	for _, step := range []string{"ping.server-nodes", "offsets.register-again", "offsets.get-invalid-slash"} {
		if !strings.Contains(string(out), "\nPASS "+step+" ") {
			t.Errorf("no PASS line for %s", step)
		}
	}

}
