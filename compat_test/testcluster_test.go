package compat_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// clusterInfo is the CLUSTER_JSON line, read as Fluss's client harnesses
// read it: bootstrap_servers, and sasl_bootstrap_servers when present.
type clusterInfo struct {
	BootstrapServers     string  `json:"bootstrap_servers"`
	SASLBootstrapServers *string `json:"sasl_bootstrap_servers"`
	ControlURL           string  `json:"control_url"`
}

// stopLaunchedAtEnd stops the launched cluster name when the test ends,
// whatever its outcome (a stop of a name that is not running succeeds).
func stopLaunchedAtEnd(t *testing.T, bin, tmp, name string) {
	t.Cleanup(func() {
		stop := exec.Command(bin, "stop", "--name", name)
		stop.Env = append(os.Environ(), "TMPDIR="+tmp)
		stop.Run()
	})
}

// runLauncher runs the launcher as the harnesses do (a plain subprocess,
// output captured, exit status checked) and returns its stdout.
func runLauncher(t *testing.T, ctx context.Context, bin, tmp string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\nstderr: %s", bin, args, err, stderr.String())
	}
	return string(out)
}

func parseClusterJSON(t *testing.T, stdout string) clusterInfo {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "CLUSTER_JSON: "); ok {
			var ci clusterInfo
			if err := json.Unmarshal([]byte(rest), &ci); err != nil {
				t.Fatalf("CLUSTER_JSON: %v: %s", err, rest)
			}
			return ci
		}
	}
	t.Fatalf("no CLUSTER_JSON line in %q", stdout)
	return clusterInfo{}
}

// freePortPair finds a port P with P+100 free too (the --sasl layout).
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+100))
		l.Close()
		if err == nil {
			l2.Close()
			return p
		}
	}
	t.Fatal("no free pair of ports")
	return 0
}

// buildCommand builds the repository's cmd/name into a temporary folder,
// with env added to the environment, and returns the binary's path.
func buildCommand(t *testing.T, ctx context.Context, name string, env ...string) string {
	t.Helper()
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), name)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/"+name)
	build.Dir = root
	build.Env = append(os.Environ(), env...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/%s: %v\n%s", name, err, out)
	}
	return bin
}

// launched is one cluster name of the launcher, in a TMPDIR of its own.
type launched struct {
	bin, tmp, name string
	port           int
}

// launchSASL builds cmd/fluss-test-cluster (as make build does) and starts
// cluster namePrefix+pid with --sasl on a free port pair, under a fresh
// TMPDIR; the cluster is stopped when the test ends.
func launchSASL(t *testing.T, ctx context.Context, namePrefix string) (launched, clusterInfo) {
	t.Helper()
	l := launched{bin: buildCommand(t, ctx, "fluss-test-cluster"), tmp: t.TempDir(),
		name: namePrefix + strconv.Itoa(os.Getpid()), port: freePortPair(t)}
	stopLaunchedAtEnd(t, l.bin, l.tmp, l.name)
	return l, l.start(t, ctx)
}

// start runs `start --sasl` of l's name and port and reads its CLUSTER_JSON.
func (l launched) start(t *testing.T, ctx context.Context) clusterInfo {
	t.Helper()
	return parseClusterJSON(t, runLauncher(t, ctx, l.bin, l.tmp, "start", "--sasl", "--name", l.name, "--port", strconv.Itoa(l.port)))
}

// stop runs `stop` of l's name.
func (l launched) stop(t *testing.T, ctx context.Context) {
	t.Helper()
	runLauncher(t, ctx, l.bin, l.tmp, "stop", "--name", l.name)
}

