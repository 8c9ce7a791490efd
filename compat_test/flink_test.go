package compat_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	compat "github.com/fluss-sidecar/fluss-sidecar/compat_test"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// TestFlinkExactlyOnce: a real Flink job (a local MiniCluster) writes
// 20,000 rows of keys 0..99, value 1, through Fluss's Flink connector
// (fluss-flink-1.20 0.9.1) into an aggregation-merge-engine table (SUM),
// bootstrapped through a proxy sidecar in front of a real Fluss 0.9.1
// cluster (deployment "a": every coordinator call reaches the sidecar, the
// producer-offsets registry included). The job fails once on purpose; after
// it finishes every key's sum must equal its count: exactly once. Cases:
//   - after-checkpoint: the sink recovers from its checkpointed offsets;
//   - before-checkpoint: no checkpoint yet, so the sink recovers from the
//     offsets it registered in the registry when the job started;
//   - sidecar-restart: before-checkpoint, and the sidecar is stopped for
//     eight seconds as the job fails, so the recovery meets it down and then
//     back with the registry read from ZooKeeper and the remote directory.
//
// The registry calls each case made are logged from the sidecar's metrics.
func TestFlinkExactlyOnce(t *testing.T) {
	job := buildFlinkJob(t)
	r := startProxyRig(t, flusstest.Fluss091, "a", false)
	// At 5,000 rows a second, a failure at row 5,000 comes about a second
	// into the job; with checkpoints 5 s apart (the first after at least
	// 4 s) no checkpoint has completed yet, and rows have reached Fluss.
	for _, tc := range []struct {
		name, fail     string
		failAt         int
		checkpointMs   int
		restartSidecar bool
		// recovery is the sink's log line proving which recovery ran.
		recovery string
	}{
		{"after-checkpoint", "after-checkpoint", 10000, 1000, false, "CHECKPOINT_RECOVERY"},
		{"before-checkpoint", "before-checkpoint", 5000, 5000, false, "PRODUCER_OFFSET_RECOVERY"},
		{"sidecar-restart", "before-checkpoint", 5000, 5000, true, "PRODUCER_OFFSET_RECOVERY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := registryCalls(t, r)
			start := time.Now()
			restarted := false
			onLine := func(line string, _ io.Writer) {
				if tc.restartSidecar && !restarted && strings.HasPrefix(line, "EVENT failing") {
					restarted = true
					r.restartSidecar(t, 8*time.Second)
				}
			}
			out := job.run(t, r, onLine, "--table", strings.ReplaceAll(tc.name, "-", "_"),
				"--records", "20000", "--keys", "100", "--prefill", "1000",
				"--fail", tc.fail, "--fail-at", strconv.Itoa(tc.failAt), "--checkpoint-ms", strconv.Itoa(tc.checkpointMs))
			after := registryCalls(t, r)
			if tc.restartSidecar {
				before = map[string]float64{} // a new sidecar counts from zero
				if !restarted {
					t.Fatalf("the sidecar was never restarted:\n%s", out.stdout)
				}
			}
			t.Logf("%s: job %.1fs; registry calls answered by the sidecar: %s", tc.name, time.Since(start).Seconds(), diffCalls(before, after))
			t.Logf("job events:\n%s", grepLines(out.stdout, "EVENT", "RESULT"))
			t.Logf("sink recovery log:\n%s", grepLines(out.stderr, "Recovery", "Registration", "registering", "producer offsets"))
			if !out.passed {
				t.Fatalf("the Flink job did not pass:\n%s\n%s", out.stdout, tail(out.stderr, 60))
			}
			if !strings.Contains(out.stdout, "EVENT failing") {
				t.Fatalf("no failure was injected:\n%s", out.stdout)
			}
			if !strings.Contains(out.stderr, tc.recovery) {
				t.Fatalf("the sink never logged %s: the recovery under test did not run", tc.recovery)
			}
		})
	}
	// The check bites: a stale registry entry, planted under the sink's
	// producer id before the job registers (REGISTER keeps a live entry),
	// says the buckets were empty when the job started. Recovering from it
	// the sink undoes the rows written before the job, so sums come out
	// wrong and the job must report it.
	t.Run("stale-registry-entry-fails", func(t *testing.T) {
		const id = "flinkjob-stale"
		planted := false
		onLine := func(line string, stdin io.Writer) {
			v, ok := strings.CutPrefix(line, "EVENT table-id ")
			if !ok {
				return
			}
			tableID, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				err = plantOffsets(t.Context(), r, id, tableID, 4)
			}
			if err != nil {
				t.Errorf("planting the stale entry: %v", err)
			} else {
				planted = true
			}
			io.WriteString(stdin, "go\n")
		}
		out := job.run(t, r, onLine, "--table", "stale", "--records", "20000", "--keys", "100", "--prefill", "1000",
			"--fail", "before-checkpoint", "--fail-at", "5000", "--checkpoint-ms", "5000", "--producer-id", id, "--wait-stdin", "true")
		t.Logf("job events:\n%s", grepLines(out.stdout, "EVENT", "RESULT", "MISMATCH"))
		if !planted {
			t.Fatalf("the stale entry was not planted:\n%s\n%s", out.stdout, tail(out.stderr, 40))
		}
		if out.passed || !strings.Contains(out.stdout, "RESULT FAIL") {
			t.Fatalf("the job passed from a stale registry entry; the exactly-once check does not bite:\n%s", out.stdout)
		}
	})
}

