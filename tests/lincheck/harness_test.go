package lincheck

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Every sidecar runs in a child process of the test binary, started again
// with childEnv set, so that a scenario can kill one with SIGKILL as an
// operator's kill -9 would. The child reads its whole configuration from
// childKVEnv, prints "ADDR host:port" once it serves, and serves until its
// standard input closes (or it is killed).
const (
	childEnv   = "LINCHECK_CHILD"
	childKVEnv = "LINCHECK_CHILD_KV"
	// longEnv set to 1 runs every scenario longer, with more faults.
	longEnv = "LINCHECK_LONG"
	// kvEnv adds "key=value;..." to every sidecar's configuration, e.g.
	// sidecar.snapshot-cache.max-bytes=0 or sidecar.read-consistency=sequential.
	kvEnv = "LINCHECK_KV"
)

// sharedZK is the single ZooKeeper server most scenarios share (each with
// its own root).
var sharedZK *zktest.Server

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	zktest.MainServer(m, func(s *zktest.Server) { sharedZK = s })
}

func long() bool { return os.Getenv(longEnv) == "1" }

// extraKV is LINCHECK_KV as a map.
func extraKV() map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(os.Getenv(kvEnv), ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

func runChild() int {
	c := config.New()
	for _, kv := range strings.Split(os.Getenv(childKVEnv), "\n") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			c.Set(k, v)
		}
	}
	s, err := app.FromConfig(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	// The parent sends stderr to the sidecar's log file.
	log := app.NewLogger("sidecar", s.LogLevel, s.Ops.LogFormat, os.Stderr)
	a, err := app.Start(ctx, s, app.Options{Logger: log})
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("ADDR %s\n", a.Addr())
	io.Copy(io.Discard, os.Stdin) // until the parent closes it or dies
	a.Close()
	return 0
}

// sidecarProc is one sidecar child process, restartable on the port it
// first bound.
type sidecarProc struct {
	t    testing.TB
	name string
	kv   map[string]string
	log  string // the children's stderr, appended across restarts

	mu    sync.Mutex
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	addr  string
}

// logsEnv names a directory where the sidecars' logs are kept after the
// test (one subdirectory per test); without it they go to t.TempDir and are
// removed with it.
const logsEnv = "LINCHECK_LOGS"

func logDir(t testing.TB) string {
	root := os.Getenv(logsEnv)
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("%s: %v", logsEnv, err)
	}
	return dir
}

// startSidecar runs a sidecar with configuration kv (bind.listeners is
// chosen here) and stops it when the test ends.
func startSidecar(t testing.TB, name string, kv map[string]string) *sidecarProc {
	t.Helper()
	p := &sidecarProc{t: t, name: name, kv: map[string]string{}, log: filepath.Join(logDir(t), "sidecar-"+name+".log")}
	for k, v := range kv {
		p.kv[k] = v
	}
	p.kv["bind.listeners"] = "FLUSS://127.0.0.1:0"
	if _, ok := p.kv["sidecar.log.level"]; !ok {
		p.kv["sidecar.log.level"] = "warn"
	}
	if err := p.start(); err != nil {
		t.Fatalf("sidecar %s: %v", name, err)
	}
	// Later starts reuse the port, so clients find the sidecar again.
	p.kv["bind.listeners"] = "FLUSS://" + p.Addr()
	t.Cleanup(p.stop)
	return p
}

func (p *sidecarProc) start() error {
	var lines []string
	for k, v := range p.kv {
		lines = append(lines, k+"="+v)
	}
	slices.Sort(lines)
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=sidecar", childKVEnv+"="+strings.Join(lines, "\n"))
	cmd.Stderr = logf
	cmd.SysProcAttr = childProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	line, rerr := bufio.NewReader(stdout).ReadString('\n')
	go func() {
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		close(done)
	}()
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if rerr != nil || !ok {
		stdin.Close()
		cmd.Process.Kill()
		<-done
		b, _ := os.ReadFile(p.log)
		return fmt.Errorf("child did not start (%q, %v); its log:\n%s", line, rerr, tail(string(b), 2000))
	}
	p.mu.Lock()
	p.cmd, p.stdin, p.done, p.addr = cmd, stdin, done, addr
	p.mu.Unlock()
	return nil
}

// Addr is the address the sidecar serves on (the same after a restart).
func (p *sidecarProc) Addr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr
}

// Kill ends the sidecar with SIGKILL, as kill -9 would: nothing drains,
// nothing settles, its ZooKeeper session is left to expire.
func (p *sidecarProc) Kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

