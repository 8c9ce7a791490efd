#!/usr/bin/env bash
# Installs the Debian packages fluss-sidecar's tests and `make run` need:
# ZooKeeper (with Java), protoc, and for compat_test's foreign-language
# clients a JDK with javac, protobuf-java and Python's protobuf, and for its
# storage check the Jackson jars (the JSON library of a Fluss coordinator), and
# buildah for the container image, and Prometheus (promtool and the server)
# for deploy/prometheus's rule tests, and Maven for the released Fluss
# servers and clients the tests run (make test-deps then resolves them with
# scripts/resolve-maven.sh, and builds fluss-rs with scripts/resolve-cargo.sh). Runs
# apt-get update once, only when something is missing. Then the npm packages
# the tests use as independent implementations (see install_npm below), and
# compat_test/rust, Fluss's Rust client, fetched by cargo and built into
# .deps/cargo-target (scripts/resolve-cargo.sh; cargo itself comes with the
# machine's Rust toolchain, not from here).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
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
# deploy/image builds the container image without a daemon, with the host's CA bundle.
command -v buildah >/dev/null || missing+=(buildah)
[ -s /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
# deploy/prometheus runs promtool and starts its own Prometheus on a free
# loopback port; the package's own service is never used.
command -v mvn >/dev/null || missing+=(maven)
{ command -v promtool >/dev/null && command -v prometheus >/dev/null; } || missing+=(prometheus)

# install_npm installs pinned npm packages into .deps/node (git-ignored),
# only those missing or at another version; nothing is fetched when all are
# there. admin's export tests read files back with apache-arrow and
# hyparquet; remote's conformance tests run Azurite (an Azure Blob emulator).
NPM_DIR=.deps/node
NPM_PACKAGES=(apache-arrow@21.2.0 hyparquet@1.31.5 azurite@3.37.0)
install_npm() {
	local missing_npm=0
	for p in "${NPM_PACKAGES[@]}"; do
		local name=${p%@*} version=${p##*@}
		local have
		have=$(node -p "require('./$NPM_DIR/node_modules/$name/package.json').version" 2>/dev/null || true)
		[ "$have" = "$version" ] || missing_npm=1
	done
	[ "$missing_npm" -eq 0 ] && return 0
	echo "installing npm packages into $NPM_DIR: ${NPM_PACKAGES[*]}"
	mkdir -p "$NPM_DIR"
	# Every package in package.json, so that one install never prunes another.
	{
		echo '{"private":true,"dependencies":{'
		local sep=""
		for p in "${NPM_PACKAGES[@]}"; do
			printf '%s"%s":"%s"' "$sep" "${p%@*}" "${p##*@}"
			sep=","
		done
		echo '}}'
	} >"$NPM_DIR/package.json"
	(cd "$NPM_DIR" && npm install --no-audit --no-fund --no-package-lock)
}

if [ "${#missing[@]}" -ne 0 ]; then
	echo "installing: ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "not root: run as root or install these Debian packages: ${missing[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q "${missing[@]}"
	# Debian's prometheus package starts its own server (and the node
	# exporter it recommends) on every interface where an init system
	# runs. The tests start their own Prometheus on loopback; stop and
	# disable the package's so nothing listens beyond 127.0.0.1.
	if printf '%s\n' "${missing[@]}" | grep -qx prometheus; then
		for svc in prometheus prometheus-node-exporter; do
			if [ -d /run/systemd/system ]; then
				systemctl disable --now "$svc" >/dev/null 2>&1 || true
			elif command -v service >/dev/null; then
				service "$svc" stop >/dev/null 2>&1 || true
			fi
		done
	fi
fi
install_npm
