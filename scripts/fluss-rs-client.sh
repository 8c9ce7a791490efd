#!/usr/bin/env bash
# Runs Apache Fluss's Rust client (crate fluss-rs, unchanged, pinned by
# compat_test/rust/Cargo.toml and Cargo.lock) against a running sidecar or
# Fluss cluster:
#   scripts/fluss-rs-client.sh --bootstrap HOST:PORT [--user U --password P] [SCENARIO...]
# Scenarios: ping offsets health (default: ping and offsets). Builds the client first
# (scripts/resolve-cargo.sh; minutes the first time, offline and instant
# after). Exit status 0 when every step passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$("$root/scripts/resolve-cargo.sh")
args=("$@")
has_scenario=0
for a in "${args[@]}"; do
	case $a in ping | offsets | health) has_scenario=1 ;; esac
done
[ "$has_scenario" -eq 1 ] || args+=(ping offsets)
exec "$bin" "${args[@]}"
