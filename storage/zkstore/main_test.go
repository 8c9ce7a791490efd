package zkstore

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// zkAddr is the shared ZooKeeper server of this package's tests; each test
// uses its own root (zktest.UniqueRoot).
var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// connect opens a client on addr with root, closed at the end of the test.
func connect(t *testing.T, addr, root string) *zk.Client {
	t.Helper()
	zktest.SkipIfShort(t)
	c, err := zk.Connect(t.Context(), zk.Config{Address: addr, Root: root})
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
