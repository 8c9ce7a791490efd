package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

var zkAddr string

func TestMain(m *testing.M) {
	if os.Getenv(runAsCommand) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) // see embedded_test.go
	}
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// startApp starts a whole sidecar from a Fluss-style YAML file plus -D
// overrides, as `fluss-sidecar serve` does.
func startApp(t *testing.T) (*app.App, string) {
	t.Helper()
	zktest.SkipIfShort(t)
	dir := t.TempDir()
	yaml := filepath.Join(dir, "server.yaml")
	os.WriteFile(yaml, []byte(`
bind.listeners: FLUSS://127.0.0.1:9123
zookeeper.address: 127.0.0.1:1
zookeeper.path.root: `+zktest.UniqueRoot()+`
remote.data.dir: `+filepath.Join(dir, "remote")+`
coordinator.producer-offsets.ttl: 1 h
`), 0o644)
	cfg, err := loadConfig([]string{"--config", yaml, "-Dbind.listeners=FLUSS://127.0.0.1:0", "-Dzookeeper.address=" + zkAddr})
	if err != nil {
		t.Fatal(err)
	}
	if s, err := app.FromConfig(cfg); err != nil || s.ProducerOffsetsTTL != time.Hour {
		t.Fatalf("ttl from YAML: %v %v", s.ProducerOffsetsTTL, err)
	}
	a := apptest.StartConfig(t, cfg, app.Options{})
	return a, filepath.Join(dir, "remote")
}

func cli(t *testing.T, args ...string) (map[string]any, int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	var v map[string]any
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("stdout is not JSON: %q", out.String())
		}
	}
	return v, code, errOut.String()
}

func TestCLIRoundTrip(t *testing.T) {
	a, remoteDir := startApp(t)
	bs := a.Addr()
	out, code, stderr := cli(t, "offsets", "register", "--bootstrap", bs, "--producer-id", "job-1",
		"--offset", "100:0=42", "--offset", "100:1=7", "--offset", "200:5:0=9")
	if code != 0 || out["result"] != "CREATED" {
		t.Fatalf("register: %d %v %s", code, out, stderr)
	}
	out, _, _ = cli(t, "offsets", "register", "--bootstrap", bs, "--producer-id", "job-1", "--offset", "100:0=1")
	if out["result"] != "ALREADY_EXISTS" {
		t.Fatalf("second register: %v", out)
	}
	out, code, _ = cli(t, "offsets", "get", "--bootstrap", bs, "--producer-id", "job-1")
	b, _ := json.Marshal(out["tables"])
	if code != 0 || out["found"] != true || string(b) != `[{"buckets":[{"bucket_id":0,"log_end_offset":42},{"bucket_id":1,"log_end_offset":7}],"table_id":100},{"buckets":[{"bucket_id":0,"log_end_offset":9,"partition_id":5}],"table_id":200}]` {
		t.Fatalf("get: %d %v", code, string(b))
	}
	// The file is where Fluss puts it, with Fluss's bytes.
	matches, _ := filepath.Glob(filepath.Join(remoteDir, "producers", "job-1", "100", "*.offsets"))
	if len(matches) != 1 {
		t.Fatalf("offsets files: %v", matches)
	}
	if data, _ := os.ReadFile(matches[0]); string(data) != `{"version":1,"table_id":100,"bucket_offsets":[42,7]}` {
		t.Fatalf("file bytes %s", data)
	}
	out, code, _ = cli(t, "offsets", "delete", "--bootstrap", bs, "--producer-id", "job-1")
	if code != 0 || out["deleted"] != true {
		t.Fatalf("delete: %v", out)
	}
	out, _, _ = cli(t, "offsets", "get", "--bootstrap", bs, "--producer-id", "job-1")
	if out["found"] != false {
		t.Fatalf("get after delete: %v", out)
	}
	_, code, stderr = cli(t, "offsets", "get", "--bootstrap", bs, "--producer-id", "a b")
	if code != 1 || !strings.Contains(stderr, `"error_code":63`) || !strings.Contains(stderr, "Invalid producer ID 'a b'") {
		t.Fatalf("invalid id: %d %s", code, stderr)
	}
}

func TestCLIUsageErrors(t *testing.T) {
	cases := [][]string{
		{},
		{"bogus"},
		{"offsets"},
		{"offsets", "frobnicate"},
		{"offsets", "register", "--offset", "nonsense"},
		{"offsets", "register", "--offset", "1:2:3:4=5"},
		{"serve", "--config"},
		{"serve", "stray"},
		{"serve", "-Dzookeeper.address="}, // no ZooKeeper: a configuration error, not a hang
	}
	for _, args := range cases {
		if _, code, _ := cli(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestServeRefusesBadSettings(t *testing.T) {
	cfg, err := loadConfig([]string{"-Dzookeeper.address=x:1", "-Dremote.data.dir=/tmp/x", "-Dcoordinator.producer-offsets.cleanup-interval=0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.FromConfig(cfg); err == nil || !strings.Contains(err.Error(), "cleanup-interval") {
		t.Fatalf("want cleanup-interval error, got %v", err)
	}
}

// TestServeReadsRemoteDirsFromFile: remote.data.dirs in a --config file,
// after serve has merged the file in: on one line its first entry is the
// remote directory; as a YAML list, which Fluss's reader skips, it is
// refused.
func TestServeReadsRemoteDirsFromFile(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, yaml, err string }{
		{"one line", "remote.data.dirs: file:///tmp/a, file:///tmp/b\n", ""},
		{"YAML list", "remote.data.dirs:\n  - file:///tmp/a\n  - file:///tmp/b\n", "written as a YAML list"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte("zookeeper.address: 127.0.0.1:2181\n"+tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadConfig([]string{"--config", path})
		if err != nil {
			t.Fatal(err)
		}
		s, err := app.FromConfig(cfg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.err)
			}
			continue
		}
		if err != nil || s.RemoteDataDir != "file:///tmp/a" || s.RemoteDataDirKey != app.KeyRemoteDataDirs {
			t.Errorf("%s: remote dir %q from %q, %v", tt.name, s.RemoteDataDir, s.RemoteDataDirKey, err)
		}
	}
}
