package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// runCLI runs the command line and returns stdout, stderr and the exit code.
// The ZooKeeper client logs to stderr from its own goroutine, as to the
// process's stderr, so the buffers are safe for concurrent writes.
func runCLI(args ...string) (string, string, int) {
	var out, errOut syncbuf.Buffer
	code := run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

func TestHelpOnEveryCommand(t *testing.T) {
	cases := [][]string{
		{"--help"}, {"-h"}, {"help"},
		{"serve", "--help"}, {"serve", "-h"}, {"serve", "--config", "x.yaml", "--help"},
		{"offsets", "--help"}, {"offsets", "help"},
		{"offsets", "register", "--help"}, {"offsets", "get", "--help"}, {"offsets", "delete", "-h"},
		{"offsets", "list", "--help"}, {"offsets", "fsck", "--help"}, {"offsets", "export", "--help"},
		{"offsets", "get", "--producer-id", "x", "--help"},
	}
	for _, args := range cases {
		stdout, stderr, code := runCLI(args...)
		if code != 0 || !strings.HasPrefix(stdout, "usage:") || stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	// Each subcommand's help names its own flags.
	for sub, flagName := range map[string]string{"register": "-offset", "list": "-expired", "fsck": "-repair", "export": "-format"} {
		stdout, _, _ := runCLI("offsets", sub, "--help")
		if !strings.Contains(stdout, flagName) {
			t.Errorf("offsets %s --help does not mention %s:\n%s", sub, flagName, stdout)
		}
	}
}

// adminSetup starts a sidecar and returns its address, the server.yaml
// (plus -D overrides) an admin command needs, and remote.data.dir.
func adminSetup(t *testing.T) (addr string, cfgArgs []string, remoteDir string) {
	t.Helper()
	zktest.SkipIfShort(t)
	dir := t.TempDir()
	remoteDir = filepath.Join(dir, "remote")
	yaml := filepath.Join(dir, "server.yaml")
	os.WriteFile(yaml, []byte(`
bind.listeners: FLUSS://127.0.0.1:0
zookeeper.address: 127.0.0.1:1
zookeeper.path.root: `+zktest.UniqueRoot()+`
remote.data.dir: `+remoteDir+`
sidecar.orphan-cleanup.grace-period: 1 h
`), 0o644)
	cfgArgs = []string{"--config", yaml, "-Dzookeeper.address=" + zkAddr}
	cfg, err := loadConfig(cfgArgs)
	if err != nil {
		t.Fatal(err)
	}
	a := apptest.StartConfig(t, cfg, app.Options{})
	return a.Addr(), cfgArgs, remoteDir
}

func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l == "" {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		out = append(out, v)
	}
	return out
}

func TestAdminCommandsEndToEnd(t *testing.T) {
	bs, cfgArgs, remoteDir := adminSetup(t)
	for _, r := range [][]string{
		{"--producer-id", "job-1", "--offset", "100:0=42", "--offset", "100:1=7", "--offset", "200:5:0=9"},
		{"--producer-id", "job-2", "--ttl-ms", "1", "--offset", "100:0=1"},
	} {
		if out, errOut, code := runCLI(append([]string{"offsets", "register", "--bootstrap", bs}, r...)...); code != 0 {
			t.Fatalf("register: %s %s", out, errOut)
		}
	}
	time.Sleep(5 * time.Millisecond) // the sleep is under test: job-2's 1 ms TTL runs out

	admin := func(args ...string) (string, string, int) {
		return runCLI(append(append([]string{"offsets"}, args...), cfgArgs...)...)
	}
	out, errOut, code := admin("list")
	lines := jsonLines(t, out)
	if code != 0 || len(lines) != 2 || lines[0]["producer_id"] != "job-1" || lines[0]["state"] != "live" ||
		lines[0]["buckets"] != 3.0 || lines[1]["state"] != "expired" {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	out, _, code = admin("list", "--expired", "--output", "table")
	rows := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(rows) != 2 || !strings.HasPrefix(rows[0], "PRODUCER_ID") || !strings.HasPrefix(rows[1], "job-2 ") {
		t.Fatalf("list --expired --output table: %d\n%s", code, out)
	}

	out, errOut, code = admin("fsck")
	lines = jsonLines(t, out)
	if code != 0 || len(lines) != 1 || lines[0]["summary"] == nil {
		t.Fatalf("fsck of a clean registry: %d %s %s", code, out, errOut)
	}
	// An old orphan: found (exit 1), kept by the configured 1 h grace
	// period, removed with a shorter one given on the command line.
	orphan := filepath.Join(remoteDir, "producers", "job-1", "100", "orphan.offsets")
	os.WriteFile(orphan, []byte(`{"version":1,"table_id":100,"bucket_offsets":[1]}`), 0o644)
	old := time.Now().Add(-10 * time.Minute)
	os.Chtimes(orphan, old, old)
	out, _, code = admin("fsck", "--repair")
	if code != 1 || !strings.Contains(out, `"kind":"orphan_file"`) || !strings.Contains(out, `"action":"kept"`) {
		t.Fatalf("fsck --repair within grace: %d %s", code, out)
	}
	out, _, code = admin("fsck", "--repair", "--grace-period", "5 min")
	if code != 0 || !strings.Contains(out, `"action":"deleted"`) {
		t.Fatalf("fsck --repair --grace-period 5 min: %d %s", code, out)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("orphan still there: %v", err)
	}

	file := filepath.Join(t.TempDir(), "rows.csv")
	out, errOut, code = admin("export", "--format", "csv", "--output", file)
	if code != 0 || !strings.Contains(out, `"rows":4`) {
		t.Fatalf("export: %d %s %s", code, out, errOut)
	}
	data, _ := os.ReadFile(file)
	got := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(got) != 5 || got[0] != "producer_id,table_id,partition_id,bucket_id,log_end_offset,expiration_time,expired" ||
		!strings.HasPrefix(got[1], "job-1,100,,0,42,") || !strings.HasPrefix(got[3], "job-1,200,5,0,9,") || !strings.HasSuffix(got[4], ",true") {
		t.Fatalf("csv:\n%s", data)
	}
}

func TestAdminCommandErrors(t *testing.T) {
	_, cfgArgs, _ := adminSetup(t)
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"offsets", "list", "--output", "xml"}, 2, "want json or table"},
		{[]string{"offsets", "export", "--format", "xlsx", "--output", "x"}, 2, "want one of parquet"},
		{[]string{"offsets", "export", "--format", "csv"}, 2, "--output FILE is required"},
		{[]string{"offsets", "fsck", "--grace-period", "soon"}, 2, ""},
		{[]string{"offsets", "list", "stray"}, 2, "unexpected arguments"},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(append(c.args, cfgArgs...)...)
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, code, stderr, c.code, c.msg)
		}
	}
	if _, stderr, code := runCLI("offsets", "list", "--config"); code != 2 || !strings.Contains(stderr, "needs a file") {
		t.Errorf("--config without a file: %d %s", code, stderr)
	}
	// No ZooKeeper configured: a configuration error, exit 2.
	if _, stderr, code := runCLI("offsets", "list", "-Dremote.data.dir=/tmp/x"); code != 2 || !strings.Contains(stderr, "zookeeper.address") {
		t.Errorf("no zookeeper.address: %d %s", code, stderr)
	}
	// ZooKeeper unreachable (a closed loopback port): exit 1, JSON error.
	port := zktest.LoopbackPort(t)
	_, stderr, code := runCLI("offsets", "list", "-Dremote.data.dir="+t.TempDir(),
		"-Dzookeeper.address=127.0.0.1:"+strconv.Itoa(port), "-Dzookeeper.client.connection-timeout=1 s", "--timeout", "3s")
	if code != 1 || !strings.Contains(stderr, `"error"`) {
		t.Errorf("unreachable ZooKeeper: %d %s", code, stderr)
	}
}

