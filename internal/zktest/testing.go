package zktest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
)

// SkipIfShort skips tb under go test -short (make check), which starts no
// ZooKeeper and runs no JVM. Without -short it does nothing: there a server
// that cannot start fails the test.
func SkipIfShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("zktest: needs ZooKeeper or a JVM; not run under -short")
	}
}

// skipIfUnstarted skips tb when addr is the empty address Main leaves under
// -short; without -short Main always sets one or runs no test.
func skipIfUnstarted(tb testing.TB, addr string) {
	tb.Helper()
	if addr == "" {
		SkipIfShort(tb)
	}
}

// StartT starts a private server for one test (see Start) and closes it when
// the test ends. It fails the test if the server cannot start, and skips it
// under -short (SkipIfShort).
func StartT(tb testing.TB) *Server {
	tb.Helper()
	SkipIfShort(tb)
	s, err := Start(context.Background())
	if err != nil {
		tb.Fatalf("zktest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Main is for a test package's TestMain: it starts one server shared by all
// the package's tests, passes its address to setup, runs the tests, closes
// the server and exits with the tests' status. If the server cannot start
// (for example ZooKeeper is not installed), it prints why and exits with
// status 1 without running any test. Under -short it starts no server and
// runs the tests with setup not called: a test that needs the shared
// server skips, through a kit that takes its address (RawConn, NewCutter,
// apptest) or through SkipIfShort in the package's own helper.
func Main(m *testing.M, setup func(addr string)) {
	os.Exit(run(m, func(s *Server) {
		if setup != nil {
			setup(s.Addr)
		}
	}))
}

// Run is Main without the exit: it returns the tests' status, for a
// TestMain that has more to stop afterwards (an emulator process).
func Run(m *testing.M, setup func(addr string)) int {
	return run(m, func(s *Server) {
		if setup != nil {
			setup(s.Addr)
		}
	})
}

// MainServer is Main for a package that needs the server itself, not only
// its address (a benchmark that reads its CPUTime).
func MainServer(m *testing.M, setup func(s *Server)) {
	os.Exit(run(m, setup))
}

func run(m *testing.M, setup func(s *Server)) int {
	if !flag.Parsed() {
		flag.Parse() // m.Run parses too; testing.Short needs it now
	}
	if testing.Short() {
		return m.Run()
	}
	s, err := Start(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "zktest: cannot start ZooKeeper: %v\n", err)
		return 1
	}
	defer s.Close()
	if setup != nil {
		setup(s)
	}
	return m.Run()
}

// RawConn connects a bare go-zookeeper client to addr, closed when the test
// ends: another writer, to make and see znodes behind the sidecar's back.
// It skips under -short when addr is empty (Main started no server).
func RawConn(tb testing.TB, addr string) *gozk.Conn {
	tb.Helper()
	skipIfUnstarted(tb, addr)
	conn, _, err := gozk.Connect([]string{addr}, 10*time.Second, gozk.WithLogger(nopLogger{}), gozk.WithLogInfo(false))
	if err != nil {
		tb.Fatalf("zktest: connect %s: %v", addr, err)
	}
	tb.Cleanup(conn.Close)
	return conn
}

// LoopbackPort returns a port on 127.0.0.1 that was free a moment ago,
// failing tb when none can be had.
func LoopbackPort(tb testing.TB) int {
	tb.Helper()
	port, err := FreePort("127.0.0.1")
	if err != nil {
		tb.Fatal(err)
	}
	return port
}
