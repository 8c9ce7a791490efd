#!/usr/bin/env bash
# Runs each end-to-end benchmark beside its baseline in one run and prints
# the ratio (sidecar ops/s divided by baseline ops/s). Usage:
#   scripts/bench.sh [benchtime, default 3s] [count, default 3]
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-3s}
count=${2:-3}
out=$(go test ./bench/ -run='^$' -bench='Lifecycle|GetManyTablesS3' -benchtime="$benchtime" -count="$count" 2>&1)
echo "$out" | grep -E '^(Benchmark|goos|goarch|cpu|ok|FAIL)'
echo "$out" | awk '
	/^BenchmarkLifecycleSidecar/  { s += $3; ns++ }
	/^BenchmarkLifecycleBaseline/ { bl += $3; nb++ }
	/^BenchmarkGetManyTablesS3\/files=1-/ { g1 += $3; n1++ }
	/^BenchmarkGetManyTablesS3\/files=8-/ { g8 += $3; n8++ }
	END {
		if (ns == 0 || nb == 0 || n1 == 0 || n8 == 0) { print "no results"; exit 1 }
		s /= ns; bl /= nb; g1 /= n1; g8 /= n8
		printf "lifecycle (register+get+delete): sidecar %.0f us/op, baseline %.0f us/op, throughput ratio sidecar/baseline = %.2f\n", s/1000, bl/1000, bl/s
		printf "get of a 100-table snapshot on S3: 8 files at once %.1f ms/op, one at a time %.1f ms/op, speed-up = %.2fx\n", g8/1e6, g1/1e6, g1/g8
	}'