func jsonNum(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestClientSASL logs the client subcommands in to a SASL listener with
// Fluss's client keys, from -D and from a --config file.
func TestClientSASL(t *testing.T) {
	zktest.SkipIfShort(t)
	c, err := config.Parse([]byte(`
bind.listeners: CLIENT://127.0.0.1:0
security.protocol.map: CLIENT:sasl
security.sasl.enabled.mechanisms: PLAIN
security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_alice="alice-pw";
remote.data.dir: ` + t.TempDir() + `
zookeeper.path.root: ` + zktest.UniqueRoot() + `
zookeeper.address: ` + zkAddr))
	if err != nil {
		t.Fatal(err)
	}
	a := apptest.StartConfig(t, c, app.Options{})
	bs := a.Addr()
	clientYAML := filepath.Join(t.TempDir(), "client.yaml")
	os.WriteFile(clientYAML, []byte("client.security.protocol: SASL\nclient.security.sasl.mechanism: PLAIN\nclient.security.sasl.username: alice\nclient.security.sasl.password: alice-pw\n"), 0o644)
	jaas := `-Dclient.security.sasl.jaas.config=org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required username="alice" password="alice-pw";`

	good := [][]string{
		{"-Dclient.security.protocol=sasl", "-Dclient.security.sasl.username=alice", "-Dclient.security.sasl.password=alice-pw"},
		{"--config", clientYAML},
		{"-Dclient.security.protocol=SASL", jaas},
	}
	for i, login := range good {
		id := "sasl-" + jsonNum(i)
		out, errOut, code := runCLI(append([]string{"offsets", "register", "--bootstrap", bs, "--producer-id", id, "--offset", "1:0=5"}, login...)...)
		if code != 0 || !strings.Contains(out, `"result":"CREATED"`) {
			t.Fatalf("register with %v: %d %s %s", login, code, out, errOut)
		}
		out, _, code = runCLI(append([]string{"offsets", "get", "--bootstrap", bs, "--producer-id", id}, login...)...)
		if code != 0 || !strings.Contains(out, `"log_end_offset":5`) {
			t.Fatalf("get with %v: %d %s", login, code, out)
		}
		if _, _, code = runCLI(append([]string{"offsets", "delete", "--bootstrap", bs, "--producer-id", id}, login...)...); code != 0 {
			t.Fatalf("delete with %v: %d", login, code)
		}
	}

	bad := []struct {
		args []string
		code int
		msg  string
	}{
		// PLAINTEXT against a SASL listener: the server refuses the request.
		{nil, 1, `"error_code":46,"error_message":"The connection has not completed authentication yet.`},
		{[]string{"-Dclient.security.protocol=SASL", "-Dclient.security.sasl.username=alice", "-Dclient.security.sasl.password=nope"}, 1, `"error_code":46,"error_message":"Authentication failed: Invalid username or password"`},
		{[]string{"-Dclient.security.protocol=SASL"}, 2, "no user is given"},
		{[]string{"-Dclient.security.protocol=SSL"}, 2, "neither PLAINTEXT nor SASL"},
		{[]string{"-Dclient.security.protocol=SASL", "-Dclient.security.sasl.mechanism=SCRAM-SHA-256", "-Dclient.security.sasl.username=a"}, 2, "only PLAIN"},
	}
	for _, b := range bad {
		_, stderr, code := runCLI(append([]string{"offsets", "get", "--bootstrap", bs, "--producer-id", "x"}, b.args...)...)
		if code != b.code || !strings.Contains(stderr, b.msg) {
			t.Errorf("%v: exit %d %s, want %d %q", b.args, code, stderr, b.code, b.msg)
		}
	}
}
