#!/usr/bin/env bash
# Runs every end-to-end benchmark beside its baselines and prints the
# ratios (docs/performance.md explains each). Each ratio compares figures
# taken in the same process, in alternating rounds, so that a machine shared
# with other work still gives comparable numbers. Usage:
#   scripts/bench.sh [many-tables benchtime, default 3s] [count, default 3]
# The GET storm and proxy benchmarks run a fixed amount of work per round
# (1 round, and 5 rounds); they take about two minutes together. The
# lifecycle runs count times 6 rounds of each of its three sides (about 30 s each).
# The real Fluss 0.9.1 coordinator (scripts/resolve-maven.sh fetches its jars;
# make test-deps runs it) is a target of the GET storm and of a lifecycle pair of
# its own, count times 6 rounds of each side; the first GETs and lifecycles
# it serves warm its JIT up, uncounted, until the compiler goes quiet (about
# 15 s and 30-40 s on the 2-CPU VM). FLUSS_BENCH_STORM_TARGETS without
# "coordinator" leaves it out of both.
set -euo pipefail
cd "$(dirname "$0")/.."
benchtime=${1:-3s}
count=${2:-3}

echo "machine: $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2 | sed 's/^ *//' || true)), $(go env GOOS)/$(go env GOARCH), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"

# ratio FIELD: the value of a custom benchmark metric (the number before its
# unit) on the benchmark lines of $out, averaged over the lines.
metric() {
	echo "$out" | awk -v unit="$1" -v name="$2" '
		$0 ~ "^"name {
			for (i = 2; i < NF; i++) if ($(i+1) == unit) { s += $i; n++ }
		}
		END { if (n) printf "%.2f", s/n; else printf "n/a" }'
}

echo
echo "== GET storm: one producer id, one GET in flight per connection (go test ./tests/bench -bench 'GetStorm$') =="
out=$(go test ./tests/bench/ -run='^$' -bench='GetStorm$' -benchtime=1x -count=1 2>&1) || { echo "$out"; exit 1; }
echo "$out" | sed -n 's/^storm| /  /p'
for c in 16 64 256; do
	printf '  %3d connections, linearizable (default): sidecar/do-nothing %s (target >= 0.7), sidecar/zk %s (target >= 1.5), p99 sidecar/zk %s (target <= 1; do-nothing/zk %s), without cache sidecar/zk %s, do-nothing/zk %s\n' \
		"$c" "$(metric c$c-sidecar/nothing BenchmarkGetStorm)" "$(metric c$c-sidecar/zk BenchmarkGetStorm)" \
		"$(metric c$c-p99-sidecar/zk BenchmarkGetStorm)" "$(metric c$c-p99-nothing/zk BenchmarkGetStorm)" \
		"$(metric c$c-nocache/zk BenchmarkGetStorm)" "$(metric c$c-nothing/zk BenchmarkGetStorm)"
	printf '  %3d connections, linearizable against raw ZooKeeper sync+getData: throughput %s, p99 %s\n' \
		"$c" "$(metric c$c-sidecar/zksync BenchmarkGetStorm)" "$(metric c$c-p99-sidecar/zksync BenchmarkGetStorm)"
	printf '  %3d connections, sequential:               sidecar/do-nothing %s, sidecar/zk %s, p99 sidecar/zk %s\n' \
		"$c" "$(metric c$c-sequential/nothing BenchmarkGetStorm)" "$(metric c$c-sequential/zk BenchmarkGetStorm)" \
		"$(metric c$c-p99-sequential/zk BenchmarkGetStorm)"
done
echo "  CPU per GET in microseconds, the target's server process + ZooKeeper (for raw ZooKeeper the server is ZooKeeper), and the server's against the do-nothing server's:"
for c in 16 64 256; do
	printf '  %3d connections: sidecar %s + %s (%sx the do-nothing server, target <= 1.5; %sx the do-nothing server held to its rate), sequential %s + %s (%sx), do-nothing %s, getData %s, sync+getData %s\n' \
		"$c" "$(metric c$c-sidecar-server-cpu-us/req BenchmarkGetStorm)" "$(metric c$c-sidecar-zk-cpu-us/req BenchmarkGetStorm)" "$(metric c$c-cpu-sidecar/nothing BenchmarkGetStorm)" \
		"$(metric c$c-cpu-sidecar/nothing-at-its-rate BenchmarkGetStorm)" \
		"$(metric c$c-sequential-server-cpu-us/req BenchmarkGetStorm)" "$(metric c$c-sequential-zk-cpu-us/req BenchmarkGetStorm)" "$(metric c$c-cpu-sequential/nothing BenchmarkGetStorm)" \
		"$(metric c$c-nothing-server-cpu-us/req BenchmarkGetStorm)" "$(metric c$c-zk-zk-cpu-us/req BenchmarkGetStorm)" "$(metric c$c-zksync-zk-cpu-us/req BenchmarkGetStorm)"
