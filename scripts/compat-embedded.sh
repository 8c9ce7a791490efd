#!/usr/bin/env bash
# Runs the compat suite's Python and Java clients (compat_test/run.sh)
# against fluss-sidecar in embedded mode: no ZooKeeper, no remote storage,
# nothing but the binary. This is `make compat-embedded`, and the pattern a
# client project's CI can copy (see compat_test/README.md):
#
#   start:  fluss-sidecar serve --embedded --listen 127.0.0.1:0 > addr.txt &
#   wait:   the first stdout line is the bound host:port
#   test:   point the client at it
#   stop:   kill the process (SIGTERM)
#
#   scripts/compat-embedded.sh [run.sh arguments, e.g. --client python]
#   scripts/compat-embedded.sh --fluss-rs [fluss-rs-client.sh arguments]
#   scripts/compat-embedded.sh --pyfluss [pyfluss_client.py arguments]
#
# --fluss-rs runs Fluss's Rust client (scripts/fluss-rs-client.sh,
# compat_test/rust) instead of run.sh's clients, --pyfluss Fluss's Python
# client (compat_test/python/pyfluss_client.py in the venv of
# scripts/resolve-pip.sh).
#
# FLUSS_SIDECAR_BIN names the binary (default bin/fluss-sidecar, built if
# missing).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${FLUSS_SIDECAR_BIN:-$root/bin/fluss-sidecar}"
if [ ! -x "$bin" ]; then
	(cd "$root" && CGO_ENABLED=0 go build -o "$bin" ./cmd/fluss-sidecar)
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/fluss-embedded.XXXXXX")"
"$bin" serve --embedded --listen 127.0.0.1:0 >"$work/stdout" 2>"$work/stderr" &
pid=$!
stop() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap stop EXIT

addr=""
for _ in $(seq 1 200); do
	addr="$(head -n 1 "$work/stdout")"
	[ -n "$addr" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "FAIL: fluss-sidecar serve --embedded exited:" >&2
		cat "$work/stderr" >&2
		exit 1
	fi
	sleep 0.05
done
[ -n "$addr" ] || { echo "FAIL: no address on fluss-sidecar's stdout after 10 s" >&2; cat "$work/stderr" >&2; exit 1; }
echo "fluss-sidecar (embedded) listening on $addr"
if [ "${1:-}" = "--fluss-rs" ]; then
	shift
	"$root/scripts/fluss-rs-client.sh" --bootstrap "$addr" "$@"
elif [ "${1:-}" = "--pyfluss" ]; then
	shift
	"$("$root/scripts/resolve-pip.sh")" "$root/compat_test/python/pyfluss_client.py" --bootstrap "$addr" "$@"
else
	"$root/compat_test/run.sh" --bootstrap "$addr" "$@"
fi
