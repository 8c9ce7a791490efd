package prometheus

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/storagetest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// shortFor is every alert's for: duration in the end-to-end test, so that
// an alert fires seconds after its condition holds.
const shortFor = "2s"

// testRules writes rules.yml with every for: set to shortFor and returns
// its path.
func testRules(t *testing.T, dir string) string {
	t.Helper()
	var f ruleFile
	readYAML(t, "rules.yml", &f)
	for gi := range f.Groups {
		for ri := range f.Groups[gi].Rules {
			if f.Groups[gi].Rules[ri].For != "" {
				f.Groups[gi].Rules[ri].For = shortFor
			}
		}
	}
	out, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// promServer is a Prometheus process started by a test.
type promServer struct {
	addr string
	log  *syncbuf.Buffer
}

// startPrometheus runs Debian's prometheus binary on a free loopback port
// with its own configuration and data directory, scraping target every
// second and evaluating rulesPath every second, and stops it when the test
// ends.
func startPrometheus(t *testing.T, target, rulesPath string) *promServer {
	t.Helper()
	skipIfShort(t)
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not found: run scripts/install-deps.sh (Debian: apt-get install -y prometheus)")
	}
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: fluss-sidecar
    static_configs:
      - targets: ['%s']
`, rulesPath, target)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	port := zktest.LoopbackPort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := &promServer{addr: addr, log: &syncbuf.Buffer{}}
	cmd := exec.Command(bin,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn",
	)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = promProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	eventually.True(t, "Prometheus to be ready", func() bool {
		select {
		case <-exited:
			t.Fatalf("prometheus exited:\n%s", p.log.String())
		default:
		}
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// promAlert is one entry of /api/v1/alerts.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

// alerts returns the pending and firing alerts.
func (p *promServer) alerts(t *testing.T) []promAlert {
	t.Helper()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/alerts", &r)
	if r.Status != "success" {
		t.Fatalf("/api/v1/alerts: status %q", r.Status)
	}
	return r.Data.Alerts
}

// query returns the values of an instant query's vector result.
func (p *promServer) query(t *testing.T, expr string) []string {
	t.Helper()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	p.get(t, "/api/v1/query?query="+url.QueryEscape(expr), &r)
	if r.Status != "success" {
		t.Fatalf("query %q: status %q", expr, r.Status)
	}
	var out []string
	for _, s := range r.Data.Result {
		out = append(out, fmt.Sprint(s.Value[1]))
	}
	return out
}

func (p *promServer) get(t *testing.T, path string, v any) {
	t.Helper()
	_, body := apptest.HTTPGet(t, "http://"+p.addr+path)
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%s: %v: %s", path, err, body)
	}
}

// alertState is the state of the named alert for instance: "firing",
// "pending", or "" when Prometheus lists none (inactive or resolved).
func (p *promServer) alertState(t *testing.T, name, instance string) string {
	t.Helper()
	for _, a := range p.alerts(t) {
		if a.Labels["alertname"] == name && a.Labels["instance"] == instance {
			return a.State
		}
	}
	return ""
}

// TestAlertsFireOnRealPrometheus: a real Prometheus scrapes a real sidecar
// and evaluates rules.yml (each for: shortened to 2 s). Healthy, no alert
// is pending or firing. ZooKeeper stopped fires
// FlussSidecarZooKeeperDisconnected, which resolves once ZooKeeper is back;
// the producers directory remounted read-only fires
// FlussSidecarRemoteStorageRefusesWrites, which resolves once it is
// writable again. The sidecar stopped fires FlussSidecarDown.
func TestAlertsFireOnRealPrometheus(t *testing.T) {
	zk := zktest.StartT(t)
	dir := t.TempDir()
	lock, unlock := storagetest.ProducersLock(t, dir)
	a := apptest.Start(t, zk.Addr, reporterOn(map[string]string{
		app.KeyRemoteDataDir:        "file://" + dir,
		app.KeyStorageCheckInterval: "200ms",
	}))
	// Start Prometheus once the sidecar is settled (the cache's watch set
	// and its index listed), so that the healthy phase is healthy.
	eventually.True(t, "the snapshot cache's watch and index", func() bool {
		s := a.Cache().Stats()
		return s.Watching && s.IndexedIDs >= 0
	})
	instance := a.MetricsAddr()
	p := startPrometheus(t, instance, testRules(t, t.TempDir()))
	eventually.True(t, "the first scrapes and evaluations", func() bool {
		v := p.query(t, `count_over_time(fluss_sidecar_zookeeper_sessionConnected[1m])`)
		n, _ := strconv.ParseFloat(strings.Join(v, ""), 64)
		return len(v) == 1 && n >= 3
	})
	if as := p.alerts(t); len(as) != 0 {
		t.Fatalf("a healthy sidecar has alerts: %+v", as)
	}

	faults := []struct {
		alert         string
		inject, clear func()
	}{
		{"FlussSidecarZooKeeperDisconnected", zk.Stop, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if err := zk.Restart(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"FlussSidecarRemoteStorageRefusesWrites", lock, unlock},
	}
	for _, f := range faults {
		start := time.Now()
		f.inject()
		eventually.True(t, f.alert+" to fire", func() bool { return p.alertState(t, f.alert, instance) == "firing" })
		fired := time.Since(start)
		for _, al := range p.alerts(t) {
			if al.Labels["alertname"] == f.alert && (al.Labels["severity"] != "critical" || !strings.Contains(al.Annotations["runbook_url"], "#"+strings.ToLower(f.alert))) {
				t.Errorf("%s fired with labels %v annotations %v", f.alert, al.Labels, al.Annotations)
			}
		}
		f.clear()
		cleared := time.Now()
		eventually.True(t, f.alert+" to resolve", func() bool { return p.alertState(t, f.alert, instance) == "" })
		t.Logf("%s: fired %v after the fault, resolved %v after it was removed", f.alert, fired.Round(100*time.Millisecond), time.Since(cleared).Round(100*time.Millisecond))
	}
	// Last, the sidecar stops: Prometheus's up series for the job named
	// fluss-sidecar fires FlussSidecarDown (there is nothing to resolve it
	// with: a new sidecar would take another port).
	stopped := time.Now()
	a.Close()
	eventually.True(t, "FlussSidecarDown to fire", func() bool { return p.alertState(t, "FlussSidecarDown", instance) == "firing" })
	t.Logf("FlussSidecarDown: fired %v after the sidecar stopped", time.Since(stopped).Round(100*time.Millisecond))
	if out := p.log.String(); strings.Contains(out, "level=error") {
		t.Errorf("prometheus logged errors:\n%s", out)
	}
}

// TestProxyAlertFiresOnRealPrometheus: a real Prometheus scrapes a
// proxy-mode sidecar in front of a fake coordinator while a client keeps
// forwarding requests and registering producer offsets. The coordinator
// turned standby (65 to everything) fires FlussSidecarProxyUpstreamNotLeader
// while every register still succeeds; the coordinator leading again
// resolves it.
func TestProxyAlertFiresOnRealPrometheus(t *testing.T) {
	zk := zktest.StartT(t)
	fake, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	a := apptest.Start(t, zk.Addr, reporterOn(map[string]string{
		app.KeyMode: app.ModeProxy, app.KeyUpstreamAddress: fake.Addr(),
		app.KeyRemoteDataDir: "file://" + t.TempDir(),
		app.KeyMaxResends:    "1",
	}))
	const alert = "FlussSidecarProxyUpstreamNotLeader"
	c := dial(t, a.Addr())
	ctx, stop := context.WithCancel(context.Background())
	var regs, regFailures, notLeader, forwarded atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond) // paces the load; nothing is timed
		defer tick.Stop()
		for n := 0; ctx.Err() == nil; n++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			r, err := c.CallRaw(ctx, messages.KeyListDatabases, 0, nil)
			if err == nil {
				forwarded.Add(1)
				if fe, ok := flusserr.From(r.Err()); ok && fe.Code == flusserr.NotCoordinatorLeader {
					notLeader.Add(1)
				}
			}
			if err := register(ctx, c, fmt.Sprintf("alert-p%d", n)); err != nil {
				if ctx.Err() == nil {
					regFailures.Add(1)
				}
			} else {
				regs.Add(1)
			}
		}
	}()
	t.Cleanup(func() { stop(); <-done })

	instance := a.MetricsAddr()
	p := startPrometheus(t, instance, testRules(t, t.TempDir()))
	eventually.True(t, "the first scrapes of forwarded answers", func() bool {
		v := p.query(t, `fluss_sidecar_proxy_upstreamAnswersTotal`)
		n, _ := strconv.ParseFloat(strings.Join(v, ""), 64)
		return len(v) == 1 && n >= 3
	})
	if st := p.alertState(t, alert, instance); st != "" {
		t.Fatalf("%s is %s while the coordinator leads", alert, st)
	}
	start := time.Now()
	fake.SetStandby(true)
	eventually.True(t, alert+" to fire", func() bool { return p.alertState(t, alert, instance) == "firing" })
	fired := time.Since(start)
	regsWhileLeaderless := regs.Load()
	eventually.True(t, "registers to succeed while the coordinator is leaderless", func() bool {
		return regs.Load() >= regsWhileLeaderless+3
	})
	for _, al := range p.alerts(t) {
		if al.Labels["alertname"] == alert && (al.Labels["severity"] != "warning" || !strings.Contains(al.Annotations["runbook_url"], "#"+strings.ToLower(alert))) {
			t.Errorf("%s fired with labels %v annotations %v", alert, al.Labels, al.Annotations)
		}
	}
	fake.SetStandby(false)
	cleared := time.Now()
	eventually.True(t, alert+" to resolve", func() bool { return p.alertState(t, alert, instance) == "" })
	t.Logf("%s: fired %v after the coordinator turned standby, resolved %v after it led again; %d forwarded requests (%d answered 65), %d registers, %d failed",
		alert, fired.Round(100*time.Millisecond), time.Since(cleared).Round(100*time.Millisecond), forwarded.Load(), notLeader.Load(), regs.Load(), regFailures.Load())
	if regFailures.Load() != 0 {
		t.Errorf("%d registers failed through the proxy", regFailures.Load())
	}
	if notLeader.Load() == 0 {
		t.Error("no forwarded request was answered 65: the fault did not reach the client with max-resends 1")
	}
	if out := p.log.String(); strings.Contains(out, "level=error") {
		t.Errorf("prometheus logged errors:\n%s", out)
	}
}
