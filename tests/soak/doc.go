// Package soak proves that a long-running sidecar does not grow: two
// `fluss-sidecar serve` processes share one ZooKeeper and one remote
// directory under a mixed load whose live data is level by design, one of
// them is restarted with SIGTERM again and again, and the other's memory,
// goroutines, descriptors, connections and cache sizes are sampled for the
// whole run.
//
// trend.go is the verdict, a pure function: a least-squares line through
// the second half of each quantity's samples, its growth over the run
// compared with what the growth of the live data explains and a small
// allowance. Its unit tests run with the rest of the suite.
//
// The run itself is TestSoak (soak_test.go), started by `make soak` with
// SOAK_DURATION (default 30m); without SOAK_DURATION it is skipped.
// TestSoakSmoke runs the same harness for a few seconds, with no verdict on
// slopes but every answer checked, and is part of `go test ./...`.
//
// Nothing outside the package's tests imports it.
package soak
