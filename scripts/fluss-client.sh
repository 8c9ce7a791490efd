#!/usr/bin/env bash
# Runs Fluss's released Java client (compat_test/flussclient, pinned by its
# pom.xml and resolved by scripts/resolve-maven.sh) against a running sidecar
# or Fluss cluster:
#   scripts/fluss-client.sh --bootstrap HOST:PORT [--user U --password P] [SCENARIO...]
# Scenarios: ping tables offsets refresh (default: all four). It creates and
# drops a database of its own (db_<suffix>); offsets and refresh need a
# server with the producer-offsets registry. Exit status 0 when every step
# passed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$root/.deps/maven/flussclient/lib
[ -n "$(ls "$lib"/*.jar 2>/dev/null)" ] || "$root/scripts/resolve-maven.sh"
classes=$(mktemp -d "${TMPDIR:-/tmp}/fluss-client.XXXXXX")
trap 'rm -rf "$classes"' EXIT
javac -cp "$lib/*" -d "$classes" "$root/compat_test/flussclient/FlussClientScenario.java"
args=("$@")
has_scenario=0
for a in "${args[@]}"; do
	case $a in ping | tables | offsets | refresh) has_scenario=1 ;; esac
done
[ "$has_scenario" -eq 1 ] || args+=(ping tables offsets refresh)
# Java 17 lets the client's Arrow format reach java.nio's buffers only so.
java --add-opens=java.base/java.nio=ALL-UNNAMED -cp "$classes:$lib/*" FlussClientScenario "${args[@]}"
