package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/fluss-sidecar/fluss-sidecar/app/opshttp"
	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	"github.com/fluss-sidecar/fluss-sidecar/cleanup"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/metrics"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
	"github.com/fluss-sidecar/fluss-sidecar/storage/counted"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// OpsSettings are the monitoring and logging settings.
type OpsSettings struct {
	// Prometheus is true when metrics.reporters lists "prometheus".
	Prometheus bool
	// Ports is metrics.reporter.prometheus.port: the ports to try, first
	// free one wins (default 9249).
	Ports []int
	// Host is sidecar.metrics.host, the address the endpoint binds ("":
	// every interface, as Fluss's reporter).
	Host string
	// Pprof is sidecar.debug.pprof: serve /debug/pprof/ on the same port.
	Pprof bool
	// LogFormat is sidecar.log.format: "text" (default) or "json".
	LogFormat string
}

// opsFromConfig reads OpsSettings. Reporters other than prometheus (Fluss
// also has jmx and prometheus-push) are ignored with a warning at start,
// so a server.yaml shared with a coordinator still works.
func opsFromConfig(c *config.Config) (OpsSettings, error) {
	var o OpsSettings
	var errs []error
	for _, r := range strings.Split(c.String(KeyMetricsReporters, defaultText(KeyMetricsReporters)), ",") {
		if strings.EqualFold(strings.TrimSpace(r), "prometheus") {
			o.Prometheus = true
		}
	}
	var err error
	o.Ports, err = opshttp.ParsePorts(c.String(KeyPrometheusPort, defaultText(KeyPrometheusPort)))
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", KeyPrometheusPort, err))
	}
	o.Host = c.String(KeyMetricsHost, defaultText(KeyMetricsHost))
	o.Pprof, err = c.Bool(KeyPprof, defaultBool(KeyPprof))
	errs = append(errs, err)
	o.LogFormat = strings.ToLower(c.String(KeyLogFormat, defaultText(KeyLogFormat)))
	if o.LogFormat != "text" && o.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("%s: %q is neither text nor json", KeyLogFormat, o.LogFormat))
	}
	return o, errors.Join(errs...)
}

// ops is the monitoring side of a running sidecar: the metrics (when the
// reporter is on), the operations endpoint and what readiness needs.
type ops struct {
	m      *metrics.Metrics // nil when the reporter is off
	http   *opshttp.Server
	log    hclog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// shuttingDown turns /readyz to 503 from the first SIGTERM on (see
	// App.Shutdown).
	shuttingDown atomic.Bool

	mu          sync.Mutex
	storageOK   bool
	storageErr  error
	zkConnected func() bool
	upstream    proxy.UpstreamSource
	proxies     []*proxy.Proxy // one per listener in proxy mode
}

