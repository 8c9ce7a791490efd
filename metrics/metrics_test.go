package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

func TestRequestLabel(t *testing.T) {
	tests := []struct {
		key  messages.Key
		name string
		want string
	}{
		{1053, "REGISTER_PRODUCER_OFFSETS", "registerProducerOffsets"},
		{1000, "API_VERSIONS", "apiVersions"},
		{1012, "", "apiKey1012"},
		{7, "", "other"},
		{-3, "", "other"},
		{9001, "ECHO", "echo"},
	}
	for _, tt := range tests {
		if got := RequestLabel(tt.key, tt.name); got != tt.want {
			t.Errorf("RequestLabel(%d, %q) = %q, want %q", tt.key, tt.name, got, tt.want)
		}
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg, buildinfo.Info{Version: "1.2.3", Commit: "abc", BuildTime: "t", GoVersion: "go1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(reg, buildinfo.Info{}); err == nil {
		t.Fatal("registering twice on one registry must fail")
	}
	m.ConnAccepted("FLUSS")
	m.ConnAccepted("FLUSS")
	m.ConnClosed("FLUSS")
	m.ConnRefused("FLUSS", "limit")
	h := wire.RequestHeader{APIKey: 1053, RequestID: 1}
	m.RequestStarted("FLUSS", h, 100)
	m.RequestStarted("FLUSS", wire.RequestHeader{APIKey: 1003, RequestID: 2}, 40)
	if got := testutil.ToFloat64(m.inFlightBytes); got != 140 {
		t.Fatalf("bytes in flight %v", got)
	}
	m.RequestDone("FLUSS", wire.RequestDone{Header: h, API: "REGISTER_PRODUCER_OFFSETS", Local: true, Size: 100,
		Code: flusserr.InvalidProducerID, Duration: 3 * time.Millisecond})
	m.RequestDone("FLUSS", wire.RequestDone{Header: wire.RequestHeader{APIKey: 1003, RequestID: 2}, Size: 40, Passed: true})
	// Cut by the drain timeout and left by its client: neither is answered
	// nor an error of this server's, whatever code the cancelled handler
	// returned.
	for i, o := range []wire.Outcome{wire.OutcomeCut, wire.OutcomeClientGone, wire.OutcomeClientGone} {
		hc := wire.RequestHeader{APIKey: 1053, RequestID: int32(10 + i)}
		m.RequestStarted("FLUSS", hc, 10)
		m.RequestDone("FLUSS", wire.RequestDone{Header: hc, API: "REGISTER_PRODUCER_OFFSETS", Local: true, Size: 10,
			Code: flusserr.UnknownServerError, Message: "context canceled", Outcome: o})
	}
	m.SessionEvent(zk.SessionConnected)
	m.SessionEvent(zk.SessionDisconnected)
	m.SessionEvent(zk.SessionExpired)
	m.SessionEvent(zk.SessionReconnected)
	m.StorageOp("zookeeper", "get", "")
	m.StorageOp("remote", "read", "not_found")
	m.CleanupRun("ok", 4, 2)
	m.CleanupRun("following", 0, 0)
	m.CleanupLeader(true)
	if err := m.GaugeFunc("zookeeper_sessionConnected", "h", func() float64 { return 1 }); err != nil {
		t.Fatal(err)
	}
	if err := m.GaugeFunc("zookeeper_sessionConnected", "h", func() float64 { return 1 }); err == nil {
		t.Fatal("a GaugeFunc registered twice must fail")
	}

	want := `
# HELP fluss_sidecar_request_requestsTotal Requests answered, by request type (Fluss: requestsPerSecond); cut and client-gone requests are counted apart.
# TYPE fluss_sidecar_request_requestsTotal counter
fluss_sidecar_request_requestsTotal{request="apiKey1003"} 1
fluss_sidecar_request_requestsTotal{request="registerProducerOffsets"} 1
# HELP fluss_sidecar_request_errorsTotal Requests answered with an error, by request type and Fluss error code (Fluss: errorsPerSecond).
# TYPE fluss_sidecar_request_errorsTotal counter
fluss_sidecar_request_errorsTotal{error="INVALID_PRODUCER_ID_EXCEPTION",error_code="63",request="registerProducerOffsets"} 1
# HELP fluss_sidecar_request_cutTotal Requests cut by the shutdown's drain timeout: their connection closed before they were answered, by request type. Not errors.
# TYPE fluss_sidecar_request_cutTotal counter
fluss_sidecar_request_cutTotal{request="registerProducerOffsets"} 1
# HELP fluss_sidecar_request_clientGoneTotal Requests whose client closed or reset its connection, or stopped reading, before its answer, by request type. The client's doing: not errors.
# TYPE fluss_sidecar_request_clientGoneTotal counter
fluss_sidecar_request_clientGoneTotal{request="registerProducerOffsets"} 2
# HELP fluss_sidecar_proxy_forwardedRequestsTotal Requests passed on to the coordinator in proxy mode, by request type.
# TYPE fluss_sidecar_proxy_forwardedRequestsTotal counter
fluss_sidecar_proxy_forwardedRequestsTotal{request="apiKey1003"} 1
# HELP fluss_sidecar_request_requestsInFlight Requests read and not yet answered (Fluss client: requestsInFlight).
# TYPE fluss_sidecar_request_requestsInFlight gauge
fluss_sidecar_request_requestsInFlight 0
# HELP fluss_sidecar_request_requestBytesInFlight Bytes of the requests read and not yet answered.
# TYPE fluss_sidecar_request_requestBytesInFlight gauge
fluss_sidecar_request_requestBytesInFlight 0
# HELP fluss_sidecar_connection_open Open client connections, by listener.
# TYPE fluss_sidecar_connection_open gauge
fluss_sidecar_connection_open{listener="FLUSS"} 1
# HELP fluss_sidecar_connection_acceptedTotal Client connections accepted and served, by listener.
# TYPE fluss_sidecar_connection_acceptedTotal counter
fluss_sidecar_connection_acceptedTotal{listener="FLUSS"} 2
# HELP fluss_sidecar_connection_refusedTotal Client connections closed at once, by listener and reason (limit: sidecar.max-connections reached; closing: shutting down).
# TYPE fluss_sidecar_connection_refusedTotal counter
fluss_sidecar_connection_refusedTotal{listener="FLUSS",reason="limit"} 1
# HELP fluss_sidecar_zookeeper_reconnectsTotal Times the ZooKeeper client got a session back after losing its connection.
# TYPE fluss_sidecar_zookeeper_reconnectsTotal counter
fluss_sidecar_zookeeper_reconnectsTotal 1
# HELP fluss_sidecar_zookeeper_sessionExpiriesTotal ZooKeeper sessions the server expired.
# TYPE fluss_sidecar_zookeeper_sessionExpiriesTotal counter
fluss_sidecar_zookeeper_sessionExpiriesTotal 1
# HELP fluss_sidecar_zookeeper_sessionConnected h
# TYPE fluss_sidecar_zookeeper_sessionConnected gauge
fluss_sidecar_zookeeper_sessionConnected 1
# HELP fluss_sidecar_storage_operationsTotal Storage calls, by store (zookeeper, remote) and operation.
# TYPE fluss_sidecar_storage_operationsTotal counter
fluss_sidecar_storage_operationsTotal{op="get",store="zookeeper"} 1
fluss_sidecar_storage_operationsTotal{op="read",store="remote"} 1
# HELP fluss_sidecar_storage_errorsTotal Failed storage calls, by store, operation and error class.
# TYPE fluss_sidecar_storage_errorsTotal counter
fluss_sidecar_storage_errorsTotal{class="not_found",op="read",store="remote"} 1
# HELP fluss_sidecar_cleanup_runsTotal Cleanup rounds, by result: ok, failed, following (another instance leads cleanup) or electing (no instance leads yet).
# TYPE fluss_sidecar_cleanup_runsTotal counter
fluss_sidecar_cleanup_runsTotal{result="following"} 1
fluss_sidecar_cleanup_runsTotal{result="ok"} 1
# HELP fluss_sidecar_cleanup_expiredSnapshotsRemovedTotal Expired producer snapshots this instance removed.
# TYPE fluss_sidecar_cleanup_expiredSnapshotsRemovedTotal counter
fluss_sidecar_cleanup_expiredSnapshotsRemovedTotal 4
# HELP fluss_sidecar_cleanup_orphanFilesRemovedTotal Orphan offsets files this instance removed.
# TYPE fluss_sidecar_cleanup_orphanFilesRemovedTotal counter
fluss_sidecar_cleanup_orphanFilesRemovedTotal 2
# HELP fluss_sidecar_cleanup_leader 1 while this instance leads cleanup, else 0.
# TYPE fluss_sidecar_cleanup_leader gauge
fluss_sidecar_cleanup_leader 1
# HELP fluss_sidecar_build_info Always 1; the labels say which build runs.
# TYPE fluss_sidecar_build_info gauge
fluss_sidecar_build_info{build_time="t",commit="abc",go_version="go1",version="1.2.3"} 1
`
	names := []string{}
	for _, line := range strings.Split(want, "\n") {
		if strings.HasPrefix(line, "# TYPE ") {
			names = append(names, strings.Fields(line)[2])
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.totalTime); n != 2 {
		t.Errorf("totalTimeMs series: %d, want 2", n)
	}
}
