package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// binEnv names a fluss-sidecar binary to run instead of this tree's: to
// run the same load against another version (an older one, to see the
// growth the run is meant to catch).
const binEnv = "SOAK_BIN"

// buildSidecar builds ./cmd/fluss-sidecar into a directory of the test's
// and returns the binary's path: the run starts the real command, as an
// operator's service manager would.
func buildSidecar(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv(binEnv); bin != "" {
		t.Logf("running %s=%s, not this tree's build", binEnv, bin)
		return bin
	}
	bin := filepath.Join(t.TempDir(), "fluss-sidecar")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "../../cmd/fluss-sidecar").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// sidecarProc is one `fluss-sidecar serve` process, restartable on the
// ports it was given.
type sidecarProc struct {
	name        string
	bin         string
	kv          map[string]string
	addr        string // 127.0.0.1:port, the same across restarts
	metricsPort int
	log         string // its stderr, appended across restarts

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func newSidecar(t *testing.T, name, bin string, kv map[string]string) *sidecarProc {
	t.Helper()
	p := &sidecarProc{name: name, bin: bin, kv: map[string]string{}, log: filepath.Join(t.TempDir(), "sidecar-"+name+".log")}
	for k, v := range kv {
		p.kv[k] = v
	}
	p.addr = fmt.Sprintf("127.0.0.1:%d", zktest.LoopbackPort(t))
	p.metricsPort = zktest.LoopbackPort(t)
	p.kv["bind.listeners"] = "FLUSS://" + p.addr
	p.kv["metrics.reporters"] = "prometheus"
	p.kv["metrics.reporter.prometheus.port"] = strconv.Itoa(p.metricsPort)
	t.Cleanup(func() {
		if _, err := p.Stop(30 * time.Second); err != nil {
			t.Logf("sidecar %s: %v", name, err)
		}
	})
	return p
}

// Start runs the process and waits until it serves and /readyz answers
// 200. The ports may stay taken for a moment after a stop; it retries.
func (p *sidecarProc) Start(ctx context.Context) error {
	var err error
	for range 20 {
		if err = p.start(ctx); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	return err
}

func (p *sidecarProc) start(ctx context.Context) error {
	args := []string{"serve"}
	for k, v := range p.kv {
		args = append(args, "-D"+k+"="+v)
	}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(p.bin, args...)
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- strings.TrimSpace(line)
		io.Copy(io.Discard, r)
		cmd.Wait()
		close(done)
	}()
	fail := func(why string) error {
		cmd.Process.Kill()
		<-done
		b, _ := os.ReadFile(p.log)
		return fmt.Errorf("sidecar %s did not start: %s; its log ends:\n%s", p.name, why, tail(string(b), 3000))
	}
	select {
	case line := <-lines:
		if line != p.addr {
			return fail(fmt.Sprintf("first line %q, want %s", line, p.addr))
		}
	case <-time.After(2 * time.Minute):
		return fail("no address printed within 2 minutes")
	}
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	for {
		if readyz(p.metricsPort) == nil {
			return nil
		}
		select {
		case <-done:
			return fail("exited before /readyz answered 200")
		case <-ctx.Done():
			return fmt.Errorf("sidecar %s: /readyz: %w", p.name, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop sends SIGTERM and waits for the exit, up to timeout; then it
// kills the process and says so. It returns the exit status.
func (p *sidecarProc) Stop(timeout time.Duration) (int, error) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return 0, nil
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
		return cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		cmd.Process.Kill()
		<-done
		return -1, fmt.Errorf("sidecar %s did not exit within %v of SIGTERM; killed", p.name, timeout)
	}
}

// PID is the running process's id, 0 when it is stopped.
func (p *sidecarProc) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// LogTail is the end of the sidecar's log.
func (p *sidecarProc) LogTail(n int) string {
	b, _ := os.ReadFile(p.log)
	return tail(string(b), n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func readyz(port int) error {
	resp, err := httpClient.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("/readyz: %s", resp.Status)
	}
	return nil
}

// The quantities sampled from each sidecar, by name in the CSV and the
// tables: /metrics first, then /proc.
var metricQuantities = []struct{ name, family string }{
	{"rss", "process_resident_memory_bytes"},
	{"heap_inuse", "go_memstats_heap_inuse_bytes"},
	{"goroutines", "go_goroutines"},
	{"fds", "process_open_fds"},
	{"connections", "fluss_sidecar_connection_open"},
	{"cache_entries", "fluss_sidecar_snapshotCache_entries"},
	{"cache_bytes", "fluss_sidecar_snapshotCache_bytes"},
	{"cache_files", "fluss_sidecar_snapshotCache_files"},
	{"cache_absences", "fluss_sidecar_snapshotCache_absences"},
	{"index_ids", "fluss_sidecar_snapshotCache_indexedProducerIds"},
}

var procQuantities = []string{"proc_rss", "proc_threads", "proc_fds"}

// scrape reads the metricQuantities families from a sidecar's /metrics,
// each summed over its labels (connection_open has one series per
// listener). A family the sidecar does not export (an older binary's) is
// left out: its quantity then has no samples and no verdict.
func scrape(ctx context.Context, port int) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, q := range metricQuantities {
		f, ok := fams[q.family]
		if !ok {
			continue
		}
		var sum float64
		for _, m := range f.Metric {
			sum += value(m)
		}
		out[q.name] = sum
	}
	return out, nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

// procStats reads the resident set and thread count from
// /proc/PID/status and counts /proc/PID/fd: what the kernel says, beside
// what the process's collector says.
func procStats(pid int) (map[string]float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			out["proc_rss"] = n * 1024 // kB
		case "Threads":
			out["proc_threads"] = n
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil, err
	}
	out["proc_fds"] = float64(len(fds))
	if len(out) != len(procQuantities) {
		return nil, fmt.Errorf("/proc/%d/status: found %v", pid, out)
	}
	return out, nil
}

// liveData counts what is stored, from the stores themselves: producer
// znodes under root in ZooKeeper and offsets files under the remote
// directory.
func liveData(conn *gozk.Conn, root, dir string) (map[string]float64, error) {
	kids, _, err := conn.Children(root + "/producers")
	if err != nil {
		return nil, fmt.Errorf("zookeeper %s/producers: %w", root, err)
	}
	if strings.HasPrefix(dir, "hdfs://") {
		files, err := countRemoteFiles(dir)
		if err != nil {
			return nil, err
		}
		return map[string]float64{"zk_producers": float64(len(kids)), "remote_files": float64(files)}, nil
	}
	files := 0
	err = filepath.WalkDir(filepath.Join(strings.TrimPrefix(dir, "file://"), "producers"), func(_ string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while walking
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			files++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return map[string]float64{"zk_producers": float64(len(kids)), "remote_files": float64(files)}, nil
}

var liveQuantities = []string{"zk_producers", "remote_files"}
