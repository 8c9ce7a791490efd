// Package metrics is the sidecar's Prometheus instrumentation: one value
// that observes the wire server, the ZooKeeper session, storage calls, the
// cleanup and proxy mode, and registers its collectors on a registry the
// caller passes in (never the global one).
//
// Names follow Fluss's Prometheus reporter: "fluss_" + scope + "_" +
// metric, with Fluss's camelCase metric names where Fluss has the same
// measure (requestBytes, totalTimeMs, requestsInFlight) and Fluss's
// "...Total" names for counts. Fluss reports rates (requestsPerSecond) as
// gauges; the sidecar exports the underlying counters instead, from which
// rate() gives the same figure.
package metrics

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// Prefix starts every metric name: Fluss's "fluss_" and the scope.
const Prefix = "fluss_sidecar_"

// Metrics holds the collectors. Its methods are safe for concurrent use.
type Metrics struct {
	reg prometheus.Registerer

	requests      *prometheus.CounterVec
	errors        *prometheus.CounterVec
	totalTime     *prometheus.HistogramVec
	requestBytes  *prometheus.HistogramVec
	inFlight      prometheus.Gauge
	inFlightBytes prometheus.Gauge
	forwarded     *prometheus.CounterVec
	cut           *prometheus.CounterVec
	clientGone    *prometheus.CounterVec

	connOpen     *prometheus.GaugeVec
	connAccepted *prometheus.CounterVec
	connRefused  *prometheus.CounterVec

	zkReconnects prometheus.Counter
	zkExpiries   prometheus.Counter
	zkEvents     *prometheus.CounterVec

	storageOps    *prometheus.CounterVec
	storageErrors *prometheus.CounterVec
	driverPanics  *prometheus.CounterVec

	cleanupRuns    *prometheus.CounterVec
	expiredRemoved prometheus.Counter
	orphansRemoved prometheus.Counter
	cleanupLeader  prometheus.Gauge

	registryRequests *prometheus.CounterVec
	// registrySeries caches registryRequests' children by operation,
	// client name and outcome, for names that have a label of their own,
	// as series does by api key: a GET of the quick path then takes no lock
	// and hashes no labels. Bounded: MaxClientNames names.
	registrySeries sync.Map // registryKey → prometheus.Counter
	clientNames    clientNames

	funcsMu sync.Mutex
	funcs   map[string]bool // GaugeFuncs registered by name

	// series caches the per-request-type children by api key, so a request
	// costs no label hashing or allocation.
	series sync.Map // messages.Key → *reqSeries
}

// reqSeries are one request type's series.
type reqSeries struct {
	label     string
	requests  prometheus.Counter
	forwarded prometheus.Counter
	totalTime prometheus.Observer
	bytes     prometheus.Observer
}

// otherKey caches the series of every api key outside Fluss's range that
// the Mux does not name ("other").
const otherKey = math.MinInt16

// seriesFor returns the cached series of an api key; the forwarded series
// exists only for keys that are forwarded (a key is served locally or
// forwarded, never both).
func (m *Metrics) seriesFor(key messages.Key, name string, forwarded bool) *reqSeries {
	if name == "" && !labelled(key) {
		key = otherKey
	}
	if v, ok := m.series.Load(key); ok {
		return v.(*reqSeries)
	}
	label := RequestLabel(key, name)
	rs := &reqSeries{
		label:     label,
		requests:  m.requests.WithLabelValues(label),
		totalTime: m.totalTime.WithLabelValues(label),
		bytes:     m.requestBytes.WithLabelValues(label),
	}
	if forwarded {
		rs.forwarded = m.forwarded.WithLabelValues(label)
	}
	v, _ := m.series.LoadOrStore(key, rs)
	return v.(*reqSeries)
}

