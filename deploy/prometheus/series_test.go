package prometheus

import (
	"context"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/storagetest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// promqlToken finds, in order, what the name extraction must tell apart:
// string literals, label matchers and range or subquery brackets (skipped
// whole), numbers and durations (skipped), and identifiers.
var promqlToken = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`|\\{[^}]*\\}|\\[[^\\]]*\\]|[0-9][0-9a-zA-Z_.]*|[a-zA-Z_:][a-zA-Z0-9_:]*|\\(|\\)|[^\\s]")

// promqlKeywords are PromQL's words that are neither functions nor series.
var promqlKeywords = []string{"and", "or", "unless", "bool", "offset", "inf", "nan", "Inf", "NaN"}

// labelListWords are followed by a parenthesised list of label names.
var labelListWords = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}

// seriesNames returns the metric names a PromQL expression selects: every
// identifier that is not a function or an aggregation, a keyword, or part
// of a label list, a matcher, a string or a duration. It is lexical, not a
// parser: promtool checks that each expression parses
// (TestPromtoolCheckRules, TestDashboardQueriesParse), and TestSeriesNames
// pins the cases the rules and the dashboard use.
func seriesNames(expr string) []string {
	toks := promqlToken.FindAllString(expr, -1)
	var out []string
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if tok == "" || !(tok[0] == '_' || tok[0] == ':' || (tok[0] >= 'a' && tok[0] <= 'z') || (tok[0] >= 'A' && tok[0] <= 'Z')) {
			continue
		}
		if slices.Contains(labelListWords, tok) {
			if i+1 < len(toks) && toks[i+1] == "(" {
				for i++; i < len(toks) && toks[i] != ")"; i++ {
				}
			}
			continue
		}
		// A function or an aggregation: followed by its arguments, or by
		// "by (...)" / "without (...)" before them.
		if i+1 < len(toks) && (toks[i+1] == "(" || toks[i+1] == "by" || toks[i+1] == "without") {
			continue
		}
		if slices.Contains(promqlKeywords, tok) {
			continue
		}
		if !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	return out
}

func TestSeriesNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`up{job=~"(.+/)?fluss-sidecar"} == 0`, []string{"up"}},
		{`increase(a_total[30m]) > 0`, []string{"a_total"}},
		{"sum by (instance, store) (rate(e{class=~\"x|y\"}[5m])) / sum by (instance, store) (rate(o[5m])) > 0.05", []string{"e", "o"}},
		{`histogram_quantile(0.99, sum by (instance, request, le) (rate(h_bucket{request=~"r"}[5m]))) > 1000`, []string{"h_bucket"}},
		{`a == -1 and b == 1`, []string{"a", "b"}},
		{`sum by (instance) (increase(r{result=~"failed"}[3h])) > 0 unless on (instance) sum by (instance) (increase(r{result="ok"}[3h])) > 0`, []string{"r"}},
		{`process_resident_memory_bytes{instance=~".*"} and on (instance) build_info`, []string{"process_resident_memory_bytes", "build_info"}},
		{`sum(rate(x[1m] offset 5m)) by (le) * 1e3 + 2.5`, []string{"x"}},
		{`sum without (a, b) (c) or vector(0)`, []string{"c"}},
		{`sum by (le) (rate(d[1m]))`, []string{"d"}},
		{`topk by (x) (3, e)`, []string{"e"}},
		{`{__name__="only_by_matcher"}`, nil},
		{`count(x{l="sum(y)"})`, []string{"x"}},
	}
	for _, tt := range tests {
		if got := seriesNames(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("seriesNames(%q) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}

// metricNames scrapes a sidecar's /metrics and returns the series names it
// exports: each family's name, and for histograms and summaries the
// _bucket, _sum and _count series Prometheus stores.
func metricNames(t *testing.T, addr string) map[string]bool {
	t.Helper()
	_, body := apptest.HTTPGet(t, "http://"+addr+"/metrics")
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	out := map[string]bool{}
	for name, f := range fams {
		out[name] = true
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM:
			out[name+"_bucket"], out[name+"_sum"], out[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			out[name+"_sum"], out[name+"_count"] = true, true
		}
	}
	return out
}

func dial(t *testing.T, addr string) *wire.Client {
	t.Helper()
	c, err := wire.Dial(t.Context(), addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Handshake(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// reporterOn turns the Prometheus reporter on, on a free loopback port.
func reporterOn(kv map[string]string) map[string]string {
	kv["metrics.reporters"] = "prometheus"
	kv["metrics.reporter.prometheus.port"] = "0"
	kv["sidecar.metrics.host"] = "127.0.0.1"
	return kv
}

func register(ctx context.Context, c *wire.Client, id string) error {
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TtlMs: proto.Int64(60000),
		TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(1),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(7)}}}}}
	return c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, &messages.RegisterProducerOffsetsResponse{})
}

// exercisedSidecars starts a standalone and a proxy-mode sidecar and drives
// them until every series the rules or the dashboard could read exists: a
// register, a get and an invalid register (errors by code), a register on
// a read-only producers directory (storage errors), a connection refused at
// sidecar.max-connections, cleanup rounds, a forwarded request.
// It returns the names both export, and those only the proxy exports.
func exercisedSidecars(t *testing.T) (names, proxyOnly map[string]bool) {
	zk := zktest.StartT(t)
	dir := t.TempDir()
	lock, unlock := storagetest.ProducersLock(t, dir)
	a := apptest.Start(t, zk.Addr, reporterOn(map[string]string{
		app.KeyRemoteDataDir:   "file://" + dir,
		app.KeyMaxConnections:  "1",
		app.KeyCleanupInterval: "200ms",
	}))
	c := dial(t, a.Addr())
	if err := register(t.Context(), c, "series-1"); err != nil {
		t.Fatal(err)
	}
	if err := register(t.Context(), c, "bad id!"); err == nil {
		t.Fatal("an invalid producer id was accepted")
	}
	get := &messages.GetProducerOffsetsResponse{}
	if err := c.Call(t.Context(), messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("series-1")}, get); err != nil {
		t.Fatal(err)
	}
	// A register while the producers directory refuses writes: a failed
	// storage call.
	lock()
	if err := register(t.Context(), c, "series-2"); err == nil {
		t.Fatal("a register succeeded on a read-only producers directory")
	}
	unlock()
	// The listener takes one connection; the second is closed at once.
	conn, err := net.DialTimeout("tcp", a.Addr(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection past sidecar.max-connections was served")
	}
	conn.Close()
	eventually.True(t, "a cleanup round", func() bool { return metricNames(t, a.MetricsAddr())["fluss_sidecar_cleanup_runsTotal"] })
	names = metricNames(t, a.MetricsAddr())

	fake, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	p := apptest.Start(t, zk.Addr, reporterOn(map[string]string{"sidecar.mode": "proxy", app.KeyUpstreamAddress: fake.Addr()}))
	pc := dial(t, p.Addr())
	if resp, err := pc.CallRaw(t.Context(), messages.KeyListDatabases, 0, []byte{0x0a, 0x01, 'x'}); err != nil || resp.Type != wire.ResponseSuccess {
		t.Fatalf("forwarded request: %v %+v", err, resp)
	}
	proxyOnly = map[string]bool{}
	for n := range metricNames(t, p.MetricsAddr()) {
		if !names[n] {
			proxyOnly[n] = true
			names[n] = true
		}
	}
	return names, proxyOnly
}

// TestExpressionsNameExportedSeries: every series name an alert or a
// dashboard query reads is one a running sidecar exports (up, which
// Prometheus writes for every scrape, aside), so no rule waits forever on
// a misspelt or renamed series.
func TestExpressionsNameExportedSeries(t *testing.T) {
	names, proxyOnly := exercisedSidecars(t)
	for _, want := range []string{"fluss_sidecar_request_errorsTotal", "fluss_sidecar_storage_errorsTotal", "fluss_sidecar_connection_refusedTotal", "fluss_sidecar_cleanup_runsTotal"} {
		if !names[want] {
			t.Errorf("the exercise did not make %s exist", want)
		}
	}
	if !proxyOnly["fluss_sidecar_proxy_upstreamKnown"] || !names["fluss_sidecar_proxy_forwardedRequestsTotal"] {
		t.Errorf("the proxy-mode sidecar lacks its series: %v", proxyOnly)
	}
	exported := func(n string) bool { return names[n] || n == "up" }
	used := map[string]bool{}
	for _, r := range readRules(t) {
		ns := seriesNames(r.Expr)
		if len(ns) == 0 {
			t.Errorf("%s: no series found in %q", r.Alert, r.Expr)
		}
		for _, n := range ns {
			used[n] = true
			if !exported(n) {
				t.Errorf("alert %s reads %s, which no sidecar exports", r.Alert, n)
			}
		}
	}
	for title, es := range readDashboard(t).exprs() {
		for _, e := range es {
			ns := seriesNames(grafanaVars.Replace(e))
			if len(ns) == 0 {
				t.Errorf("panel %q: no series found in %q", title, e)
			}
			for _, n := range ns {
				used[n] = true
				if !exported(n) {
					t.Errorf("panel %q reads %s, which no sidecar exports", title, n)
				}
			}
		}
	}
	t.Logf("%d series names exported, %d read by the rules and the dashboard", len(names), len(used))
}
