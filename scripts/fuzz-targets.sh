#!/usr/bin/env bash
# Lists every Go fuzz target as ./pkg:FuzzName, for `make fuzz`.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do
	pkg="./$(dirname "${f#./}")"
	grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" | sed 's/^func //' | while read -r name; do
		echo "$pkg:$name"
	done
done