// Restart starts a killed sidecar again on its port. The port may stay
// taken for a moment; it retries for a few seconds.
func (p *sidecarProc) Restart() error {
	var err error
	for range 50 {
		if err = p.start(); err == nil {
			return nil
		}
		// Not eventually: this runs on a fault goroutine, where a wait may
		// not fail the test (FailNow); the caller reports the error.
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// stop closes the child's standard input so it shuts down cleanly, and
// kills it if it has not within 30 s.
func (p *sidecarProc) stop() {
	p.mu.Lock()
	cmd, stdin, done := p.cmd, p.stdin, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	stdin.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// relay forwards TCP connections from its own loopback port to a target
// and can reset all of them at once (SO_LINGER 0: the peers see RST).
type relay struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

func newRelay(t testing.TB, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(func() {
		ln.Close()
		r.Reset()
		r.wg.Wait()
	})
	return r
}

func (r *relay) Addr() string { return r.ln.Addr().String() }

func (r *relay) accept() {
	defer r.wg.Done()
	for {
		in, err := r.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.DialTimeout("tcp", r.target, 5*time.Second)
		if err != nil {
			in.Close()
			continue
		}
		r.mu.Lock()
		r.conns[in], r.conns[out] = struct{}{}, struct{}{}
		r.mu.Unlock()
		r.wg.Add(2)
		go r.pipe(out, in)
		go r.pipe(in, out)
	}
}

func (r *relay) pipe(dst, src net.Conn) {
	defer r.wg.Done()
	io.Copy(dst, src)
	r.mu.Lock()
	delete(r.conns, dst)
	delete(r.conns, src)
	r.mu.Unlock()
	dst.Close()
	src.Close()
}

// Reset aborts every forwarded connection, both sides, with a TCP reset.
func (r *relay) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
		c.Close()
	}
	clear(r.conns)
}

// Workload parameters.
const (
	ttlMillis     = int64(time.Hour / time.Millisecond)
	clientTimeout = 10 * time.Second
	tableID       = int64(1)
)

const maxMinusOneMsgs = 1000

// counters are the answers worth reporting besides the verdict.
type counters struct {
	known, unknown, notSent atomic.Int64
	created, exists         atomic.Int64
	found, absent, deleted  atomic.Int64
	minusOne                atomic.Int64 // UNKNOWN_SERVER_ERROR answers
	mu                      sync.Mutex
	minusOneMsgs            []string // the first maxMinusOneMsgs
	codes                   sync.Map // flusserr code -> *atomic.Int64
}

func (c *counters) code(code flusserr.Code, msg string) {
	v, _ := c.codes.LoadOrStore(code, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	if code == flusserr.UnknownServerError {
		c.minusOne.Add(1)
		c.mu.Lock()
		if len(c.minusOneMsgs) < maxMinusOneMsgs {
			c.minusOneMsgs = append(c.minusOneMsgs, msg)
		}
		c.mu.Unlock()
	}
}

func (c *counters) String() string {
	s := fmt.Sprintf("known %d, unknown %d (not sent %d); CREATED %d, ALREADY_EXISTS %d, GET found %d, GET absent %d, DELETE ok %d",
		c.known.Load(), c.unknown.Load(), c.notSent.Load(), c.created.Load(), c.exists.Load(), c.found.Load(), c.absent.Load(), c.deleted.Load())
	var codes []string
	c.codes.Range(func(k, v any) bool {
		codes = append(codes, fmt.Sprintf("%d×%d", k.(flusserr.Code), v.(*atomic.Int64).Load()))
		return true
	})
	if len(codes) > 0 {
		slices.Sort(codes)
		s += "; error codes " + strings.Join(codes, " ")
	}
	return s
}

// fclient is one Fluss client connection to one target, redialled after
// it fails.
type fclient struct {
	id   int
	via  string
	addr func() string
	c    *wire.Client
	cnt  *counters
	h    *History
}

func (fc *fclient) close() {
	if fc.c != nil {
		fc.c.Close()
		fc.c = nil
	}
}

// connect makes sure a connection is up; false if none could be made.
func (fc *fclient) connect(ctx context.Context) bool {
	if fc.c != nil {
		select {
		case <-fc.c.Done():
			fc.close()
		default:
			return true
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := wire.Dial(dctx, fc.addr(), wire.ClientOptions{})
	if err != nil {
		return false
	}
	if _, err := c.Handshake(dctx); err != nil {
		c.Close()
		return false
	}
	fc.c = c
	return true
}

// do runs one operation and records it. An operation that could not be
// sent at all (no connection) proves nothing was applied and is left out.
func (fc *fclient) do(ctx context.Context, in Input) {
	if !fc.connect(ctx) {
		fc.cnt.notSent.Add(1)
		time.Sleep(20 * time.Millisecond) // the sleep is under test: a client's pause before it dials again
		return
	}
	in.Via = fc.via
	pid := proto.String(in.Producer)
	cctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var err error
	var out Output
	call := fc.h.Now()
	switch in.Kind {
	case Register:
		resp := &messages.RegisterProducerOffsetsResponse{}
		err = fc.c.Call(cctx, messages.KeyRegisterProducerOffsets, 0, registerRequest(in.Producer, in.Snap), resp)
		out.Created = resp.GetResult() == 0
	case Get:
		resp := &messages.GetProducerOffsetsResponse{}
		err = fc.c.Call(cctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: pid}, resp)
		out.Snap, out.Note = snapOf(resp)
	case Delete:
		err = fc.c.Call(cctx, messages.KeyDeleteProducerOffsets, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: pid}, nil)
	}
	ret := fc.h.Now()
	if err != nil {
		out = Output{Unknown: true}
		if fe, ok := flusserr.From(err); ok {
			out.Note = fmt.Sprintf("error %d", fe.Code)
			fc.cnt.code(fe.Code, fe.Message)
		} else {
			out.Note = err.Error()
			if errors.Is(err, context.DeadlineExceeded) {
				out.Note = "client timeout"
			}
			// A late answer must not be taken for the next call's.
			fc.close()
		}
		fc.cnt.unknown.Add(1)
	} else {
		fc.cnt.known.Add(1)
		switch {
		case in.Kind == Register && out.Created:
			fc.cnt.created.Add(1)
		case in.Kind == Register:
			fc.cnt.exists.Add(1)
		case in.Kind == Get && out.Snap == Absent:
			fc.cnt.absent.Add(1)
		case in.Kind == Get:
			fc.cnt.found.Add(1)
		default:
			fc.cnt.deleted.Add(1)
		}
	}
	fc.h.Add(fc.id, in, call, out, ret)
}

func registerRequest(producer string, snap int64) *messages.RegisterProducerOffsetsRequest {
	return &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String(producer),
		TableOffsets: []*messages.PbProducerTableOffsets{{
			TableId:       proto.Int64(tableID),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(snap)}},
		}},
		TtlMs: proto.Int64(ttlMillis),
	}
}

