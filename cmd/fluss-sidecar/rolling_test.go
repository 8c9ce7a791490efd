package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The rolling restart test plays what Kubernetes does to a Deployment of
// two sidecars behind a Service while clients keep connecting: one pod is
// sent SIGTERM, taken out of the Service's endpoints once its readiness
// probe fails, and replaced by a new pod that joins them once ready. The
// Service is played by service below: for each new connection it picks a
// backend whose /readyz answered 200 at its last probe, and the connection
// then goes straight to that backend, as kube-proxy's rules send it to a
// pod's address. A connection the picked backend refuses is what a client
// of a real Service would see refused.

// backend is one `serve` process (a pod) and what its readiness probe saw.
type backend struct {
	name    string
	cmd     *exec.Cmd
	addr    string // Fluss RPC
	ops     string // metrics and probes
	logs    *syncbuf.Buffer
	exited  chan error // the process's exit, once
	ready   atomic.Bool
	conns   atomic.Int64 // connections the service sent here
	stopped chan struct{}
}

// startBackend runs `fluss-sidecar serve` on shared ZooKeeper root and
// remote dir, and starts probing its /readyz every probeEvery.
func startBackend(t *testing.T, name, root, remote string, extra []string) *backend {
	t.Helper()
	zktest.SkipIfShort(t)
	args := append([]string{"serve",
		"-Dbind.listeners=FLUSS://127.0.0.1:0",
		"-Dzookeeper.address=" + zkAddr,
		"-Dzookeeper.path.root=" + root,
		"-Dremote.data.dir=" + remote,
	}, append(metricsFlags, extra...)...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runAsCommand+"=1")
	b := &backend{name: name, cmd: cmd, logs: &syncbuf.Buffer{}, exited: make(chan error, 1), stopped: make(chan struct{})}
	cmd.Stderr = b.logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		b.stop()
	})
	first, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("%s printed no address: %v\n%s", name, err, b.logs.String())
	}
	go io.Copy(io.Discard, stdout)
	b.addr = strings.TrimSpace(first)
	m := metricsAddrRE.FindStringSubmatch(b.logs.String())
	if m == nil {
		t.Fatalf("%s logged no metrics address:\n%s", name, b.logs.String())
	}
	b.ops = m[1]
	go b.probe()
	return b
}

// probeEvery is the test's readiness probe period (deploy's is 2 s, for a
// 5 s accept delay; the test scales both down).
const probeEvery = 20 * time.Millisecond

// probe polls /readyz until stop, one failure marks the backend unready.
func (b *backend) probe() {
	c := http.Client{Timeout: time.Second}
	tick := time.NewTicker(probeEvery)
	defer tick.Stop()
	for {
		resp, err := c.Get("http://" + b.ops + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		b.ready.Store(err == nil && resp.StatusCode == http.StatusOK)
		select {
		case <-tick.C:
		case <-b.stopped:
			b.ready.Store(false)
			return
		}
	}
}

func (b *backend) stop() {
	select {
	case <-b.stopped:
	default:
		close(b.stopped)
	}
}

// service picks a ready backend for each new connection, round robin.
type service struct {
	mu       sync.Mutex
	backends []*backend
	next     int
}

func (s *service) add(b *backend) {
	s.mu.Lock()
	s.backends = append(s.backends, b)
	s.mu.Unlock()
}

func (s *service) remove(b *backend) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.backends {
		if x == b {
			s.backends = append(s.backends[:i], s.backends[i+1:]...)
			return
		}
	}
}

// dial connects to the next ready backend; errNoEndpoint when none is.
func (s *service) dial(ctx context.Context) (net.Conn, error) {
	s.mu.Lock()
	var b *backend
	for range len(s.backends) {
		c := s.backends[s.next%len(s.backends)]
		s.next++
		if c.ready.Load() {
			b = c
			break
		}
	}
	s.mu.Unlock()
	if b == nil {
		return nil, errNoEndpoint
	}
	b.conns.Add(1)
	var d net.Dialer
	return d.DialContext(ctx, "tcp", b.addr)
}

var errNoEndpoint = errors.New("no ready backend")

// loadStats are what the clients saw.
type loadStats struct {
	conns, refused       atomic.Int64
	sent, answered, lost atomic.Int64 // lost: sent, and the connection ended without its answer
	serverErrors         atomic.Int64 // answers with UNKNOWN_SERVER_ERROR (-1)
	otherErrors          atomic.Int64
	mu                   sync.Mutex
	errorSample          []string
}

