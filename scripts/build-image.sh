#!/usr/bin/env bash
# Builds the container image without a Docker daemon or a registry: a static
# binary built here (CGO_ENABLED=0, -trimpath, stamped as make build does)
# and the host's CA bundle on an empty base, with buildah. The result has
# the Dockerfile's final stage: the binary at /fluss-sidecar, the CA bundle
# at /etc/ssl/certs/ca-certificates.crt, /etc/fluss-sidecar and
# /var/lib/fluss-sidecar owned by 65532:65532, user 65532:65532, ports 9123,
# 9124 and 9249, the same entry point and command (deploy/image checks both).
#
#   scripts/build-image.sh [OUTPUT]
#
# OUTPUT ending in .tar is written as an OCI archive, anything else as an
# OCI layout directory; an existing OUTPUT is replaced if it is an OCI
# archive (*.tar file) or an OCI layout directory, else refused. Default:
# bin/fluss-sidecar-image.tar. Load it elsewhere with, for example,
# `podman load -i OUTPUT` or `skopeo copy oci-archive:OUTPUT docker-daemon:fluss-sidecar:dev`.
#
# Environment: VERSION, COMMIT, BUILD_TIME (stamped as make build does),
# IMAGE (the reference name recorded in the output, default
# fluss-sidecar:dev), GO (default go).
#
# buildah runs as root with a private vfs storage (--root and --runroot
# under a temporary directory removed on exit), so nothing is left in
# /var/lib/containers/storage; where the kernel allows a private mount
# namespace, /var/lib is a tmpfs for buildah's own steps, so its blob-info
# cache (/var/lib/containers/cache) is not written either. No step runs a
# command inside the image (it has no shell), so no isolation is needed.
set -euo pipefail
umask 022

# The buildah steps, run in the private mount namespace (see below):
#   build-image.sh --buildah-steps WORK DEST
if [ "${1:-}" = "--buildah-steps" ]; then
	work=$2 dest=$3
	# Only in a mount namespace other than the caller's: never over the
	# host's /var/lib.
	if [ -n "${FLUSS_IMAGE_CALLER_MNT_NS:-}" ] && [ "$(readlink /proc/self/ns/mnt)" != "$FLUSS_IMAGE_CALLER_MNT_NS" ]; then
		mount -t tmpfs -o size=16m,mode=0755 fluss-sidecar-image /var/lib
	fi
	b=(buildah --root "$work/storage/root" --runroot "$work/storage/run" --storage-driver vfs)
	ctr=$("${b[@]}" from --name fluss-sidecar-image scratch)
	trap '"${b[@]}" rm "$ctr" >/dev/null' EXIT
	# Owned by root: the binary, the CA bundle and the parent directories.
	"${b[@]}" copy "$ctr" "$work/rootfs/" / >/dev/null
	# Owned by the image's user: the configuration directory and the
	# directory for a local remote.data.dir (file://).
	"${b[@]}" copy --chown 65532:65532 "$ctr" "$work/owned/etc/" /etc/ >/dev/null
	"${b[@]}" copy --chown 65532:65532 "$ctr" "$work/owned/var/lib/" /var/lib/ >/dev/null
	"${b[@]}" config \
		--user 65532:65532 \
		--port 9123/tcp --port 9124/tcp --port 9249/tcp \
		--entrypoint '["/fluss-sidecar"]' \
		--cmd '["serve", "--config", "/etc/fluss-sidecar/server.yaml"]' \
		--created-by 'scripts/build-image.sh' \
		"$ctr"
	"${b[@]}" commit --quiet --identity-label=false "$ctr" "$dest" >/dev/null
	exit 0
fi

self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
out=${1:-}
case "$out" in
"") ;;
/*) ;;
*) out="$PWD/$out" ;;
esac
cd "$(dirname "$self")/.."
out=${out:-bin/fluss-sidecar-image.tar}
GO=${GO:-go}
IMAGE=${IMAGE:-fluss-sidecar:dev}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo dev)}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
BUILD_TIME=${BUILD_TIME:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt

command -v buildah >/dev/null || { echo "build-image.sh: buildah is not installed (scripts/install-deps.sh installs it)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "build-image.sh: run as root (buildah's rootless mode is not used here)" >&2; exit 1; }
[ -s "$CA_BUNDLE" ] || { echo "build-image.sh: no CA bundle at $CA_BUNDLE (Debian package ca-certificates)" >&2; exit 1; }

if [ -e "$out" ] || [ -L "$out" ]; then
	case "$out" in
	*.tar) [ -f "$out" ] && [ ! -L "$out" ] ;;
	*) [ -d "$out" ] && [ ! -L "$out" ] && [ -f "$out/oci-layout" ] ;;
	esac || { echo "build-image.sh: $out exists and is not an OCI archive or layout; not replacing it" >&2; exit 1; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fluss-sidecar-image.XXXXXX")
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/rootfs/etc/ssl/certs" "$work/rootfs/var/lib" \
	"$work/owned/etc/fluss-sidecar" "$work/owned/var/lib/fluss-sidecar"
buildinfo=github.com/fluss-sidecar/fluss-sidecar/buildinfo
CGO_ENABLED=0 "$GO" build -trimpath \
	-ldflags="-s -w -X $buildinfo.version=$VERSION -X $buildinfo.commit=$COMMIT -X $buildinfo.buildTime=$BUILD_TIME" \
	-o "$work/rootfs/fluss-sidecar" ./cmd/fluss-sidecar
chmod 0755 "$work/rootfs/fluss-sidecar"
install -m 0644 "$CA_BUNDLE" "$work/rootfs$CA_BUNDLE"

case "$out" in
*.tar) dest="oci-archive:$work/image.tar:$IMAGE" built="$work/image.tar" ;;
*) dest="oci:$work/image:$IMAGE" built="$work/image" ;;
esac
if unshare --mount --propagation private true 2>/dev/null; then
	FLUSS_IMAGE_CALLER_MNT_NS=$(readlink /proc/self/ns/mnt) \
		unshare --mount --propagation private "$self" --buildah-steps "$work" "$dest"
else
	echo "build-image.sh: no private mount namespace here; buildah records blob digests in /var/lib/containers/cache" >&2
	FLUSS_IMAGE_CALLER_MNT_NS= "$self" --buildah-steps "$work" "$dest"
fi
mkdir -p "$(dirname "$out")"
rm -rf "$out"
mv "$built" "$out"
echo "$out"
