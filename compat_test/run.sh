#!/usr/bin/env bash
# Builds the foreign-language compat clients from Debian packages and
# messages/fluss.proto, and runs them against a live sidecar.
#
#   compat_test/run.sh --bootstrap 127.0.0.1:9123 [--tablet host:port] [--client python|java|all] [--reference] [--sasl]
#
# --sasl: the SASL scenario instead, for a listener with SASL/PLAIN user
# "user", password "pass".
# --tablet: where the tablet server is, when the address GET_METADATA names
# is not reachable (the reference setup announces 127.0.0.1:9124); by
# default the clients connect to the tablet server GET_METADATA names.
# --reference: the sidecar runs in the reference setup of the vectors (see
# README.md), so clock- and address-dependent replies are compared byte for
# byte too. Needs: protoc (protobuf-compiler), python3 with python3-protobuf,
# javac (a JDK) and /usr/share/java/protobuf.jar (libprotobuf-java).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bootstrap="${FLUSS_BOOTSTRAP:-}"
client=all
reference=()
tablet=()
sasl=()
while [ $# -gt 0 ]; do
	case "$1" in
	--bootstrap) bootstrap="$2"; shift 2 ;;
	--client) client="$2"; shift 2 ;;
	--tablet) tablet=(--tablet "$2"); shift 2 ;;
	--reference) reference=(--reference); shift ;;
	--sasl) sasl=(--sasl); shift ;;
	*) echo "usage: $0 --bootstrap host:port [--tablet host:port] [--client python|java|all] [--reference] [--sasl]" >&2; exit 2 ;;
	esac
done
[ -n "$bootstrap" ] || { echo "$0: --bootstrap host:port (or FLUSS_BOOTSTRAP) is required" >&2; exit 2; }

build="$(mktemp -d "${TMPDIR:-/tmp}/fluss-compat.XXXXXX")"
trap 'rm -rf "$build"' EXIT
vectors="$root/compat_test/vectors"
# COMPAT_PROTO replaces messages/fluss.proto (the tests use it to prove a broken copy fails).
proto="${COMPAT_PROTO:-$root/messages/fluss.proto}"
command -v protoc >/dev/null || { echo "FAIL: protoc not found (Debian package protobuf-compiler)" >&2; exit 1; }

run_python() {
	# Debian's python3-protobuf lives in /usr/bin/python3's path; a python3
	# earlier on PATH (pyenv, venv) may not have it.
	local py
	for py in /usr/bin/python3 python3; do
		if command -v "$py" >/dev/null && "$py" -c 'import google.protobuf' 2>/dev/null; then
			"$py" "$root/compat_test/python/compat_client.py" --bootstrap "$bootstrap" --vectors "$vectors" \
				--proto "$proto" --build "$build/python" "${tablet[@]}" "${reference[@]}" "${sasl[@]}"
			return
		fi
	done
	echo "FAIL python: no python3 with google.protobuf (Debian package python3-protobuf)" >&2
	return 1
}

run_java() {
	local jar=/usr/share/java/protobuf.jar
	command -v javac >/dev/null || { echo "FAIL java: javac not found (a JDK, e.g. Debian default-jdk-headless)" >&2; return 1; }
	[ -f "$jar" ] || { echo "FAIL java: $jar not found (Debian package libprotobuf-java)" >&2; return 1; }
	# Generated code must come from the protoc release of the runtime jar.
	local protoc_v jar_v
	protoc_v="$(protoc --version | awk '{print $2}')"
	jar_v="$(basename "$(readlink -f "$jar")" .jar)"; jar_v="${jar_v#protobuf-}"
	if [ "${protoc_v%.*}" != "${jar_v%.*}" ] && [ "${protoc_v#3.}" != "${jar_v}" ]; then
		echo "FAIL java: protoc $protoc_v and protobuf-java $jar_v are different releases" >&2
		return 1
	fi
	mkdir -p "$build/java/gen" "$build/java/classes"
	protoc --proto_path="$(dirname "$proto")" --java_out="$build/java/gen" "$proto"
	javac -nowarn -encoding UTF-8 -d "$build/java/classes" -cp "$jar" \
		$(find "$build/java/gen" -name '*.java') "$root/compat_test/java/CompatClient.java"
	java -Dcompat.protobuf.version="$jar_v" -cp "$build/java/classes:$jar" CompatClient \
		--bootstrap "$bootstrap" --vectors "$vectors" "${tablet[@]}" "${reference[@]}" "${sasl[@]}"
}

status=0
case "$client" in
python) run_python || status=1 ;;
java) run_java || status=1 ;;
all) run_python || status=1; run_java || status=1 ;;
*) echo "$0: --client must be python, java or all" >&2; exit 2 ;;
esac
exit $status
