package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// BenchmarkIdleConns measures what an idle client connection costs the
// sidecar: a sidecar runs as a child process (child_test.go),
// the benchmark opens N connections to it, sends API_VERSIONS on each and
// reads the answer, and then leaves them idle. It reports the growth of the
// child's resident set (VmRSS in /proc/<pid>/status) and of its goroutines,
// per connection, read after a settling second:
//
//   - B/idle-conn: as the process stands, the headline figure;
//   - B/idle-conn-after-gc: after the child ran debug.FreeOSMemory (a
//     collection that also returns freed pages to the system), to tell
//     what the connections hold from garbage not yet given back;
//   - goroutines/idle-conn.
//
// The connection counts come from FLUSS_BENCH_IDLE_CONNS (comma-separated,
// default 1000,10000,12000). Client and server are separate processes, so
// each needs only N descriptors; counts above the open-files limit of
// either fail to connect and the benchmark says so.
//
//	go test ./tests/bench -run '^$' -bench IdleConns -benchtime 1x
func BenchmarkIdleConns(b *testing.B) {
	counts := []int{1000, 10000, 12000}
	if v := os.Getenv("FLUSS_BENCH_IDLE_CONNS"); v != "" {
		counts = counts[:0]
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				b.Fatalf("FLUSS_BENCH_IDLE_CONNS: bad count %q", f)
			}
			counts = append(counts, n)
		}
	}
	for _, n := range counts {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			for range b.N {
				idleConns(b, n)
			}
		})
	}
}

// idleConns runs one measurement against a fresh sidecar.
func idleConns(b *testing.B, n int) {
	root := fmt.Sprintf("/idle-%d-%d", os.Getpid(), seq.Add(1))
	p := startChildProc(b, "sidecar", childZKEnv+"="+zkAddr, childRootEnv+"="+root, childDirEnv+"="+b.TempDir())
	// One connection first, so that whatever the first request sets up
	// once (registry, caches) is in the baseline.
	warm := openAnswered(b, p.addr, 1)
	time.Sleep(time.Second) // the sleep is under test: memory is measured after a second's settling
	rss0, g0, ms0 := rssOf(b, p.pid), atoi(b, p.ask(b, "goroutines")), p.ask(b, "memstats")
	p.ask(b, "gc")
	time.Sleep(time.Second) // the sleep is under test: memory is measured a second after the GC
	rss0gc := rssOf(b, p.pid)

	b.ResetTimer()
	conns := openAnswered(b, p.addr, n)
	b.StopTimer()
	time.Sleep(time.Second) // the sleep is under test: memory is measured after a second's settling
	rss1, g1, ms1 := rssOf(b, p.pid), atoi(b, p.ask(b, "goroutines")), p.ask(b, "memstats")
	p.ask(b, "gc")
	time.Sleep(time.Second) // the sleep is under test: memory is measured a second after the GC
	rss1gc := rssOf(b, p.pid)

	b.ReportMetric(float64(rss1-rss0)/float64(n), "B/idle-conn")
	b.ReportMetric(float64(rss1gc-rss0gc)/float64(n), "B/idle-conn-after-gc")
	b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/idle-conn")
	fmt.Printf("idle| %6d connections: RSS %d -> %d KiB (%.0f B each); after FreeOSMemory %d -> %d KiB (%.0f B each); goroutines %d -> %d\n",
		n, rss0>>10, rss1>>10, float64(rss1-rss0)/float64(n), rss0gc>>10, rss1gc>>10, float64(rss1gc-rss0gc)/float64(n), g0, g1)
	if os.Getenv("FLUSS_BENCH_HEAPPROFILE") != "" {
		p.ask(b, "heapprofile")
	}
	fmt.Printf("idle| %6d connections: Go runtime before %s, after %s\n", n, ms0, ms1)
	for _, c := range append(conns, warm...) {
		c.Close()
	}
}

// openAnswered opens n connections to addr, each of which has sent
// API_VERSIONS and read its answer.
func openAnswered(b *testing.B, addr string, n int) []net.Conn {
	body, err := proto.Marshal(&messages.ApiVersionsRequest{
		ClientSoftwareName: proto.String("bench"), ClientSoftwareVersion: proto.String("0"),
	})
	if err != nil {
		b.Fatal(err)
	}
	req := wire.AppendRequest(nil, wire.RequestHeader{APIKey: messages.KeyAPIVersions, RequestID: 1}, body)
	conns := make([]net.Conn, n)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	next := make(chan int)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := apiVersions(addr, req)
				if err != nil {
					errs <- fmt.Errorf("connection %d of %d: %w", i+1, n, err)
					return
				}
				conns[i] = c
			}
		}()
	}
	func() {
		defer close(next)
		for i := range n {
			select {
			case next <- i:
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
		b.Fatal(err)
	}
	return conns
}

func apiVersions(addr string, req []byte) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := c.Write(req); err != nil {
		c.Close()
		return nil, err
	}
	payload, err := wire.ReadFrame(bufio.NewReaderSize(c, 4096), 1<<20)
	if err == nil {
		var r wire.Response
		if r, err = wire.ParseResponse(payload); err == nil && r.Type != wire.ResponseSuccess {
			err = fmt.Errorf("API_VERSIONS answered %v: %v", r.Type, r.Err())
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// rssOf returns the resident set of process pid in bytes.
func rssOf(b *testing.B, pid int) int64 {
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(s), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

func atoi(b *testing.B, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		b.Fatalf("child answered %q", s)
	}
	return n
}