func newOps(s Settings, log hclog.Logger) (*ops, error) {
	o := &ops{log: log}
	if !s.Ops.Prometheus {
		return o, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := metrics.New(reg, buildinfo.Get())
	if err != nil {
		return nil, err
	}
	o.m = m
	o.http, err = opshttp.Start(opshttp.Config{
		Host: s.Ops.Host, Ports: s.Ops.Ports, Gatherer: reg, Ready: o.missing, Warnings: o.warnings, Pprof: s.Ops.Pprof, Logger: log,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", KeyPrometheusPort, err)
	}
	return o, nil
}

// The observers below are nil interfaces when the reporter is off, so the
// instrumented packages skip their calls.

func (o *ops) wireObserver() wire.Observer {
	if o.m == nil {
		return nil
	}
	return o.m
}

func (o *ops) zkObserver() zk.SessionObserver {
	if o.m == nil {
		return nil
	}
	return o.m
}

func (o *ops) cleanupObserver() cleanup.Observer {
	if o.m == nil {
		return nil
	}
	return o.m
}

func (o *ops) storageObserver() counted.Observer {
	if o.m == nil {
		return nil
	}
	return o.m
}

func (o *ops) auditObserver() sidecar.AuditObserver {
	if o.m == nil {
		return nil
	}
	return o.m
}

func (o *ops) remoteObserver() remotestore.Observer {
	if o.m == nil {
		return nil
	}
	return o.m
}

// watch starts what readiness and the gauges read: the ZooKeeper session,
// the upstream (proxy mode) and the remote storage probe (see
// probeStorage).
func (o *ops) watch(zc *zk.Client, files *remotestore.Store, upstream proxy.UpstreamSource, interval time.Duration) {
	o.mu.Lock()
	o.zkConnected = zc.Connected
	o.upstream = upstream
	o.mu.Unlock()
	if o.m != nil {
		o.m.GaugeFunc("zookeeper_sessionConnected", "1 while the ZooKeeper session is connected, else 0.", func() float64 {
			return metrics.Bool(zc.Connected())
		})
		o.m.GaugeFunc("storage_remoteAcceptsWrites", "1 while the last probe of remote storage (a file written, read back and deleted in the producers directory) succeeded, else 0.", func() float64 {
			o.mu.Lock()
			defer o.mu.Unlock()
			return metrics.Bool(o.storageOK)
		})
		if upstream != nil {
			o.m.GaugeFunc("proxy_upstreamKnown", "1 while proxy mode knows the coordinator to forward to, else 0.", func() float64 {
				_, err := o.currentUpstream()
				return metrics.Bool(err == nil)
			})
			o.failoverCounters()
			o.m.GaugeFunc("proxy_upstreamLastAnswerNotLeader", "1 while the last answer of a coordinator to a forwarded request was NOT_COORDINATOR_LEADER (65), else 0.", func() float64 {
				for _, p := range o.watchedProxies() {
					if p.LastAnswerNotLeader() {
						return 1
					}
				}
				return 0
			})
			o.m.GaugeFunc("proxy_metadataBypass", "1 while the coordinator's last checked GET_METADATA answer names another coordinator than this sidecar, so clients that refresh metadata leave it (docs/proxy.md), else 0.", func() float64 {
				return metrics.Bool(len(o.bypassed()) > 0)
			})
		}
	}
	// The probe goes on every interval with the reporter off too:
	// GET_CLUSTER_HEALTH reads its result (storesHealth).
	ctx, cancel := context.WithCancel(context.Background())
	o.cancel = cancel
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		o.probeStorage(ctx, files, interval)
	}()
}

// watchCache exports the snapshot cache's counters and size, when both
// the reporter and the cache are on.
func (o *ops) watchCache(c *snapcache.Cache) {
	if o.m == nil || c == nil {
		return
	}
	if err := o.m.WatchSnapshotCache(c.Stats); err != nil {
		o.log.Warn("snapshot cache metrics not exported", "error", err)
	}
}

// failoverCounters exports the proxies' fail-over counts (docs/proxy.md,
// "Coordinator fail-over"), summed over the listeners.
func (o *ops) failoverCounters() {
	sum := func(f func(proxy.FailoverStats) uint64) func() float64 {
		return func() float64 {
			var n uint64
			for _, p := range o.watchedProxies() {
				n += f(p.FailoverStats())
			}
			return float64(n)
		}
	}
	for _, c := range []struct {
		name, help string
		f          func(proxy.FailoverStats) uint64
	}{
		{"proxy_upstreamAnswersTotal", "Answers (SUCCESS or ERROR) of coordinators to forwarded requests, resends included.",
			func(s proxy.FailoverStats) uint64 { return s.UpstreamAnswers }},
		{"proxy_upstreamNotLeaderAnswersTotal", "Answers NOT_COORDINATOR_LEADER (65) of coordinators to forwarded requests: the coordinator is not the leader.",
			func(s proxy.FailoverStats) uint64 { return s.NotLeaderAnswers }},
		{"proxy_resentRequestsTotal", "Forwarded requests sent again to the active coordinator after an answer 65.",
			func(s proxy.FailoverStats) uint64 { return s.Resends }},
		{"proxy_upstreamMovesTotal", "Client connections whose upstream connection moved after an answer 65 (to another coordinator, or back to the same one).",
			func(s proxy.FailoverStats) uint64 { return s.Moves }},
		{"proxy_notLeaderPassedTotal", "Answers 65 passed on to clients: resending off, or its bounds (sidecar.proxy.failover.*) reached.",
			func(s proxy.FailoverStats) uint64 { return s.NotLeaderPassed }},
	} {
		if err := o.m.CounterFunc(c.name, c.help, sum(c.f)); err != nil {
			o.log.Warn("fail-over metrics not exported", "error", err)
		}
	}
}

// watchProxy adds a listener's proxy to what the metadata-bypass gauge and
// /readyz's warnings read.
func (o *ops) watchProxy(p *proxy.Proxy) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.proxies = append(o.proxies, p)
}

