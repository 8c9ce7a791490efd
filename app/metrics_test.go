package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// reporterOn turns the Prometheus reporter on, on a free loopback port.
func reporterOn(kv map[string]string) map[string]string {
	kv["metrics.reporters"] = "jmx,prometheus"
	kv["metrics.reporter.prometheus.port"] = "0"
	kv["sidecar.metrics.host"] = "127.0.0.1"
	return kv
}

// scrape reads /metrics into families by name.
func scrape(t *testing.T, a *app.App) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := apptest.HTTPGet(t, "http://"+a.MetricsAddr()+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics answered %d", code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns the sample of family name whose labels include want
// ("k=v" pairs), summed over the matching series; -1 if none matches.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f, ok := fams[name]
	if !ok {
		return -1
	}
	sum, found := 0.0, false
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for _, w := range want {
			k, v, _ := strings.Cut(w, "=")
			if labels[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	if !found {
		return -1
	}
	return sum
}

func registerTTL(ctx context.Context, c *wire.Client, id string, ttlMs int64) error {
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TtlMs: proto.Int64(ttlMs),
		TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(1),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(7)}}}}}
	return c.Call(ctx, 1053, 0, req, &messages.RegisterProducerOffsetsResponse{})
}

// TestMetricsAfterTraffic: with the reporter on, /metrics counts exactly
// the requests, errors by code, connections and storage calls the traffic
// made, and says which build runs.
func TestMetricsAfterTraffic(t *testing.T) {
	a := apptest.Start(t, sharedZK, reporterOn(map[string]string{}))
	if a.MetricsAddr() == "" {
		t.Fatal("reporter on, but no metrics address")
	}
	// The cache lists the producer ids in the background once its watch is
	// set; wait for it so the counts below do not depend on that race.
	eventually.Nil(t, "the snapshot cache to list the producer ids", func() error {
		if s := a.Cache().Stats(); s.IndexedIDs < 0 {
			return fmt.Errorf("%+v", s)
		}
		return nil
	})
	const clients, registers, invalid, gets = 2, 5, 3, 4
	for i := 0; i < clients; i++ {
		c := dial(t, a.Addr()) // one API_VERSIONS each
		for j := 0; j < registers; j++ {
			if err := registerTTL(t.Context(), c, fmt.Sprintf("metrics-%d-%d", i, j), 60000); err != nil {
				t.Fatal(err)
			}
		}
		for j := 0; j < invalid; j++ {
			err := registerTTL(t.Context(), c, "bad id!", 60000)
			if fe, ok := flusserr.From(err); !ok || fe.Code != flusserr.InvalidProducerID {
				t.Fatalf("invalid id: %v", err)
			}
		}
		for j := 0; j < gets; j++ {
			resp := &messages.GetProducerOffsetsResponse{}
			if err := c.Call(t.Context(), 1054, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(fmt.Sprintf("metrics-%d-%d", i, j))}, resp); err != nil {
				t.Fatal(err)
			}
		}
		c.Close()
	}
	// Closed connections are counted once the server has seen them go.
	var fams map[string]*dto.MetricFamily
	eventually.True(t, "no open FLUSS connection", func() bool {
		fams = scrape(t, a)
		return value(fams, "fluss_sidecar_connection_open", "listener=FLUSS") == 0
	})
	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"fluss_sidecar_request_requestsTotal", []string{"request=apiVersions"}, clients},
		{"fluss_sidecar_request_requestsTotal", []string{"request=registerProducerOffsets"}, clients * (registers + invalid)},
		{"fluss_sidecar_request_requestsTotal", []string{"request=getProducerOffsets"}, clients * gets},
		{"fluss_sidecar_request_errorsTotal", []string{"request=registerProducerOffsets", "error_code=63", "error=INVALID_PRODUCER_ID_EXCEPTION"}, clients * invalid},
		{"fluss_sidecar_request_errorsTotal", []string{"request=getProducerOffsets"}, -1},
		{"fluss_sidecar_request_totalTimeMs", []string{"request=registerProducerOffsets"}, clients * (registers + invalid)},
		{"fluss_sidecar_request_requestBytes", []string{"request=getProducerOffsets"}, clients * gets},
		{"fluss_sidecar_request_requestsInFlight", nil, 0},
		{"fluss_sidecar_request_requestBytesInFlight", nil, 0},
		{"fluss_sidecar_connection_acceptedTotal", []string{"listener=FLUSS"}, clients},
		{"fluss_sidecar_connection_open", []string{"listener=FLUSS"}, 0},
		// Each valid register creates one znode and writes one file; the
		// gets read no file, since the cache kept each file it wrote.
		{"fluss_sidecar_storage_operationsTotal", []string{"store=zookeeper", "op=create"}, clients * registers},
		{"fluss_sidecar_storage_operationsTotal", []string{"store=remote", "op=write"}, clients * registers},
		{"fluss_sidecar_storage_operationsTotal", []string{"store=remote", "op=read"}, -1},
		{"fluss_sidecar_zookeeper_sessionConnected", nil, 1},
		{"fluss_sidecar_snapshotCache_watching", nil, 1},
		{"fluss_sidecar_cleanup_leader", nil, 1},
		{"fluss_sidecar_build_info", nil, 1},
	}
	for _, tt := range tests {
		if got := value(fams, tt.name, tt.labels...); got != tt.want {
			t.Errorf("%s%v = %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
	// The snapshot cache: each register learnt from the index of producer
	// ids that there was no snapshot, without a read; each get read its
	// znode, invalidated by the register's create (a miss), and found its
	// file cached on write (a hit).
	if known := value(fams, "fluss_sidecar_snapshotCache_knownAbsentTotal"); known != clients*registers {
		t.Errorf("snapshot cache: %v registers known absent, want %d", known, clients*registers)
	}
	if misses := value(fams, "fluss_sidecar_snapshotCache_missesTotal"); misses != clients*gets {
		t.Errorf("snapshot cache: %v misses, want one znode read per get, %d", misses, clients*gets)
	}
	if hits := value(fams, "fluss_sidecar_snapshotCache_hitsTotal"); hits < clients*gets {
		t.Errorf("snapshot cache: %v hits, want at least one file per get, %d", hits, clients*gets)
	}
	if n := value(fams, "fluss_sidecar_snapshotCache_indexedProducerIds"); n < 0 {
		t.Errorf("snapshot cache: no index of producer ids (%v)", n)
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("the Go runtime collector is missing")
	}
	// pprof is opt-in.
	if code, _ := apptest.HTTPGet(t, "http://"+a.MetricsAddr()+"/debug/pprof/cmdline"); code != 404 {
		t.Errorf("pprof off, /debug/pprof/cmdline answered %d", code)
	}
}

// TestMetricsPprofAndDefaults: pprof on the same port when asked; without
// metrics.reporters no endpoint is started.
func TestMetricsPprofAndDefaults(t *testing.T) {
	a := apptest.Start(t, sharedZK, reporterOn(map[string]string{"sidecar.debug.pprof": "true"}))
	if code, body := apptest.HTTPGet(t, "http://"+a.MetricsAddr()+"/debug/pprof/cmdline"); code != 200 || body == "" {
		t.Errorf("pprof on: %d %q", code, body)
	}
	if b := apptest.Start(t, sharedZK, map[string]string{}); b.MetricsAddr() != "" {
		t.Errorf("reporter off, but metrics served on %s", b.MetricsAddr())
	}
	s, err := app.FromConfig(apptest.Config(t, sharedZK, map[string]string{"metrics.reporter.prometheus.port": "9260-9250"}))
	if err == nil || !strings.Contains(err.Error(), "metrics.reporter.prometheus.port") {
		t.Errorf("a reversed range must be refused: %v %+v", err, s.Ops)
	}
	s, err = app.FromConfig(apptest.Config(t, sharedZK, map[string]string{"metrics.reporters": "prometheus"}))
	if err != nil || !s.Ops.Prometheus || len(s.Ops.Ports) != 1 || s.Ops.Ports[0] != 9249 {
		t.Errorf("default port: %v %+v", err, s.Ops)
	}
	if _, err := app.FromConfig(apptest.Config(t, sharedZK, map[string]string{"sidecar.log.format": "xml"})); err == nil {
		t.Error("sidecar.log.format xml must be refused")
	}
}

type readyBody struct {
	Ready    bool     `json:"ready"`
	Missing  []string `json:"missing"`
	Warnings []string `json:"warnings"`
}

// waitReady waits until /readyz answers want and returns its body.
func waitReady(t *testing.T, a *app.App, want int) readyBody {
	t.Helper()
	var r readyBody
	eventually.Nil(t, fmt.Sprintf("/readyz to answer %d", want), func() error {
		code, body := apptest.HTTPGet(t, "http://"+a.MetricsAddr()+"/readyz")
		r = readyBody{}
		if err := json.Unmarshal([]byte(body), &r); err != nil {
			t.Fatalf("/readyz body %q: %v", body, err)
		}
		if code != want {
			return fmt.Errorf("/readyz answers %d (%q)", code, body)
		}
		return nil
	})
	return r
}

// TestReadyzFollowsZooKeeper: /readyz is 200 while the session is
// connected, 503 naming ZooKeeper while the server is down, 200 again
// after it returns; /healthz stays 200 throughout.
func TestReadyzFollowsZooKeeper(t *testing.T) {
	srv := zktest.StartT(t)
	a := apptest.Start(t, srv.Addr, reporterOn(map[string]string{}))
	if r := waitReady(t, a, 200); !r.Ready || len(r.Missing) != 0 {
		t.Fatalf("ready body %+v", r)
	}
	srv.Stop()
	r := waitReady(t, a, 503)
	if r.Ready || len(r.Missing) != 1 || !strings.HasPrefix(r.Missing[0], "zookeeper:") {
		t.Fatalf("not-ready body %+v", r)
	}
	if code, _ := apptest.HTTPGet(t, "http://"+a.MetricsAddr()+"/healthz"); code != 200 {
		t.Fatalf("/healthz %d while ZooKeeper is down", code)
	}
	if got := value(scrape(t, a), "fluss_sidecar_zookeeper_sessionConnected"); got != 0 {
		t.Errorf("sessionConnected %v while ZooKeeper is down", got)
	}
	if err := srv.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitReady(t, a, 200)
	fams := scrape(t, a)
	if got := value(fams, "fluss_sidecar_zookeeper_reconnectsTotal"); got < 1 {
		t.Errorf("reconnectsTotal %v after ZooKeeper returned", got)
	}
	if got := value(fams, "fluss_sidecar_zookeeper_sessionConnected"); got != 1 {
		t.Errorf("sessionConnected %v after ZooKeeper returned", got)
	}
}

// TestReadyzProxyWithoutCoordinator: in proxy mode with no active
// coordinator registered in ZooKeeper, /readyz names the missing upstream.
func TestReadyzProxyWithoutCoordinator(t *testing.T) {
	a := apptest.Start(t, sharedZK, reporterOn(map[string]string{"sidecar.mode": "proxy"}))
	// Storage answers its probe shortly after start; the upstream stays
	// missing.
	var r readyBody
	eventually.True(t, "only the upstream missing", func() bool {
		r = waitReady(t, a, 503)
		return len(r.Missing) == 1
	})
	if !strings.HasPrefix(r.Missing[0], "proxy: no upstream coordinator known") {
		t.Fatalf("not-ready body %+v", r)
	}
	if got := value(scrape(t, a), "fluss_sidecar_proxy_upstreamKnown"); got != 0 {
		t.Errorf("upstreamKnown %v", got)
	}
}

// TestProxyMetadataBypassReported: a coordinator whose GET_METADATA
// answer names another coordinator than the sidecar sets
// fluss_sidecar_proxy_metadataBypass and a /readyz warning (the sidecar
// stays ready); naming the sidecar clears both; with the rewrite on
// nothing is reported.
func TestProxyMetadataBypassReported(t *testing.T) {
	fake, err := fakecoord.Start(fakecoord.Config{}) // names itself
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	metadata := func(a *app.App) {
		t.Helper()
		c := dialProxy(t, a.Addr())
		if _, err := c.Handshake(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := c.Call(t.Context(), messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, &messages.MetadataResponse{}); err != nil {
			t.Fatal(err)
		}
	}
	const gauge = "fluss_sidecar_proxy_metadataBypass"
	a := apptest.Start(t, sharedZK, reporterOn(map[string]string{"sidecar.mode": "proxy", "sidecar.upstream.address": fake.Addr()}))
	if r := waitReady(t, a, 200); len(r.Warnings) != 0 {
		t.Fatalf("warnings before any GET_METADATA: %+v", r)
	}
	if got := value(scrape(t, a), gauge); got != 0 {
		t.Fatalf("%s %v before any GET_METADATA, want 0", gauge, got)
	}

	metadata(a)
	if got := value(scrape(t, a), gauge); got != 1 {
		t.Errorf("%s %v with the coordinator naming itself, want 1", gauge, got)
	}
	r := waitReady(t, a, 200)
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "producer-offsets requests to "+fake.Addr()+", not to this sidecar") {
		t.Errorf("/readyz %+v, want one warning naming %s", r, fake.Addr())
	}

	if err := fake.Advertise(a.Addr()); err != nil {
		t.Fatal(err)
	}
	metadata(a)
	if got := value(scrape(t, a), gauge); got != 0 {
		t.Errorf("%s %v with the coordinator naming the sidecar, want 0", gauge, got)
	}
	if r := waitReady(t, a, 200); len(r.Warnings) != 0 {
		t.Errorf("/readyz %+v with the coordinator naming the sidecar, want no warning", r)
	}

	if err := fake.Advertise(""); err != nil {
		t.Fatal(err)
	}
	rw := apptest.Start(t, sharedZK, reporterOn(map[string]string{"sidecar.mode": "proxy", "sidecar.upstream.address": fake.Addr(),
		"sidecar.proxy.rewrite-metadata": "true"}))
	metadata(rw)
	if got := value(scrape(t, rw), gauge); got != 0 {
		t.Errorf("%s %v with the rewrite on, want 0", gauge, got)
	}
}

// TestReadyzStorage: remote storage that does not answer keeps the sidecar
// not ready, naming remote storage.
func TestReadyzStorage(t *testing.T) {
	c := apptest.Config(t, sharedZK, reporterOn(map[string]string{}))
	// A bucket on a closed loopback port: every call fails.
	c.Set("remote.data.dir", "s3://no-such-bucket/fluss")
	c.Set("s3.endpoint", "http://127.0.0.1:1")
	c.Set("s3.region", "us-east-1")
	c.Set("s3.access-key", "k")
	c.Set("s3.secret-key", "s")
	c.Set("s3.path.style.access", "true")
	a := apptest.StartConfig(t, c, app.Options{})
	r := waitReady(t, a, 503)
	found := false
	for _, m := range r.Missing {
		found = found || strings.HasPrefix(m, "remote storage:")
	}
	if !found {
		t.Fatalf("not-ready body %+v", r)
	}
}

// TestMissingFileLoggedAndCounted: a get whose offsets file is gone is
// answered with an error that is logged at WARN with its code, and the
// failed read is counted as not_found. The cache is off: with it on, the
// file is kept in memory since this sidecar wrote it, and served from there
// (docs/cache.md).
func TestMissingFileLoggedAndCounted(t *testing.T) {
	dir := t.TempDir()
	var logs syncbuf.Buffer
	c := apptest.Config(t, sharedZK, reporterOn(map[string]string{"remote.data.dir": "file://" + dir, app.KeyCacheMaxBytes: "0"}))
	a := apptest.StartConfig(t, c, app.Options{Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: &logs})})
	cl := dial(t, a.Addr())
	if err := registerTTL(t.Context(), cl, "lost-file", 60000); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "producers", "lost-file", "*", "*.offsets"))
	if err != nil || len(files) != 1 {
		t.Fatalf("offsets files %v %v", files, err)
	}
	if err := os.Remove(files[0]); err != nil {
		t.Fatal(err)
	}
	err = cl.Call(t.Context(), 1054, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("lost-file")}, &messages.GetProducerOffsetsResponse{})
	fe, ok := flusserr.From(err)
	if !ok {
		t.Fatalf("get: %v", err)
	}
	out := logs.String()
	for _, want := range []string{"[WARN]", "request answered with an error", "producer_id=lost-file", "offsets file not found",
		"code=" + fe.Code.Name(), fmt.Sprintf("error_code=%d", int32(fe.Code))} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	fams := scrape(t, a)
	if got := value(fams, "fluss_sidecar_storage_errorsTotal", "store=remote", "op=read", "class=not_found"); got != 1 {
		t.Errorf("not_found reads counted %v, want 1", got)
	}
	if got := value(fams, "fluss_sidecar_request_errorsTotal", "request=getProducerOffsets", fmt.Sprintf("error_code=%d", int32(fe.Code))); got != 1 {
		t.Errorf("get errors counted %v, want 1", got)
	}
}
