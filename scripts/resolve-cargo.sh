#!/usr/bin/env bash
# Resolves and builds compat_test/rust (fluss-rs-compat: Apache Fluss's Rust
# client crate fluss-rs, pinned by exact version, every crate pinned by its
# committed Cargo.lock) into .deps/cargo-target (git-ignored), so that the Go
# tests build it offline and warm. Crates come from cargo's own cache
# (~/.cargo/registry); the network is used only when something is missing
# there: the first run, or after Cargo.lock changed. Prints the binary's path.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
manifest=$root/compat_test/rust/Cargo.toml
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/.deps/cargo-target}
cargo=$(command -v cargo || true)
[ -n "$cargo" ] || [ ! -x "$HOME/.cargo/bin/cargo" ] || cargo=$HOME/.cargo/bin/cargo
[ -n "$cargo" ] || { echo "resolve-cargo: cargo is not installed (Rust 1.85 or newer, e.g. by rustup)" >&2; exit 1; }
if ! "$cargo" build -q --release --locked --offline --manifest-path "$manifest" 2>/dev/null; then
	echo "resolve-cargo: fetching the crates of compat_test/rust/Cargo.lock" >&2
	"$cargo" fetch --locked --manifest-path "$manifest"
	"$cargo" build --release --locked --offline --manifest-path "$manifest"
fi
echo "$CARGO_TARGET_DIR/release/fluss-rs-compat"