func (s *loadStats) String() string {
	return fmt.Sprintf("connections %d, refused %d, requests sent %d, answered %d, unanswered %d, code -1 %d, other error answers %d",
		s.conns.Load(), s.refused.Load(), s.sent.Load(), s.answered.Load(), s.lost.Load(), s.serverErrors.Load(), s.otherErrors.Load())
}

// The connection shapes of the load: one request; a pipelined burst
// written at once; calls one after another on one connection.
const (
	shapeSingle = iota
	shapeBurst
	shapeSequential
	shapes
)

// requestFrames returns the frames of one connection's requests: an
// API_VERSIONS first, as Fluss's clients send, then a register, get and
// delete of a producer of its own, and gets of a producer another worker
// writes (answers for a missing producer are successes too).
func requestFrames(t *testing.T, worker, n int) [][]byte {
	id := fmt.Sprintf("rolling-%d-%d", worker, n)
	other := fmt.Sprintf("rolling-%d-%d", (worker+1)%loadWorkers, n)
	reqs := []struct {
		key messages.Key
		m   proto.Message
	}{
		{messages.KeyAPIVersions, &messages.ApiVersionsRequest{ClientSoftwareName: proto.String("rolling"), ClientSoftwareVersion: proto.String("1")}},
		{messages.KeyRegisterProducerOffsets, &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id),
			TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(int64(worker + 1)),
				BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(int64(n))}}}}}},
		{messages.KeyGetProducerOffsets, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}},
		{messages.KeyGetProducerOffsets, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(other)}},
		{messages.KeyDeleteProducerOffsets, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}},
	}
	var out [][]byte
	for i, r := range reqs {
		body, err := proto.Marshal(r.m)
		if err != nil {
			t.Error(err)
			return nil
		}
		out = append(out, wire.AppendRequest(nil, wire.RequestHeader{APIKey: r.key, RequestID: int32(i + 1)}, body))
	}
	return out
}

// oneConnection runs one connection of the given shape through svc.
func oneConnection(ctx context.Context, t *testing.T, svc *service, st *loadStats, worker, n, shape int) {
	nc, err := svc.dial(ctx)
	if err != nil {
		if ctx.Err() == nil {
			st.refused.Add(1)
		}
		return
	}
	defer nc.Close()
	st.conns.Add(1)
	nc.SetDeadline(time.Now().Add(30 * time.Second)) // only a hang ends here
	br := bufio.NewReader(nc)
	frames := requestFrames(t, worker, n)
	outstanding := 0
	write := func(fs ...[]byte) bool {
		var b []byte
		for _, f := range fs {
			b = append(b, f...)
		}
		st.sent.Add(int64(len(fs)))
		outstanding += len(fs)
		_, err := nc.Write(b)
		return err == nil
	}
	read := func() bool {
		payload, err := wire.ReadFrame(br, 0)
		if err != nil {
			return false
		}
		r, err := wire.ParseResponse(payload)
		if err != nil {
			return false
		}
		outstanding--
		st.answered.Add(1)
		if r.Type != wire.ResponseSuccess {
			fe, _ := flusserr.From(r.Err())
			if fe != nil && fe.Code == flusserr.UnknownServerError {
				st.serverErrors.Add(1)
			} else {
				st.otherErrors.Add(1)
			}
			st.mu.Lock()
			if len(st.errorSample) < 5 {
				st.errorSample = append(st.errorSample, fmt.Sprint(r.Err()))
			}
			st.mu.Unlock()
		}
		return true
	}
	defer func() { st.lost.Add(int64(outstanding)) }()
	switch shape {
	case shapeSingle:
		if write(frames[0]) {
			read()
		}
	case shapeBurst:
		if write(frames...) {
			for outstanding > 0 && read() {
			}
		}
	case shapeSequential:
		for _, f := range frames {
			if !write(f) || !read() {
				return
			}
		}
	}
}

// loadWorkers is how many clients connect at once.
const loadWorkers = 6

