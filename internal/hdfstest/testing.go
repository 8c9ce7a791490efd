package hdfstest

import (
	"context"
	"sync"
	"testing"
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
// TestMain.
func Shared(tb testing.TB) *Cluster {
	tb.Helper()
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