// watchedProxies returns the proxies watchProxy added, for the gauges and
// /readyz to read without holding o.mu.
func (o *ops) watchedProxies() []*proxy.Proxy {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.proxies
}

// bypassed returns the coordinator addresses, other than this sidecar's,
// that the proxies' last checked GET_METADATA answers name.
func (o *ops) bypassed() []string {
	var out []string
	for _, p := range o.watchedProxies() {
		if coord, bypass := p.MetadataBypass(); bypass && !slices.Contains(out, coord) {
			out = append(out, coord)
		}
	}
	return out
}

// warnings says, for /readyz, what the sidecar serves despite.
func (o *ops) warnings() []string {
	var out []string
	for _, coord := range o.bypassed() {
		out = append(out, "proxy: the coordinator's GET_METADATA answer names "+coord+" as coordinator, not this sidecar: "+
			"clients that refresh metadata will send producer-offsets requests to "+coord+", not to this sidecar; see docs/proxy.md")
	}
	return out
}

func (o *ops) currentUpstream() (string, error) {
	o.mu.Lock()
	up := o.upstream
	o.mu.Unlock()
	if up == nil {
		return "", errors.New("no upstream source")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	return up.Current(ctx)
}

// ShuttingDown is what /readyz says is missing once a shutdown has begun.
const ShuttingDown = "shutting down"

// missing says what the sidecar lacks to serve requests, for /readyz.
func (o *ops) missing() []string {
	o.mu.Lock()
	connected, storageOK, storageErr, upstream := o.zkConnected, o.storageOK, o.storageErr, o.upstream
	o.mu.Unlock()
	var out []string
	if o.shuttingDown.Load() {
		out = append(out, ShuttingDown)
	}
	out = append(out, storesMissing(connected, storageOK, storageErr)...)
	if upstream != nil {
		if _, err := o.currentUpstream(); err != nil {
			out = append(out, "proxy: no upstream coordinator known: "+err.Error())
		}
	}
	return out
}

// storesMissing says which of the registry's stores does not answer, as
// /readyz and GET_CLUSTER_HEALTH read it: the ZooKeeper session, and the
// last probe of remote storage.
func storesMissing(zkConnected func() bool, storageOK bool, storageErr error) []string {
	var out []string
	if zkConnected == nil || !zkConnected() {
		out = append(out, "zookeeper: no connected session")
	}
	if !storageOK {
		msg := "remote storage: the last probe (write, read back, delete in the producers directory) failed or has not run yet"
		if storageErr != nil {
			msg += ": " + storageErr.Error()
		}
		out = append(out, msg)
	}
	return out
}

// storesHealth is GET_CLUSTER_HEALTH's check (sidecar.HealthFunc): nil
// while ZooKeeper and remote storage answer, by the same state /readyz
// reads, else what is missing. It reads memory only and never blocks.
func (o *ops) storesHealth(context.Context) error {
	o.mu.Lock()
	connected, storageOK, storageErr := o.zkConnected, o.storageOK, o.storageErr
	o.mu.Unlock()
	if missing := storesMissing(connected, storageOK, storageErr); len(missing) > 0 {
		return errors.New(strings.Join(missing, "; "))
	}
	return nil
}

func (o *ops) close() {
	if o.cancel != nil {
		o.cancel()
	}
	o.wg.Wait()
	if o.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		o.http.Close(ctx)
	}
}

// MetricsAddr is the operations endpoint's host:port, or "" when the
// Prometheus reporter is off.
func (a *App) MetricsAddr() string {
	if a.ops == nil || a.ops.http == nil {
		return ""
	}
	return a.ops.http.Addr()
}
