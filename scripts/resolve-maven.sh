#!/usr/bin/env bash
# Resolves the released Java packages the tests run (Fluss servers and
# clients from Maven Central) into .deps/maven/<name>/lib, one folder per
# dependency-only build file:
#   internal/flusstest/maven/<name>/pom.xml   Fluss servers, by release
#   internal/hdfstest/maven/<name>/pom.xml    Hadoop's MiniDFSCluster and client
#   compat_test/flussclient/pom.xml           Fluss's Java client (name: flussclient)
#   compat_test/flinkjob/pom.xml              Fluss's Flink connector and Flink (name: flinkjob)
# A folder is resolved again only when its pom.xml changed (a stamp holds the
# pom's hash), so a run after the first needs no network. Maven's own cache
# (~/.m2) is used as usual; `mvn -o` is tried first.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mvn >/dev/null || { echo "resolve-maven: mvn is not installed (apt-get install -y maven)" >&2; exit 1; }
poms=(internal/flusstest/maven/*/pom.xml internal/hdfstest/maven/*/pom.xml)
[ -f compat_test/flussclient/pom.xml ] && poms+=(compat_test/flussclient/pom.xml)
[ -f compat_test/flinkjob/pom.xml ] && poms+=(compat_test/flinkjob/pom.xml)
for pom in "${poms[@]}"; do
	name=$(basename "$(dirname "$pom")")
	out=.deps/maven/$name
	sum=$(sha256sum "$pom" | cut -d' ' -f1)
	if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$sum" ] && [ -d "$out/lib" ]; then
		continue
	fi
	echo "resolving $pom into $out/lib"
	rm -rf "$out"
	mkdir -p "$out"
	if ! mvn -o -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$PWD/$out/lib" >/dev/null 2>&1; then
		rm -rf "$out/lib"
		mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$PWD/$out/lib"
	fi
	echo "$sum" >"$out/stamp"
done
