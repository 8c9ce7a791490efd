#!/usr/bin/env bash
# make run: a local ZooKeeper (unless ZK_ADDRESS names one) and the sidecar in
# the foreground, with data under DATA_DIR. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR=${DATA_DIR:-$PWD/data}
ZK_PORT=${ZK_PORT:-2181}
LISTEN=${LISTEN:-127.0.0.1:9123}
# The tablet-server endpoint that GET_METADATA names beside LISTEN.
TABLET_LISTEN=${TABLET_LISTEN:-127.0.0.1:9124}
# Prometheus reporter port (a Fluss-style range is allowed): /metrics,
# /healthz, /readyz on 127.0.0.1.
METRICS_PORT=${METRICS_PORT:-9249}
# Where offsets files go; e.g. the hdfs:// address `make hdfs` prints.
REMOTE_DATA_DIR=${REMOTE_DATA_DIR:-file://$DATA_DIR/remote}
mkdir -p "$DATA_DIR/remote"

zk_pid=""
cleanup() {
	trap - INT TERM EXIT
	[ -n "${sc_pid:-}" ] && kill "$sc_pid" 2>/dev/null && wait "$sc_pid" 2>/dev/null || true
	[ -n "$zk_pid" ] && kill "$zk_pid" 2>/dev/null && wait "$zk_pid" 2>/dev/null || true
}
trap cleanup INT TERM EXIT

if [ -z "${ZK_ADDRESS:-}" ]; then
	if (exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT") 2>/dev/null; then
		echo "port 127.0.0.1:$ZK_PORT is taken; set ZK_PORT=<free port>, or ZK_ADDRESS=host:port to use that ZooKeeper" >&2
		exit 1
	fi
	echo "starting ZooKeeper on 127.0.0.1:$ZK_PORT (data in $DATA_DIR/zk, log in $DATA_DIR/zk.log)"
	# Its own session, so that Ctrl-C reaches only the sidecar: the trap
	# below stops ZooKeeper after the sidecar has closed its session.
	setsid bin/zkrun -dir "$DATA_DIR/zk" -port "$ZK_PORT" >"$DATA_DIR/zk.log" 2>&1 &
	zk_pid=$!
	ZK_ADDRESS="127.0.0.1:$ZK_PORT"
	for _ in $(seq 1 120); do
		(exec 3<>"/dev/tcp/127.0.0.1/$ZK_PORT") 2>/dev/null && break
		kill -0 "$zk_pid" 2>/dev/null || { echo "ZooKeeper did not start:" >&2; tail -20 "$DATA_DIR/zk.log" >&2; exit 1; }
		sleep 0.5
	done
fi

# No load balancer in front: Ctrl-C drains at once (no accept delay).
echo "starting fluss-sidecar on $LISTEN, tablet-server endpoint $TABLET_LISTEN (ZooKeeper $ZK_ADDRESS, remote.data.dir $REMOTE_DATA_DIR, metrics on 127.0.0.1:$METRICS_PORT)"
bin/fluss-sidecar serve \
	-Dbind.listeners="FLUSS://$LISTEN" \
	-Dsidecar.tablet-server.listeners="FLUSS://$TABLET_LISTEN" \
	-Dzookeeper.address="$ZK_ADDRESS" \
	-Dremote.data.dir="$REMOTE_DATA_DIR" \
	-Dmetrics.reporters=prometheus \
	-Dmetrics.reporter.prometheus.port="$METRICS_PORT" \
	-Dsidecar.metrics.host=127.0.0.1 \
	-Dsidecar.shutdown.accept-delay=0 \
	"$@" &
sc_pid=$!
wait "$sc_pid"