// New registers every collector on reg and sets build_info from b.
func New(reg prometheus.Registerer, b buildinfo.Info) (*Metrics, error) {
	m := &Metrics{reg: reg, funcs: map[string]bool{}}
	counterVec := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: Prefix + name, Help: help}, labels)
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: Prefix + name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: Prefix + name, Help: help})
	}
	m.requests = counterVec("request_requestsTotal", "Requests answered, by request type (Fluss: requestsPerSecond); cut and client-gone requests are counted apart.", "request")
	m.cut = counterVec("request_cutTotal", "Requests cut by the shutdown's drain timeout: their connection closed before they were answered, by request type. Not errors.", "request")
	m.clientGone = counterVec("request_clientGoneTotal", "Requests whose client closed or reset its connection, or stopped reading, before its answer, by request type. The client's doing: not errors.", "request")
	m.errors = counterVec("request_errorsTotal", "Requests answered with an error, by request type and Fluss error code (Fluss: errorsPerSecond).", "request", "error_code", "error")
	m.totalTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: Prefix + "request_totalTimeMs", Help: "Milliseconds from reading a request to its answer being ready to send (Fluss: totalTimeMs).",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000},
	}, []string{"request"})
	m.requestBytes = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: Prefix + "request_requestBytes", Help: "Size of requests in bytes, header included (Fluss: requestBytes).",
		Buckets: prometheus.ExponentialBuckets(64, 4, 11),
	}, []string{"request"})
	m.inFlight = gauge("request_requestsInFlight", "Requests read and not yet answered (Fluss client: requestsInFlight).")
	m.inFlightBytes = gauge("request_requestBytesInFlight", "Bytes of the requests read and not yet answered.")
	m.forwarded = counterVec("proxy_forwardedRequestsTotal", "Requests passed on to the coordinator in proxy mode, by request type.", "request")

	m.connOpen = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: Prefix + "connection_open", Help: "Open client connections, by listener."}, []string{"listener"})
	m.connAccepted = counterVec("connection_acceptedTotal", "Client connections accepted and served, by listener.", "listener")
	m.connRefused = counterVec("connection_refusedTotal", "Client connections closed at once, by listener and reason (limit: sidecar.max-connections reached; closing: shutting down).", "listener", "reason")

	m.zkReconnects = counter("zookeeper_reconnectsTotal", "Times the ZooKeeper client got a session back after losing its connection.")
	m.zkExpiries = counter("zookeeper_sessionExpiriesTotal", "ZooKeeper sessions the server expired.")
	m.zkEvents = counterVec("zookeeper_sessionEventsTotal", "ZooKeeper session changes, by event (connected, disconnected, reconnected, expired).", "event")

	m.storageOps = counterVec("storage_operationsTotal", "Storage calls, by store (zookeeper, remote) and operation.", "store", "op")
	m.storageErrors = counterVec("storage_errorsTotal", "Failed storage calls, by store, operation and error class.", "store", "op", "class")
	m.driverPanics = counterVec("storage_driverPanicsTotal", "Panics raised inside a remote storage driver and contained (the operation failed as unavailable), by driver and operation.", "driver", "op")

	m.cleanupRuns = counterVec("cleanup_runsTotal", "Cleanup rounds, by result: ok, failed, following (another instance leads cleanup) or electing (no instance leads yet).", "result")
	m.expiredRemoved = counter("cleanup_expiredSnapshotsRemovedTotal", "Expired producer snapshots this instance removed.")
	m.orphansRemoved = counter("cleanup_orphanFilesRemovedTotal", "Orphan offsets files this instance removed.")
	m.cleanupLeader = gauge("cleanup_leader", "1 while this instance leads cleanup, else 0.")
	m.registryRequests = counterVec("audit_registryRequestsTotal", "Producer-offsets requests served by a handler or the GET quick path, by operation (register, get, delete), the client software name the connection sent in API_VERSIONS (the first "+strconv.Itoa(MaxClientNames)+" distinct names, then \"other\"; \"unknown\" when none was sent) and outcome (CREATED, ALREADY_EXISTS, DELETED, NOT_FOUND, FOUND, or a Fluss error code's name).", "op", "client_software", "outcome")

	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: Prefix + "build_info", Help: "Always 1; the labels say which build runs."},
		[]string{"version", "commit", "build_time", "go_version"})
	build.WithLabelValues(b.Version, b.Commit, b.BuildTime, b.GoVersion).Set(1)

	for _, c := range []prometheus.Collector{
		m.requests, m.errors, m.totalTime, m.requestBytes, m.inFlight, m.inFlightBytes, m.forwarded, m.cut, m.clientGone,
		m.connOpen, m.connAccepted, m.connRefused,
		m.zkReconnects, m.zkExpiries, m.zkEvents,
		m.storageOps, m.storageErrors, m.driverPanics,
		m.cleanupRuns, m.expiredRemoved, m.orphansRemoved, m.cleanupLeader, m.registryRequests,
		build,
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return m, nil
}