// runLoad keeps loadWorkers clients opening connections of every shape
// through svc until ctx ends.
func runLoad(ctx context.Context, t *testing.T, svc *service, st *loadStats) *sync.WaitGroup {
	var wg sync.WaitGroup
	for w := range loadWorkers {
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				oneConnection(ctx, t, svc, st, w, n, (w+n)%shapes)
				time.Sleep(time.Millisecond) // the sleep is under test: a client's pace, not a hot loop
			}
		})
	}
	return &wg
}

// TestRollingRestart restarts one of two sidecars sharing one ZooKeeper,
// three times, by SIGTERM, while clients connect through a Service that
// follows readiness. With the accept delay no connection is refused and
// every request sent is answered, none with code -1. Run once more with
// no accept delay (what the sidecar did before), the same restarts refuse
// connections or leave requests unanswered: the test can see the problem.
func TestRollingRestart(t *testing.T) {
	for _, tt := range []struct {
		name        string
		acceptDelay string
		clean       bool
	}{
		{"with an accept delay", "1 s", true},
		{"without an accept delay", "0", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root, remote := zktest.UniqueRoot(), filepath.Join(t.TempDir(), "remote")
			extra := []string{"-D" + app.KeyAcceptDelay + "=" + tt.acceptDelay}
			svc := &service{}
			a := startBackend(t, "a", root, remote, extra)
			svc.add(a)
			b := startBackend(t, "b0", root, remote, extra)
			svc.add(b)
			waitReady(t, a, b)

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var st loadStats
			load := runLoad(ctx, t, svc, &st)
			const restarts = 3
			for i := 1; i <= restarts; i++ {
				waitServed(t, b, 20)
				if err := b.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-b.exited:
					if err != nil {
						t.Fatalf("%s after SIGTERM: %v\n%s", b.name, err, b.logs.String())
					}
				case <-time.After(60 * time.Second):
					t.Fatalf("%s did not exit after SIGTERM", b.name)
				}
				b.stop()
				svc.remove(b) // the terminated pod leaves the endpoints
				checkLogs(t, b)
				b = startBackend(t, fmt.Sprintf("b%d", i), root, remote, extra)
				svc.add(b) // joins once its probe says ready
				waitReady(t, b)
			}
			waitServed(t, b, 20)
			waitServed(t, a, 20)
			cancel()
			load.Wait()
			t.Logf("%s: %v; connections to a: %d", tt.name, &st, a.conns.Load())
			st.mu.Lock()
			if len(st.errorSample) > 0 {
				t.Logf("error answers, e.g.: %q", st.errorSample)
			}
			st.mu.Unlock()
			if st.answered.Load() == 0 {
				t.Fatal("no request was answered")
			}
			if st.serverErrors.Load() != 0 || st.otherErrors.Load() != 0 {
				t.Errorf("error answers: %d with code -1, %d others", st.serverErrors.Load(), st.otherErrors.Load())
			}
			refusedOrLost := st.refused.Load() + st.lost.Load()
			if tt.clean && refusedOrLost != 0 {
				t.Errorf("refused %d connections and left %d requests unanswered; want none", st.refused.Load(), st.lost.Load())
			}
			if !tt.clean && refusedOrLost == 0 {
				t.Errorf("without an accept delay no connection was refused and no request lost: the test no longer sees what the delay prevents")
			}
		})
	}
}

// waitReady waits until every backend's probe says ready.
func waitReady(t *testing.T, bs ...*backend) {
	t.Helper()
	for _, b := range bs {
		eventually.Nil(t, b.name+" to be ready", func() error {
			if !b.ready.Load() {
				return fmt.Errorf("not ready:\n%s", b.logs.String())
			}
			return nil
		})
	}
}

// waitServed waits until the service has sent n connections to b.
func waitServed(t *testing.T, b *backend, n int64) {
	t.Helper()
	start := b.conns.Load()
	eventually.True(t, b.name+" to get load", func() bool { return b.conns.Load()-start >= n })
}

// checkLogs fails on a WARN or ERROR line of a stopped backend that a
// rolling restart should not cause.
var alarming = regexp.MustCompile(`\[(WARN|ERROR)\].*(answered with an error|drain timeout|shutdown was not clean)`)

func checkLogs(t *testing.T, b *backend) {
	t.Helper()
	for l := range strings.Lines(b.logs.String()) {
		if alarming.MatchString(l) {
			t.Errorf("%s logged: %s", b.name, strings.TrimSpace(l))
		}
	}
}
