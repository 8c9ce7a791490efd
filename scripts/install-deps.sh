#!/usr/bin/env bash
# Installs the Debian packages fluss-sidecar's tests and `make run` need:
# ZooKeeper (with Java), protoc, and for compat_test's foreign-language
# clients a JDK with javac, protobuf-java and Python's protobuf, and for its
# storage check the Jackson jars (the JSON library of a Fluss coordinator). Runs
# apt-get update once, only when something is missing.
set -euo pipefail
missing=()
[ -f /usr/share/zookeeper/bin/zkServer.sh ] || [ -n "$(ls /usr/share/java/zookeeper*.jar 2>/dev/null)" ] || missing+=(zookeeper)
command -v java >/dev/null || missing+=(default-jre-headless)
command -v protoc >/dev/null || missing+=(protobuf-compiler)
command -v javac >/dev/null || missing+=(default-jdk-headless)
[ -f /usr/share/java/protobuf.jar ] || missing+=(libprotobuf-java)
# libjackson2-databind-java brings jackson-core and jackson-annotations too.
for jar in jackson-databind jackson-core jackson-annotations; do
	[ -f "/usr/share/java/$jar.jar" ] || { missing+=(libjackson2-databind-java); break; }
done
{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import google.protobuf' 2>/dev/null; } || missing+=(python3-protobuf)
if [ "${#missing[@]}" -eq 0 ]; then exit 0; fi
echo "installing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "not root: run as root or install these Debian packages: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q "${missing[@]}"
