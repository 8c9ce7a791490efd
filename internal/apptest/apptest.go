// Package apptest starts whole sidecars (app.Start) for tests and
// benchmarks, from Fluss configuration, with defaults that keep each test
// apart: a free loopback port, its own ZooKeeper root and remote directory.
package apptest

import (
	"context"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// Config returns Fluss configuration for a test sidecar on the ZooKeeper at
// zkAddr: listener FLUSS on 127.0.0.1:0, a fresh zookeeper.path.root, a
// fresh local remote.data.dir. kv overrides or adds keys. Under -short an
// empty zkAddr (the package's TestMain started no server, see zktest.Main)
// skips the test.
func Config(tb testing.TB, zkAddr string, kv map[string]string) *config.Config {
	tb.Helper()
	if zkAddr == "" {
		zktest.SkipIfShort(tb)
	}
	c := config.New()
	c.Set(app.KeyBindListeners, "FLUSS://127.0.0.1:0")
	c.Set(app.KeyZKAddress, zkAddr)
	c.Set(app.KeyZKRoot, zktest.UniqueRoot())
	c.Set(app.KeyRemoteDataDir, "file://"+tb.TempDir())
	for k, v := range kv {
		c.Set(k, v)
	}
	return c
}

// Start runs a sidecar from Config(tb, zkAddr, kv) and closes it when the
// test ends.
func Start(tb testing.TB, zkAddr string, kv map[string]string) *app.App {
	tb.Helper()
	return StartConfig(tb, Config(tb, zkAddr, kv), app.Options{})
}

// StartConfig runs a sidecar from c and closes it when the test ends. Under
// -short, a ZooKeeper-mode sidecar whose zookeeper.address is empty (the
// package's TestMain started no server, see zktest.Main) skips the test.
func StartConfig(tb testing.TB, c *config.Config, opts app.Options) *app.App {
	tb.Helper()
	if addr, _ := c.Lookup(app.KeyZKAddress); addr == "" {
		if embedded, _ := c.Bool(app.KeyEmbedded, false); !embedded {
			zktest.SkipIfShort(tb)
		}
	}
	s, err := app.FromConfig(c)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Start(ctx, s, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() })
	return a
}
