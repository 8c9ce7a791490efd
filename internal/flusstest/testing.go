package flusstest

import (
	"context"
	"testing"
)

// StartT starts a cluster for one test and closes it when the test ends.
// When the test failed, the cluster's folder (configuration, data, every
// server's log) is kept and its path logged. A release that is not resolved
// fails the test with the command that resolves it. Under -short it skips
// the test (SkipIfShort).
func StartT(tb testing.TB, cfg Config) *Cluster {
	tb.Helper()
	SkipIfShort(tb)
	c, err := Start(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("flusstest: %v", err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			c.keepDir()
			tb.Logf("flusstest: the cluster's configuration and logs are kept in %s", c.Dir())
			for _, s := range c.servers() {
				tb.Logf("flusstest: tail of %s:\n%s", s.LogPath(), s.LogTail(3000))
			}
		}
		c.Close()
	})
	return c
}

// SkipIfShort skips tb under go test -short (make check), which runs no
// Fluss server, no Java client and no JVM. Without -short it does nothing:
// a release that is missing or a server that cannot start fails the test.
func SkipIfShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("flusstest: needs Fluss's released servers or clients (a JVM); not run under -short")
	}
}
