package compat_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
)

// Apache Fluss's Python client (PyPI package pyfluss 1.0.0, pinned with
// its hash in compat_test/python/pyfluss-requirements.txt) driven by
// compat_test/python/pyfluss_client.py. pyfluss exposes no producer-offsets
// call, so against an embedded sidecar it can only connect and read the
// cluster's nodes; through a proxy in front of a real cluster it also
// manages databases and tables and writes and reads rows.

// pyfluss is the venv's python, set up once per test binary by
// scripts/resolve-pip.sh: offline and instant once make test-deps has built
// the venv, a download of two wheels otherwise.
var pyfluss resolved

// runPyfluss runs pyfluss_client.py's scenarios against bootstrap, logged
// in as user with password when user is not "". The caller asserts the
// outcome: some runs must fail.
func runPyfluss(t *testing.T, bootstrap, user, password string, args ...string) clientRun {
	t.Helper()
	python := pyfluss.get(t, "resolve-pip.sh", 10*time.Minute)
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{python, filepath.Join(root, "compat_test", "python", "pyfluss_client.py"), "--bootstrap", bootstrap, "--timeout", "30"}
	if user != "" {
		argv = append(argv, "--user", user, "--password", password)
	}
	r := runProgram(t, "pyfluss_client.py", 3*time.Minute, argv, args...)
	if r.stderr != "" {
		t.Logf("stderr:\n%s", r.stderr)
	}
	return r
}

// pyflussNoOffsets is the line of the offsets scenario: pyfluss 1.0.0 has
// no producer-offsets call. A pin that brings them fails here, and the
// scenario needs its steps.
const pyflussNoOffsets = "FAIL offsets.exposed pyfluss=1.0.0 calls=none reason=pyfluss 1.0.0 exposes no producer-offsets call (register_producer_offsets, get_producer_offsets, delete_producer_offsets): FlussAdmin has only create_database,create_partition,create_table,database_exists,drop_database,"

// requireSteps requires each step's line to start with its want (PASS or
// FAIL) and contain the fragment, and the run to have no FAIL line but those
// wanted.
func requireSteps(t *testing.T, run clientRun, want map[string][2]string) {
	t.Helper()
	for step, w := range want {
		l := run.line(step)
		if !strings.HasPrefix(l, w[0]+" ") || !strings.Contains(l, w[1]) {
			t.Errorf("step %s: %q, want %s with %q", step, l, w[0], w[1])
		}
	}
	for _, l := range strings.Split(run.stdout, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "FAIL" {
			if w, ok := want[f[1]]; !ok || w[0] != "FAIL" {
				t.Errorf("unexpected %q", l)
			}
		}
	}
}

// TestPyflussEmbedded runs pyfluss against an embedded sidecar, without and
// with SASL/PLAIN: it connects and reads the nodes GET_METADATA names;
// offsets reports the missing calls; tables stops at its first call, which
// pyfluss refuses itself since API_VERSIONS does not list CREATE_DATABASE.
// A wrong password fails at connect with the server's AUTHENTICATE error.
func TestPyflussEmbedded(t *testing.T) {
	pyfluss.get(t, "resolve-pip.sh", 10*time.Minute)
	const user, password = "py", "py-secret"
	for _, sasl := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "sasl"}[sasl]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := embedded.Config{}
			login := ""
			if sasl {
				cfg.Security, login = embedded.Users(map[string]string{user: password}), user
			}
			srv, err := embedded.Start(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			run := runPyfluss(t, srv.Addr(), login, password, "ping", "offsets", "tables")
			if run.exit != 1 || !strings.HasSuffix(run.stdout, "\nRESULT FAIL\n") {
				t.Errorf("exit %d, want 1 and RESULT FAIL (offsets and tables cannot pass)", run.exit)
			}
			requireSteps(t, run, map[string][2]string{
				"ping.connect":           {"PASS", "bootstrap=" + srv.Addr()},
				"ping.server-nodes":      {"PASS", "coordinator=" + srv.Addr() + " tablets=127.0.0.1:"},
				"offsets.exposed":        {"FAIL", strings.TrimPrefix(pyflussNoOffsets, "FAIL offsets.exposed ")},
				"tables.create-database": {"FAIL", "error=FlussError code=-2 retriable=False message=Unsupported API version: The server does not support CreateDatabase."},
			})
			if strings.Contains(run.stdout, "tables.create-database-again") {
				t.Error("tables went on after its first step failed")
			}
			if !sasl {
				return
			}
			wrong := runPyfluss(t, srv.Addr(), user, "wrong", "ping")
			if wrong.exit != 1 {
				t.Errorf("a wrong password: exit %d, want 1", wrong.exit)
			}
			requireSteps(t, wrong, map[string][2]string{
				"ping.connect": {"FAIL", "error=FlussError code=46 retriable=False message="},
			})
		})
	}
}

// TestPyflussProxyRealCluster runs pyfluss through a proxy sidecar in front
// of a real Fluss 0.7.0 cluster, whose coordinator advertises the sidecar
// (deployment (a) of docs/proxy.md): every admin call, the write and the
// read pass, the coordinator's errors reach pyfluss with their codes, and
// the client takes the sidecar for the coordinator.
func TestPyflussProxyRealCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Fluss 0.7.0 cluster (JVMs)")
	}
	pyfluss.get(t, "resolve-pip.sh", 10*time.Minute)
	r := startProxyRig(t, flusstest.Fluss070, "a", false)
	run := runPyfluss(t, r.addr, "", "", "--id-suffix", "proxy", "ping", "offsets", "tables")
	if run.exit != 1 || !strings.HasSuffix(run.stdout, "\nRESULT FAIL\n") {
		t.Errorf("exit %d, want 1 and RESULT FAIL (offsets.exposed alone)", run.exit)
	}
	const msg = "retriable=False message="
	requireSteps(t, run, map[string][2]string{
		"ping.connect":      {"PASS", "bootstrap=" + r.addr},
		"ping.server-nodes": {"PASS", "coordinator=" + r.addr + " tablets=127.0.0.1:"},
		"offsets.exposed":   {"FAIL", strings.TrimPrefix(pyflussNoOffsets, "FAIL offsets.exposed ")},

		"tables.create-database":        {"PASS", "database=pyfluss_proxy"},
		"tables.create-database-again":  {"PASS", "error=FlussError code=6 " + msg},
		"tables.database-exists":        {"PASS", "exists=True"},
		"tables.get-database-info":      {"PASS", "database=pyfluss_proxy comment=pyfluss compat"},
		"tables.list-databases":         {"PASS", "pyfluss_proxy"},
		"tables.create-table":           {"PASS", "table=pyfluss_proxy.events buckets=3"},
		"tables.create-table-again":     {"PASS", "error=FlussError code=8 " + msg},
		"tables.table-exists":           {"PASS", "exists=True"},
		"tables.get-table-info":         {"PASS", "buckets=3 bucket_keys=id primary_key=False partitioned=False columns=id,name,ts"},
		"tables.list-tables":            {"PASS", "tables=events"},
		"tables.write":                  {"PASS", "rows=100"},
		"tables.list-offsets":           {"PASS", "latest=0:"},
		"tables.read":                   {"PASS", "rows=100 buckets=0,1,2 change_types=+A"},
		"tables.drop-table":             {"PASS", "exists_after=False"},
		"tables.get-dropped-table-info": {"PASS", "error=FlussError code=7 " + msg},
		"tables.drop-database":          {"PASS", "exists_after=False"},
		"tables.drop-missing-database":  {"PASS", "error=FlussError code=4 " + msg},
	})
}