// TestTestClusterLauncher runs the fluss-test-cluster contract as Fluss's
// client harnesses use it (FLUSS_TEST_CLUSTER_BIN): `start --sasl --name
// N` exits 0 once the server serves and prints CLUSTER_JSON; the PLAINTEXT
// bootstrap and the SASL one (admin/admin-secret, alice/alice-secret) take
// producer offsets calls; a second start of the running name prints the
// same addresses (the same server); `stop --name N` ends it, after which
// the ports are closed and a stop again succeeds.
func TestTestClusterLauncher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, first := launchSASL(t, ctx, "compat-")
	port := l.port
	if first.SASLBootstrapServers == nil || *first.SASLBootstrapServers != "127.0.0.1:"+strconv.Itoa(port) ||
		first.BootstrapServers != "127.0.0.1:"+strconv.Itoa(port+100) {
		t.Fatalf("CLUSTER_JSON %+v, want SASL on %d and PLAINTEXT on %d", first, port, port+100)
	}

	plain, err := wire.Dial(ctx, first.BootstrapServers, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	reg := &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String("launcher-job"),
		TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(3),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(11)}}}},
	}
	var regResp messages.RegisterProducerOffsetsResponse
	if err := plain.Call(ctx, messages.KeyRegisterProducerOffsets, 0, reg, &regResp); err != nil || regResp.GetResult() != 0 {
		t.Fatalf("register over PLAINTEXT: %v %v", &regResp, err)
	}
	for _, u := range [][2]string{{"admin", "admin-secret"}, {"alice", "alice-secret"}} {
		sc, err := wire.Dial(ctx, *first.SASLBootstrapServers, wire.ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var get messages.GetProducerOffsetsResponse
		if err := sc.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("launcher-job")}, &get); err == nil {
			t.Fatalf("GET before a SASL login was served")
		}
		sc.Close()
		sc, err = wire.Dial(ctx, *first.SASLBootstrapServers, wire.ClientOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{
			Protocol: proto.String("PLAIN"), Token: []byte("\x00" + u[0] + "\x00" + u[1])}, &messages.AuthenticateResponse{}); err != nil {
			t.Fatalf("login %s: %v", u[0], err)
		}
		if err := sc.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("launcher-job")}, &get); err != nil ||
			len(get.GetTableOffsets()) != 1 {
			t.Fatalf("GET as %s: %v %v", u[0], &get, err)
		}
		sc.Close()
	}
	// The control API of the launched server saw the calls.
	page, err := (&controlapi.Client{Base: first.ControlURL}).Log(ctx, nil)
	if err != nil || len(page.Entries) == 0 {
		t.Fatalf("control log: %+v %v", page, err)
	}

	again := l.start(t, ctx)
	if again.BootstrapServers != first.BootstrapServers || again.ControlURL != first.ControlURL ||
		again.SASLBootstrapServers == nil || *again.SASLBootstrapServers != *first.SASLBootstrapServers {
		t.Fatalf("second start %+v, want the running cluster %+v", again, first)
	}
	var get messages.GetProducerOffsetsResponse
	if err := plain.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("launcher-job")}, &get); err != nil ||
		len(get.GetTableOffsets()) != 1 {
		t.Fatalf("the data after the second start: %v %v (a new server would have none)", &get, err)
	}

	l.stop(t, ctx)
	for _, addr := range []string{first.BootstrapServers, *first.SASLBootstrapServers} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Fatalf("%s still accepts connections after stop", addr)
		}
	}
	if _, err := os.Stat(filepath.Join(l.tmp, "fluss-test-cluster", l.name)); !os.IsNotExist(err) {
		t.Fatalf("the state folder is left after stop: %v", err)
	}
	l.stop(t, ctx)
}

// TestTestClusterLauncherRustClient: Fluss's Rust client (fluss-rs-compat)
// pointed at what the launcher's CLUSTER_JSON names, as fluss-rust's
// harness would hand it over: its ping and offsets scenarios (register,
// get, delete) pass on the PLAINTEXT bootstrap and, logged in as
// admin/admin-secret, on the SASL one; the launched server's request log
// holds the calls of each run under its producer ids; stop ends the server.
func TestTestClusterLauncherRustClient(t *testing.T) {
	rust := buildRustClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	l, ci := launchSASL(t, ctx, "compat-rust-")
	if ci.SASLBootstrapServers == nil {
		t.Fatalf("CLUSTER_JSON %+v: no sasl_bootstrap_servers after --sasl", ci)
	}
	control := &controlapi.Client{Base: ci.ControlURL}
	for _, tc := range []struct {
		suffix, bootstrap, user, password string
	}{
		{"launcherplain", ci.BootstrapServers, "", ""},
		{"launchersasl", *ci.SASLBootstrapServers, "admin", "admin-secret"},
	} {
		run := runRust(t, rust, tc.bootstrap, tc.user, tc.password, "--id-suffix", tc.suffix, "ping", "offsets")
		if l := run.line("ping.server-nodes"); !strings.HasPrefix(l, "PASS ") {
			t.Errorf("%s ping.server-nodes: %q, want PASS", tc.suffix, l)
		}
		checkRustOffsets(t, run, tc.suffix)
		page, err := control.Log(ctx, url.Values{"producer_id": {"rs-" + tc.suffix}})
		if err != nil {
			t.Fatal(err)
		}
		keys := map[int32]int{}
		for _, e := range page.Entries {
			keys[e.APIKey]++
			if tc.user != "" && e.Principal != tc.user {
				t.Errorf("%s: a call logged as principal %q, want %q", tc.suffix, e.Principal, tc.user)
			}
		}
		if keys[int32(messages.KeyRegisterProducerOffsets)] == 0 || keys[int32(messages.KeyGetProducerOffsets)] == 0 ||
			keys[int32(messages.KeyDeleteProducerOffsets)] == 0 {
			t.Errorf("%s: the launched server logged %v for producer rs-%s, want REGISTER, GET and DELETE", tc.suffix, keys, tc.suffix)
		}
	}
	l.stop(t, ctx)
	if c, err := net.DialTimeout("tcp", ci.BootstrapServers, time.Second); err == nil {
		c.Close()
		t.Fatalf("%s still accepts connections after stop", ci.BootstrapServers)
	}
}