// snapOf reads the snapshot id out of a GET answer: Absent for an empty
// answer, the one log end offset otherwise. An answer of any other shape
// gets id -1, which no REGISTER stored, so the checker refuses it.
func snapOf(resp *messages.GetProducerOffsetsResponse) (int64, string) {
	if resp.ProducerId == nil {
		return Absent, ""
	}
	var snaps []int64
	for _, t := range resp.TableOffsets {
		for _, b := range t.BucketOffsets {
			snaps = append(snaps, b.GetLogEndOffset())
		}
	}
	if len(snaps) != 1 || len(resp.TableOffsets) != 1 || resp.TableOffsets[0].GetTableId() != tableID {
		return -1, fmt.Sprintf("malformed answer: %d tables, offsets %v", len(resp.TableOffsets), snaps)
	}
	return snaps[0], ""
}

// snapIDs hands out the unique offsets of every REGISTER of a run.
type snapIDs struct{ n atomic.Int64 }

func (s *snapIDs) next() int64 { return s.n.Add(1) }

// randomOp picks an operation on one of ids: registers and gets more often
// than deletes, so snapshots live long enough to be read.
func randomOp(rng *rand.Rand, ids []string, snaps *snapIDs) Input {
	in := Input{Producer: ids[rng.IntN(len(ids))]}
	switch r := rng.IntN(100); {
	case r < 35:
		in.Kind, in.Snap = Register, snaps.next()
	case r < 75:
		in.Kind = Get
	default:
		in.Kind = Delete
	}
	return in
}

// target is one thing clients talk to: a sidecar, directly or through a
// relay.
type target struct {
	name    string
	addr    func() string
	clients int
}

// drive runs clients against every target until ctx ends, each doing
// random operations on ids with a short random pause between them.
func drive(ctx context.Context, h *History, targets []target, ids []string, snaps *snapIDs, cnt map[string]*counters, firstID int) int {
	var wg sync.WaitGroup
	id := firstID
	for _, tg := range targets {
		for range tg.clients {
			fc := &fclient{id: id, via: tg.name, addr: tg.addr, cnt: cnt[tg.name], h: h}
			id++
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer fc.close()
				rng := rand.New(rand.NewPCG(rand.Uint64(), uint64(fc.id)))
				for ctx.Err() == nil {
					fc.do(ctx, randomOp(rng, ids, snaps))
					time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond) // the sleep is under test: a client's random pace
				}
			}()
		}
	}
	wg.Wait()
	return id
}
