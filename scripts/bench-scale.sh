#!/usr/bin/env bash
# Job-scale benchmarks, too slow and too hungry for descriptors
# for `make bench`: memory per idle connection, and the GET storm at
# thousands of connections, standalone and in proxy mode, beside the
# do-nothing server in the same run (docs/performance.md, "Connections at
# job scale"). About five minutes on the 2-vCPU VM. Usage:
#   scripts/bench-scale.sh
# FLUSS_BENCH_IDLE_CONNS and FLUSS_BENCH_STORM_SCALE_CONNS override the
# connection counts (comma-separated).
set -euo pipefail
cd "$(dirname "$0")/.."

# Client and server are separate processes; each needs a descriptor per
# connection. Raise the soft limit to the hard one.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
echo "machine: $(nproc) CPUs, open-files limit $(ulimit -n), $(go env GOOS)/$(go env GOARCH), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (modified)')"

echo
echo "== Idle connections: server RSS growth per connection answered API_VERSIONS (go test ./tests/bench -bench IdleConns) =="
out=$(go test ./tests/bench/ -run='^$' -bench='IdleConns' -benchtime=1x -count=1 -timeout 30m 2>&1) || { echo "$out"; exit 1; }
echo "$out" | sed -n 's/^idle| /  /p'
echo "$out" | awk '/^BenchmarkIdleConns\// {
	for (i = 2; i < NF; i++) {
		if ($(i+1) == "B/idle-conn") b = $i
		if ($(i+1) == "goroutines/idle-conn") g = $i
	}
	split($1, p, "/"); sub(/-[0-9]+$/, "", p[2])
	printf "  %-12s %6.0f B per idle connection (target <= 8192 at 12000), %s goroutines per idle connection\n", p[2], b, g
}'

echo
echo "== GET storm at job scale, default settings (go test ./tests/bench -bench GetStormScale) =="
out=$(go test ./tests/bench/ -run='^$' -bench='GetStormScale' -benchtime=1x -count=1 -timeout 30m 2>&1) || { echo "$out"; exit 1; }
echo "$out" | sed -n 's/^scale| /  /p'
echo "$out" | awk '/^BenchmarkGetStormScale/ {
	for (i = 2; i < NF; i++) if ($(i+1) ~ /\/nothing$/) {
		split($(i+1), p, "-")
		if (p[2] == "cpu")
			printf "  %s connections, CPU per GET %s/do-nothing: %s\n", substr(p[1], 2), substr(p[3], 1, index(p[3], "/")-1), $i
		else
			printf "  %s connections, %s/do-nothing: %s (target >= 0.7 at 4000)\n", substr(p[1], 2), substr(p[2], 1, index(p[2], "/")-1), $i
	}
}' | sort -k1,1n -k3,3
