// Package bench holds the sidecar's end-to-end benchmarks. Each benchmark
// is paired with a baseline measured in the same run on the same ZooKeeper,
// and scripts/bench.sh reports their ratio; absolute numbers depend on the
// machine.
package bench
