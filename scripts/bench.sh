#!/usr/bin/env bash
# Runs each end-to-end benchmark beside its baseline in one run and prints
# the ratio (sidecar ops/s divided by baseline ops/s). Usage:
#   scripts/bench.sh [benchtime, default 3s] [count, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-3s}
count=${2:-3}
out=$(go test ./bench/ -run='^$' -bench='Lifecycle' -benchtime="$benchtime" -count="$count" 2>&1)
echo "$out" | grep -E '^(Benchmark|goos|goarch|cpu|ok|FAIL)'
echo "$out" | awk '
	/^BenchmarkLifecycleSidecar/  { s += $3; ns++ }
	/^BenchmarkLifecycleBaseline/ { bl += $3; nb++ }
	END {
		if (ns == 0 || nb == 0) { print "no results"; exit 1 }
		s /= ns; bl /= nb
		printf "lifecycle (register+get+delete): sidecar %.0f us/op, baseline %.0f us/op, throughput ratio sidecar/baseline = %.2f\n", s/1000, bl/1000, bl/s
	}'