// GaugeFunc registers a gauge read from fn at every scrape, such as
// zookeeper_sessionConnected. Registering a name twice is an error.
func (m *Metrics) GaugeFunc(name, help string, fn func() float64) error {
	return m.registerFunc(name, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: Prefix + name, Help: help}, fn))
}

// CounterFunc registers a counter read from fn at every scrape, for
// counts kept elsewhere (the proxy's fail-over). fn must never decrease.
// Registering a name twice is an error.
func (m *Metrics) CounterFunc(name, help string, fn func() float64) error {
	return m.registerFunc(name, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: Prefix + name, Help: help}, fn))
}

// registerFunc registers c, the collector of a GaugeFunc or CounterFunc
// named name, once.
func (m *Metrics) registerFunc(name string, c prometheus.Collector) error {
	m.funcsMu.Lock()
	defer m.funcsMu.Unlock()
	if m.funcs[name] {
		return fmt.Errorf("metrics: %s registered twice", name)
	}
	if err := m.reg.Register(c); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	m.funcs[name] = true
	return nil
}

// RequestLabel is the request label of an api key: Fluss's camelCase name
// for the keys the Mux serves (API_VERSIONS → apiVersions), "apiKey<N>"
// for other keys in Fluss's range (1000-1099), "other" for the rest, so a
// client cannot grow the label set.
func RequestLabel(apiKey messages.Key, name string) string {
	if name != "" {
		return camel(name)
	}
	if labelled(apiKey) {
		return fmt.Sprintf("apiKey%d", apiKey)
	}
	return "other"
}

// labelled reports whether an api key the Mux does not name gets a label
// of its own: the hundred keys from Fluss's first one (1000-1099).
func labelled(key messages.Key) bool {
	return key >= messages.FirstKey && key < messages.FirstKey+100
}

// camel turns an upper snake case API name into lower camel case.
func camel(name string) string {
	var b strings.Builder
	for i, part := range strings.Split(strings.ToLower(name), "_") {
		if part == "" {
			continue
		}
		if i > 0 {
			b.WriteString(strings.ToUpper(part[:1]))
			b.WriteString(part[1:])
		} else {
			b.WriteString(part)
		}
	}
	return b.String()
}

// ConnAccepted implements wire.Observer.
func (m *Metrics) ConnAccepted(listener string) {
	m.connAccepted.WithLabelValues(listener).Inc()
	m.connOpen.WithLabelValues(listener).Inc()
}

// ConnRefused implements wire.Observer.
func (m *Metrics) ConnRefused(listener, reason string) {
	m.connRefused.WithLabelValues(listener, reason).Inc()
}

// ConnClosed implements wire.Observer.
func (m *Metrics) ConnClosed(listener string) { m.connOpen.WithLabelValues(listener).Dec() }

// RequestStarted implements wire.Observer.
func (m *Metrics) RequestStarted(_ string, _ wire.RequestHeader, size int) {
	m.inFlight.Inc()
	m.inFlightBytes.Add(float64(size))
}