// plantOffsets registers offset 0 for buckets 0..buckets-1 of tableID
// under id through the sidecar.
func plantOffsets(ctx context.Context, r *proxyRig, id string, tableID int64, buckets int32) error {
	c, err := wire.Dial(ctx, r.addr, wire.ClientOptions{})
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Handshake(ctx); err != nil {
		return err
	}
	tb := &messages.PbProducerTableOffsets{TableId: proto.Int64(tableID)}
	for b := int32(0); b < buckets; b++ {
		tb.BucketOffsets = append(tb.BucketOffsets, &messages.PbBucketOffset{BucketId: proto.Int32(b), LogEndOffset: proto.Int64(0)})
	}
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TableOffsets: []*messages.PbProducerTableOffsets{tb}}
	return c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, &messages.RegisterProducerOffsetsResponse{})
}

// flinkJob is compat_test/flinkjob/ExactlyOnceJob.java compiled against
// the jars scripts/resolve-maven.sh resolved into .deps/maven/flinkjob.
type flinkJob struct {
	classpath, log4j string
}

func buildFlinkJob(t *testing.T) *flinkJob {
	t.Helper()
	compat.SkipIfShort(t)
	root, err := flusstest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	jars, err := flusstest.MavenClasspath(root, "flinkjob")
	if err != nil {
		t.Fatal(err)
	}
	classes := t.TempDir()
	src := filepath.Join(root, "compat_test", "flinkjob", "ExactlyOnceJob.java")
	if out, err := exec.CommandContext(t.Context(), "javac", "-nowarn", "-cp", jars, "-d", classes, src).CombinedOutput(); err != nil {
		t.Fatalf("javac ExactlyOnceJob: %v\n%s", err, out)
	}
	// Flink quiet, the sink's recovery at INFO, all on stderr.
	log4j := filepath.Join(classes, "log4j2.properties")
	conf := strings.Join([]string{
		"rootLogger.level = WARN",
		"rootLogger.appenderRef.err.ref = err",
		"appender.err.type = Console",
		"appender.err.name = err",
		"appender.err.target = SYSTEM_ERR",
		"appender.err.layout.type = PatternLayout",
		"appender.err.layout.pattern = %d{HH:mm:ss.SSS} %-5p %c{1} - %m%n",
		"logger.undo.name = org.apache.fluss.flink.sink.undo",
		"logger.undo.level = INFO",
	}, "\n") + "\n"
	if err := os.WriteFile(log4j, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return &flinkJob{classpath: classes + string(filepath.ListSeparator) + jars, log4j: log4j}
}

// run runs the job against the rig's sidecar and hands every line it
// prints to onLine (on the test's goroutine), with the job's stdin.
func (j *flinkJob) run(t *testing.T, r *proxyRig, onLine func(line string, stdin io.Writer), args ...string) clientRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	argv := append([]string{
		"--add-opens=java.base/java.nio=ALL-UNNAMED",
		"--add-opens=java.base/java.util=ALL-UNNAMED",
		"--add-opens=java.base/java.lang=ALL-UNNAMED",
		"-Dlog4j.configurationFile=" + j.log4j,
		"-cp", j.classpath, "ExactlyOnceJob", "--bootstrap", r.addr,
	}, args...)
	cmd := exec.CommandContext(ctx, "java", argv...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	sc := bufio.NewScanner(pipe)
	for sc.Scan() {
		line := sc.Text()
		stdout.WriteString(line + "\n")
		onLine(line, stdin)
	}
	err = cmd.Wait()
	out := clientRun{stdout: stdout.String(), stderr: stderr.String()}
	out.passed = err == nil && strings.Contains(out.stdout, "RESULT PASS")
	return out
}

// registryCalls scrapes the sidecar's answered-request counters of the
// three producer-offsets APIs.
func registryCalls(t *testing.T, r *proxyRig) map[string]float64 {
	t.Helper()
	code, body := apptest.HTTPGet(t, "http://"+r.sidecar.MetricsAddr()+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics answered %d", code)
	}
	m := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if !strings.Contains(line, "ProducerOffsets") || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.Contains(line, "request_requestsTotal") && !strings.Contains(line, "request_errorsTotal") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		m[strings.TrimPrefix(line[:i], "fluss_sidecar_")] = v
	}
	return m
}

func diffCalls(before, after map[string]float64) string {
	var parts []string
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			parts = append(parts, fmt.Sprintf("%s=%g", k, d))
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// grepLines returns the lines of s holding any of subs.
func grepLines(s string, subs ...string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				b.WriteString(l + "\n")
				break
			}
		}
	}
	return b.String()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	l := strings.Split(s, "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