done
printf '  1000 random ids, 64 connections: sidecar/zk %s (target >= 0.8), sequential %s, without cache %s\n' \
	"$(metric random-sidecar/zk BenchmarkGetStorm)" "$(metric random-sequential/zk BenchmarkGetStorm)" "$(metric random-nocache/zk BenchmarkGetStorm)"
coordinator=yes
case " ${FLUSS_BENCH_STORM_TARGETS:-coordinator} " in *" coordinator "*) ;; *) coordinator=no ;; esac
if [ "$coordinator" = yes ]; then
	echo "  Against the real Fluss 0.9.1 coordinator (its JIT warmed for $(metric coordinator-jit-warm-s BenchmarkGetStorm) s first); CPU per GET in microseconds, server process + ZooKeeper:"
	for c in 16 64 256; do
		printf '  %3d connections: sidecar/coordinator throughput %s (sequential %s), p99 %s (sequential %s); CPU sidecar %s + %s, coordinator %s + %s, sidecar/coordinator server CPU %s (sequential %s)\n' \
			"$c" "$(metric c$c-sidecar/coordinator BenchmarkGetStorm)" "$(metric c$c-sequential/coordinator BenchmarkGetStorm)" \
			"$(metric c$c-p99-sidecar/coordinator BenchmarkGetStorm)" "$(metric c$c-p99-sequential/coordinator BenchmarkGetStorm)" \
			"$(metric c$c-sidecar-server-cpu-us/req BenchmarkGetStorm)" "$(metric c$c-sidecar-zk-cpu-us/req BenchmarkGetStorm)" \
			"$(metric c$c-coordinator-server-cpu-us/req BenchmarkGetStorm)" "$(metric c$c-coordinator-zk-cpu-us/req BenchmarkGetStorm)" \
			"$(metric c$c-cpu-sidecar/coordinator BenchmarkGetStorm)" "$(metric c$c-cpu-sequential/coordinator BenchmarkGetStorm)"
	done
	printf '  1000 random ids, 64 connections: sidecar/coordinator throughput %s, p99 %s; CPU sidecar %s + %s, coordinator %s + %s, sidecar/coordinator server CPU %s\n' \
		"$(metric random-sidecar/coordinator BenchmarkGetStorm)" "$(metric random-p99-sidecar/coordinator BenchmarkGetStorm)" \
		"$(metric random-sidecar-server-cpu-us/req BenchmarkGetStorm)" "$(metric random-sidecar-zk-cpu-us/req BenchmarkGetStorm)" \
		"$(metric random-coordinator-server-cpu-us/req BenchmarkGetStorm)" "$(metric random-coordinator-zk-cpu-us/req BenchmarkGetStorm)" \
		"$(metric random-cpu-sidecar/coordinator BenchmarkGetStorm)"
fi

echo
echo "== Allocations per GET, client and server together (go test ./tests/bench -bench 'Get$' -benchmem) =="
out=$(go test ./tests/bench/ -run='^$' -bench='Get$' -benchmem -benchtime=20000x -count=1 2>&1) || { echo "$out"; exit 1; }
echo "$out" | grep -E '^BenchmarkGet/' | awk '{ printf "  %-22s %8.1f us/op %7s B/op %5s allocs/op\n", $1, $3/1000, $5, $7 }'

echo
echo "== Proxy mode: 64 connections against a fake coordinator (go test ./proxy -bench ForwardingOverhead) =="
out=$(go test ./proxy/ -run='^$' -bench='ForwardingOverhead' -benchtime=5x -count=1 2>&1) || { echo "$out"; exit 1; }
for b in 'BenchmarkForwardingOverhead-' 'BenchmarkForwardingOverheadPipelined-'; do
	depth=1; [ "$b" = 'BenchmarkForwardingOverheadPipelined-' ] && depth=8
	printf '  %d in flight: proxied/relay throughput %s (target >= 0.9), p50 %s, p99 %s; proxied/direct throughput %s; relay/direct %s\n' \
		"$depth" "$(metric relay-throughput-ratio "$b")" "$(metric relay-p50-ratio "$b")" "$(metric relay-p99-ratio "$b")" \
		"$(metric throughput-ratio "$b")" "$(metric relay/direct "$b")"
done