// RequestDone implements wire.Observer.
func (m *Metrics) RequestDone(_ string, d wire.RequestDone) {
	m.inFlight.Dec()
	m.inFlightBytes.Sub(float64(d.Size))
	fwd := !d.Local && d.Passed
	rs := m.seriesFor(d.Header.APIKey, d.API, fwd)
	switch d.Outcome {
	case wire.OutcomeCut:
		m.cut.WithLabelValues(rs.label).Inc()
		return
	case wire.OutcomeClientGone:
		m.clientGone.WithLabelValues(rs.label).Inc()
		return
	}
	rs.requests.Inc()
	rs.totalTime.Observe(float64(d.Duration) / float64(time.Millisecond))
	rs.bytes.Observe(float64(d.Size))
	if d.Code != flusserr.None {
		m.errors.WithLabelValues(rs.label, fmt.Sprint(int32(d.Code)), d.Code.Name()).Inc()
	}
	if fwd {
		if rs.forwarded != nil {
			rs.forwarded.Inc()
		} else { // the key's first answer was made here (an error)
			m.forwarded.WithLabelValues(rs.label).Inc()
		}
	}
}

// SessionEvent implements zk.SessionObserver.
func (m *Metrics) SessionEvent(e zk.SessionEvent) {
	m.zkEvents.WithLabelValues(e.String()).Inc()
	switch e {
	case zk.SessionReconnected:
		m.zkReconnects.Inc()
	case zk.SessionExpired:
		m.zkExpiries.Inc()
	}
}

// StorageOp counts one storage call; class is "" on success, else the
// failure's class (not_found, unavailable, ...).
func (m *Metrics) StorageOp(store, op, class string) {
	m.storageOps.WithLabelValues(store, op).Inc()
	if class != "" {
		m.storageErrors.WithLabelValues(store, op, class).Inc()
	}
}

// DriverPanic counts one panic raised inside a remote storage driver that
// the store contained.
func (m *Metrics) DriverPanic(driver, op string) {
	m.driverPanics.WithLabelValues(driver, op).Inc()
}

// CleanupRun counts one cleanup round: result is "ok", "failed" or
// "following"; expired and orphans are what it removed.
func (m *Metrics) CleanupRun(result string, expired, orphans int) {
	m.cleanupRuns.WithLabelValues(result).Inc()
	m.expiredRemoved.Add(float64(expired))
	m.orphansRemoved.Add(float64(orphans))
}

// CleanupLeader records whether this instance leads cleanup.
func (m *Metrics) CleanupLeader(leading bool) {
	if leading {
		m.cleanupLeader.Set(1)
	} else {
		m.cleanupLeader.Set(0)
	}
}

// MaxClientNames is how many distinct client software names get a series
// of their own in audit_registryRequestsTotal; later ones count as
// "other", so a client cannot grow the label set without bound.
const MaxClientNames = 16

// clientNames keeps the client software names that have a label.
type clientNames struct {
	mu    sync.Mutex
	names map[string]bool
}

// label is the client_software label of name.
func (c *clientNames) label(name string) string {
	if name == "" {
		return "unknown"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names[name] {
		return name
	}
	if len(c.names) >= MaxClientNames {
		return "other"
	}
	if c.names == nil {
		c.names = make(map[string]bool)
	}
	c.names[name] = true
	return name
}

// RegistryRequest counts one producer-offsets request by operation, client
// software (bounded already by wire.ClientSoftwareText, in number here)
// and outcome.
func (m *Metrics) RegistryRequest(op, client, outcome string) {
	k := registryKey{op, client, outcome}
	if c, ok := m.registrySeries.Load(k); ok {
		c.(prometheus.Counter).Inc()
		return
	}
	label := m.clientNames.label(client)
	c := m.registryRequests.WithLabelValues(op, label, outcome)
	if label == client || client == "" {
		// Only names with a label of their own (or none sent) are kept: "other" stands for
		// any number of names, which must not grow the cache.
		m.registrySeries.Store(k, c)
	}
	c.Inc()
}

// registryKey names one series of audit_registryRequestsTotal by the
// client name as sent.
type registryKey struct{ op, client, outcome string }

// Interface checks.
var (
	_ wire.Observer        = (*Metrics)(nil)
	_ zk.SessionObserver   = (*Metrics)(nil)
	_ remotestore.Observer = (*Metrics)(nil)
)
