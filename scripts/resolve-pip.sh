#!/usr/bin/env bash
# Installs Apache Fluss's Python client (PyPI package pyfluss, unchanged,
# pinned with its sha256 by compat_test/python/pyfluss-requirements.txt)
# into a virtual environment under .deps/pyfluss-venv (git-ignored), so
# that the Go tests run compat_test/python/pyfluss_client.py offline. The
# network is used only when the venv is missing or the requirements file
# changed (a stamp in the venv holds the file's sha256). Prints the venv's
# python.
#
# PYFLUSS_PYTHON names the interpreter to build the venv from (CPython 3.11
# with venv and ensurepip; default: the first of python3.11, python3,
# /usr/bin/python3 that is one); PYFLUSS_VENV the venv's directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
req=$root/compat_test/python/pyfluss-requirements.txt
venv=${PYFLUSS_VENV:-$root/.deps/pyfluss-venv}
stamp=$venv/.requirements.sha256
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
	echo "$venv/bin/python"
	exit 0
fi
py=""
for c in "${PYFLUSS_PYTHON:-}" python3.11 python3 /usr/bin/python3; do
	[ -n "$c" ] && command -v "$c" >/dev/null || continue
	if "$c" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
		py=$c
		break
	fi
done
[ -n "$py" ] || { echo "resolve-pip: needs CPython 3.11 with venv and ensurepip: the pinned wheels are cp311 (set PYFLUSS_PYTHON)" >&2; exit 1; }
echo "resolve-pip: installing compat_test/python/pyfluss-requirements.txt into $venv" >&2
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
	--no-deps --only-binary=:all: --require-hashes -r "$req" >&2
"$venv/bin/python" -c 'import fluss, pyarrow; assert fluss.__version__ == "1.0.0", fluss.__version__'
echo "$want" >"$stamp"
echo "$venv/bin/python"