echo
echo "== Lifecycle (linearizable reads, the default): sidecar, registry and bare storage operations in alternating rounds (go test ./tests/bench -bench LifecyclePair, count $count) =="
out=$(go test ./tests/bench/ -run='^$' -bench='LifecyclePair' -benchtime=1x -count="$count" 2>&1) || { echo "$out"; exit 1; }
printf '  throughput sidecar/baseline %s (target >= 0.8): sidecar %s, baseline %s lifecycles/s; the registry in process (no RPC) / baseline %s\n' \
	"$(metric sidecar/baseline BenchmarkLifecyclePair)" "$(metric sidecar-lifecycles/s BenchmarkLifecyclePair)" "$(metric baseline-lifecycles/s BenchmarkLifecyclePair)" \
	"$(metric registry/baseline BenchmarkLifecyclePair)"
printf '  CPU per lifecycle, sidecar (with its client) / registry / baseline: this process %s / %s / %s us, ZooKeeper %s / %s / %s us\n' \
	"$(metric sidecar-cpu-us/lifecycle BenchmarkLifecyclePair)" "$(metric registry-cpu-us/lifecycle BenchmarkLifecyclePair)" "$(metric baseline-cpu-us/lifecycle BenchmarkLifecyclePair)" \
	"$(metric sidecar-zk-cpu-us/lifecycle BenchmarkLifecyclePair)" "$(metric registry-zk-cpu-us/lifecycle BenchmarkLifecyclePair)" "$(metric baseline-zk-cpu-us/lifecycle BenchmarkLifecyclePair)"

echo
echo "== Lifecycle with sidecar.read-consistency: sequential (GETs answered without a sync; count $count) =="
out=$(FLUSS_BENCH_READ_CONSISTENCY=sequential go test ./tests/bench/ -run='^$' -bench='LifecyclePair' -benchtime=1x -count="$count" 2>&1) || { echo "$out"; exit 1; }
printf '  throughput sidecar/baseline %s: sidecar %s, baseline %s lifecycles/s; ZooKeeper CPU per lifecycle, sidecar / baseline: %s / %s us\n' \
	"$(metric sidecar/baseline BenchmarkLifecyclePair)" "$(metric sidecar-lifecycles/s BenchmarkLifecyclePair)" "$(metric baseline-lifecycles/s BenchmarkLifecyclePair)" \
	"$(metric sidecar-zk-cpu-us/lifecycle BenchmarkLifecyclePair)" "$(metric baseline-zk-cpu-us/lifecycle BenchmarkLifecyclePair)"

if [ "$coordinator" = yes ]; then
	echo
	echo "== Lifecycle against the real Fluss 0.9.1 coordinator: the sidecar's and the coordinator's processes in alternating rounds (go test ./tests/bench -bench LifecycleCoordinator, count $count) =="
	out=$(go test ./tests/bench/ -run='^$' -bench='LifecycleCoordinator' -benchtime=1x -count="$count" 2>&1) || { echo "$out"; exit 1; }
	echo "$out" | sed -n 's/^lifecycle| /  /p'
	printf '  throughput sidecar/coordinator %s: sidecar %s, coordinator %s lifecycles/s (the coordinator measured after %s s of warm-up)\n' \
		"$(metric sidecar/coordinator BenchmarkLifecycleCoordinator)" "$(metric sidecar-lifecycles/s BenchmarkLifecycleCoordinator)" \
		"$(metric coordinator-lifecycles/s BenchmarkLifecycleCoordinator)" "$(metric coordinator-jit-warm-s BenchmarkLifecycleCoordinator)"
	printf '  CPU per lifecycle, server process + ZooKeeper: sidecar %s + %s us, coordinator %s + %s us; sidecar/coordinator server CPU %s\n' \
		"$(metric sidecar-cpu-us/lifecycle BenchmarkLifecycleCoordinator)" "$(metric sidecar-zk-cpu-us/lifecycle BenchmarkLifecycleCoordinator)" \
		"$(metric coordinator-cpu-us/lifecycle BenchmarkLifecycleCoordinator)" "$(metric coordinator-zk-cpu-us/lifecycle BenchmarkLifecycleCoordinator)" \
		"$(metric cpu-sidecar/coordinator BenchmarkLifecycleCoordinator)"
fi

echo
echo "== Many tables (go test ./tests/bench -bench GetManyTablesS3, benchtime $benchtime, count $count) =="
out=$(go test ./tests/bench/ -run='^$' -bench='GetManyTablesS3' -benchtime="$benchtime" -count="$count" 2>&1) || { echo "$out"; exit 1; }
echo "$out" | awk '
	/^BenchmarkGetManyTablesS3\/files=1-/ { g1 += $3; n1++ }
	/^BenchmarkGetManyTablesS3\/files=8-/ { g8 += $3; n8++ }
	END {
		if (n1 == 0 || n8 == 0) { print "no results"; exit 1 }
		g1 /= n1; g8 /= n8
		printf "  get of a 100-table snapshot on S3: 8 files at once %.1f ms/op, one at a time %.1f ms/op, speed-up = %.2fx\n", g8/1e6, g1/1e6, g1/g8
	}'
