package zk

import (
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// zkAddr is the shared ZooKeeper server of this package's tests; each test
// uses its own root (zktest.UniqueRoot).
var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// testLogger logs to t until the test's cleanups reach it; go-zookeeper's
// goroutines may log after that, and those lines are dropped.
func testLogger(t *testing.T) hclog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Debug, Output: w})
}

type testWriter struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// connect opens a client on addr with root, closed at the end of the test.
func connect(t *testing.T, addr, root string, mod ...func(*Config)) *Client {
	t.Helper()
	zktest.SkipIfShort(t)
	cfg := Config{Address: addr, Root: root, Logger: testLogger(t)}
	for _, f := range mod {
		f(&cfg)
	}
	c, err := Connect(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// newClient connects to the shared server under a fresh root.
func newClient(t *testing.T) *Client {
	t.Helper()
	return connect(t, zkAddr, zktest.UniqueRoot())
}
