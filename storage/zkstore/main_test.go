package zkstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// zkAddr is the shared ZooKeeper server of this package's tests; each test
// uses its own root (zktest.UniqueRoot).
var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// testCtx bounds a test's calls so that a bug cannot hang it; it is not a
// timing assertion.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a client on addr with root, closed at the end of the test.
func connect(t *testing.T, addr, root string) *zk.Client {
	t.Helper()
	c, err := zk.Connect(testCtx(t), zk.Config{Address: addr, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// readGolden reads a snapshot znode's golden bytes, kept beside the format.
func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "offsets", "flussjson", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
