package bench

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// The GET storm runs every server in its own process, as a deployment does
// and as the ZooKeeper baseline already is, so that the load generator's
// scheduling and garbage collection are not charged to the server under
// test (and the server's not to the load generator). The bench test binary
// starts itself again with childRoleEnv set; the child serves until its
// standard input closes.
const (
	childRoleEnv = "FLUSS_BENCH_CHILD" // "sidecar" or "nothing"
	childZKEnv   = "FLUSS_BENCH_ZK"
	childRootEnv = "FLUSS_BENCH_ROOT"
	childDirEnv  = "FLUSS_BENCH_DIR"
	childKVEnv   = "FLUSS_BENCH_KV"   // extra key=value;... settings
	childBodyEnv = "FLUSS_BENCH_BODY" // hex body of the do-nothing answer
	// ChildProfileEnv, set in the benchmark's own environment, names a
	// directory where each child writes a CPU profile of its whole life
	// (<role>-<pid>.pprof): the way to profile the servers under the storm.
	childProfileEnv = "FLUSS_BENCH_CPUPROFILE_DIR"
)

// runChild serves as the role in the environment; it returns the exit code.
func runChild(role string) int {
	var addr string
	var closeFn func()
	switch role {
	case "sidecar":
		c := config.New()
		c.Set("bind.listeners", "FLUSS://127.0.0.1:0")
		c.Set("zookeeper.address", os.Getenv(childZKEnv))
		c.Set("zookeeper.path.root", os.Getenv(childRootEnv))
		c.Set("remote.data.dir", "file://"+os.Getenv(childDirEnv))
		c.Set("sidecar.log.level", "error")
		for _, kv := range strings.Split(os.Getenv(childKVEnv), ";") {
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
		a, err := app.Start(ctx, s, app.Options{})
		cancel()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		addr, closeFn = a.Addr(), func() { a.Close() }
	case "nothing":
		body, err := hex.DecodeString(os.Getenv(childBodyEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		s, err := listenNothing(body)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		addr, closeFn = s.addr(), s.close
	default:
		fmt.Fprintln(os.Stderr, "unknown child role", role)
		return 1
	}
	if dir := os.Getenv(childProfileEnv); dir != "" {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", role, os.Getpid())))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("ADDR %s\n", addr)
	// Until the parent closes stdin or exits, answer its questions about
	// this process (childProc.ask).
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "goroutines":
			fmt.Printf("%d\n", runtime.NumGoroutine())
		case "memstats":
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			fmt.Printf("heap_inuse=%d stack_inuse=%d sys=%d\n", m.HeapInuse, m.StackInuse, m.Sys)
		case "heapprofile": // to the file named by FLUSS_BENCH_HEAPPROFILE
			debug.FreeOSMemory()
			f, err := os.Create(os.Getenv("FLUSS_BENCH_HEAPPROFILE"))
			if err == nil {
				err = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
			fmt.Println(err)
		case "gc":
			debug.FreeOSMemory()
			fmt.Println("ok")
		default:
			fmt.Println("?")
		}
	}
	closeFn()
	return 0
}

// startChildPID runs a child server and returns its address and process
// id, for reading its CPU time (cpu_test.go); it stops when the benchmark
// or test ends.
func startChildPID(tb testing.TB, role string, env ...string) (addr string, pid int) {
	tb.Helper()
	p := startChildProc(tb, role, env...)
	go io.Copy(io.Discard, p.out)
	return p.addr, p.pid
}

// childProc is a running child server.
type childProc struct {
	addr string
	pid  int
	in   io.Writer
	out  *bufio.Reader
}

// ask sends one question to the child ("goroutines", "gc") and returns its
// one-line answer.
func (p *childProc) ask(tb testing.TB, q string) string {
	tb.Helper()
	if _, err := fmt.Fprintln(p.in, q); err != nil {
		tb.Fatal(err)
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		tb.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// startChildProc is startChild keeping the child's process id and its
// question channel.
func startChildProc(tb testing.TB, role string, env ...string) *childProc {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), append([]string{childRoleEnv + "=" + role}, env...)...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { stopChild(cmd, stdin) })
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	if err != nil || !ok {
		tb.Fatalf("child %s: %q %v", role, line, err)
	}
	return &childProc{addr: addr, pid: cmd.Process.Pid, in: stdin, out: out}
}

// stopChild closes a child sidecar's stdin, which tells it to exit, and
// waits for it; one that has not exited after 30 s is killed.
func stopChild(cmd *exec.Cmd, stdin io.Closer) {
	stdin.Close()
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}
