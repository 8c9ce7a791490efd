#!/usr/bin/env bash
# Measures how long fluss-sidecar in embedded mode takes from exec to its
# first API_VERSIONS answer, with nothing but the binary: an empty
# environment (env -i), an empty working directory, no ZooKeeper, no JVM.
#
#   scripts/embedded-startup.sh [BINARY] [RUNS]     (make embedded-startup)
#
# Each run: start `serve --embedded --listen 127.0.0.1:0`, read the bound
# address from its first stdout line, connect, send the Java client's
# API_VERSIONS request (compat_test/vectors/frames/api_versions_request),
# read the SUCCESS answer, stop the process. As a baseline measured in the
# same run, it also times `fluss-sidecar help` (exec, Go runtime start,
# exit), so the figure can be read as a ratio on a busy machine.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(readlink -f "${1:-$root/bin/fluss-sidecar}")"
runs="${2:-20}"
[ -x "$bin" ] || { echo "usage: $0 [BINARY] [RUNS]; build it with: CGO_ENABLED=0 go build -o bin/fluss-sidecar ./cmd/fluss-sidecar" >&2; exit 2; }

if command -v ldd >/dev/null; then
	if ldd "$bin" >/dev/null 2>&1; then
		echo "note: $bin is dynamically linked (build with CGO_ENABLED=0 for a static binary)"
	else
		echo "$bin: static binary (ldd: not a dynamic executable)"
	fi
fi

empty="$(mktemp -d "${TMPDIR:-/tmp}/fluss-startup.XXXXXX")"
trap 'rm -rf "$empty"' EXIT
# API_VERSIONS v0, request id 0, client "fluss" "0.1.0".
request='\x00\x00\x00\x16\x03\xe8\x00\x00\x00\x00\x00\x00\x0a\x05\x66\x6c\x75\x73\x73\x12\x05\x30\x2e\x31\x2e\x30'

now_us() { local t; t=$(date +%s%N); echo $((t / 1000)); }

one_run() {
	local t0 t1 addr host port head len type
	t0=$(now_us)
	coproc SC { cd "$empty" && exec env -i "$bin" serve --embedded --listen 127.0.0.1:0 2>/dev/null; }
	local pid=$SC_PID
	read -r addr <&"${SC[0]}"
	host=${addr%:*}
	port=${addr##*:}
	exec 3<>"/dev/tcp/$host/$port"
	printf "$request" >&3
	head=$(dd bs=5 count=1 iflag=fullblock <&3 2>/dev/null | od -An -tu1)
	t1=$(now_us)
	exec 3>&-
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	read -r b0 b1 b2 b3 type <<<"$head"
	len=$(((b0 << 24) | (b1 << 16) | (b2 << 8) | b3))
	if [ "${type:-x}" != 0 ] || [ "$len" -lt 5 ]; then
		echo "FAIL: the answer is not a SUCCESS frame (header: $head)" >&2
		exit 1
	fi
	echo $((t1 - t0))
}

baseline_run() {
	local t0 t1
	t0=$(now_us)
	(cd "$empty" && env -i "$bin" help >/dev/null)
	t1=$(now_us)
	echo $((t1 - t0))
}

stats() { sort -n | awk '{a[NR]=$1} END {printf "median %.1f ms, min %.1f ms, max %.1f ms (%d runs)\n", a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000, NR}'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

starts=() bases=()
for _ in $(seq 1 "$runs"); do
	bases+=("$(baseline_run)")
	starts+=("$(one_run)")
done
echo "exec to API_VERSIONS answer: $(printf '%s\n' "${starts[@]}" | stats)"
echo "baseline (exec of 'fluss-sidecar help'): $(printf '%s\n' "${bases[@]}" | stats)"
ms=$(printf '%s\n' "${starts[@]}" | median)
mb=$(printf '%s\n' "${bases[@]}" | median)
awk -v s="$ms" -v b="$mb" 'BEGIN {printf "ratio of medians: %.2f x the baseline\n", s / b}'
max=$(printf '%s\n' "${starts[@]}" | sort -n | tail -1)
if [ "$max" -lt 1000000 ]; then
	echo "every run answered in under 1 s"
else
	echo "SLOW: a run took $((max / 1000)) ms (over 1 s)"
fi
