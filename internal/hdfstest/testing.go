package hdfstest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

var (
	sharedOnce sync.Once
	shared     *Cluster
	sharedErr  error
)

// Shared returns the test binary's one cluster (one DataNode), started on
// first use; the tests of a binary share it, each under its own directory.
// A test that stops a server or changes the cluster's state must not run
// in parallel with others and must restore it. Call StopShared from
// TestMain. Under -short it skips the test (SkipIfShort).
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
	SkipIfShort(tb)
	sharedOnce.Do(func() { shared, sharedErr = Start(context.Background(), Config{}) })
	if sharedErr != nil {
		tb.Fatal(sharedErr)
	}
	return shared
}

// StopShared ends the shared cluster, if one was started.
func StopShared() {
	if shared != nil {
		shared.Close()
	}
}

// RemoteDataDir is a fresh remote.data.dir for a test of a run that may put
// its remote storage on HDFS: the environment variable env says where
// ("hdfs": a folder under dir on the shared cluster; unset or "file": a
// local temporary directory). Anything else fails the test.
func RemoteDataDir(t *testing.T, env, dir string) string {
	switch v := os.Getenv(env); v {
	case "", "file":
		return "file://" + t.TempDir()
	case "hdfs":
		c := Shared(t)
		url := c.URL(fmt.Sprintf("%s/%d", dir, time.Now().UnixNano()))
		t.Logf("remote.data.dir %s (%s=hdfs); minicluster log %s", url, env, c.LogPath())
		return url
	default:
		t.Fatalf("%s=%q: want hdfs, file or unset", env, v)
		return ""
	}
}

// SkipIfShort skips tb under go test -short (make check), which starts no
// HDFS and no JVM. Without -short it does nothing: a cluster that cannot
// start fails the test.
func SkipIfShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("hdfstest: needs an HDFS minicluster (a JVM); not run under -short")
	}
}
