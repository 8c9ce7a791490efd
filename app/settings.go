package app

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/assembly"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
)

// Settings is everything the sidecar reads from Fluss configuration, with
// the defaults applied. Keys are Fluss's own where Fluss has one; keys only
// the sidecar reads start with "sidecar.".
type Settings struct {
	Listeners           []config.Listener // bind.listeners
	AdvertisedListeners []config.Listener // advertised.listeners, defaulting to bind.listeners
	// TabletListeners and TabletAdvertised are the tablet-server endpoint's
	// sidecar.tablet-server.listeners and .advertised.listeners; nil takes
	// the defaults of assembly.Tablet.
	TabletListeners  []config.Listener
	TabletAdvertised []config.Listener

	ZooKeeperAddress           string        // zookeeper.address (required)
	ZooKeeperRoot              string        // zookeeper.path.root
	ZooKeeperSessionTimeout    time.Duration // zookeeper.client.session-timeout
	ZooKeeperConnectionTimeout time.Duration // zookeeper.client.connection-timeout
	ZooKeeperMaxBufferSize     int64         // zookeeper.client.max-buffer-size
	ZooKeeperServerMaxBuffer   int64         // sidecar.zookeeper.jute-maxbuffer: the servers' jute.maxbuffer
	// ZooKeeper is TLS and SASL from zookeeper.client.config-path and the
	// JAAS file (zookeeper.go).
	ZooKeeper ZooKeeperSecurity

	// RemoteDataDir is where offsets files go: remote.data.dir, else the
	// first entry of remote.data.dirs (remotedir.go); RemoteDataDirKey
	// names the key it came from. Empty in embedded mode.
	RemoteDataDir    string
	RemoteDataDirKey string
	// RemoteDataDirs is remote.data.dirs, split as Fluss splits it.
	RemoteDataDirs []string
	S3Endpoint     string // s3.endpoint (or fs.oss.endpoint for oss://)
	S3Region       string // s3.region
	S3AccessKey    string // s3.access-key (or fs.oss.accessKeyId)
	S3SecretKey    string // s3.secret-key (or fs.oss.accessKeySecret)
	S3PathStyle    bool   // s3.path.style.access
	// GCS and Azure are read from Fluss's gs and Azure file system keys
	// (see storage.go); cosn:// and obs:// fill the S3 fields.
	GCS   remote.GCSOptions
	Azure remote.AzureOptions
	// HDFS is read from the Hadoop configuration of hdfs:// (fluss.hadoop.*
	// over the files of HADOOP_CONF_DIR).
	HDFS remote.HDFSOptions

	ProducerOffsetsTTL   time.Duration // coordinator.producer-offsets.ttl
	CleanupInterval      time.Duration // coordinator.producer-offsets.cleanup-interval
	OrphanGracePeriod    time.Duration // sidecar.orphan-cleanup.grace-period
	MaxRequestSize       int64         // netty.server.max-request-size
	IdleTimeout          time.Duration // netty.connection.max-idle-time
	NodeID               int32         // sidecar.node-id
	RequestTimeout       time.Duration // sidecar.request-timeout
	MaxInFlightPerConn   int           // sidecar.max-inflight-per-connection
	MaxConnections       int           // sidecar.max-connections; 0: derived at start (DeriveMaxConnections)
	MaxRunningPerConn    int           // sidecar.max-running-per-connection
	LogLevel             string        // sidecar.log.level
	AuditWrites          bool          // sidecar.audit.writes
	AuditReads           bool          // sidecar.audit.reads
	ShutdownDrainTimeout time.Duration // sidecar.shutdown.drain-timeout
	// ShutdownAcceptDelay is sidecar.shutdown.accept-delay: how long a
	// shutdown keeps accepting and serving new connections after /readyz
	// turned 503, before it drains (App.Shutdown). Embedded mode's default
	// is 0.
	ShutdownAcceptDelay time.Duration
	Cache               CacheSettings // sidecar.snapshot-cache.* (app/cache.go)
	// ReadConsistency is sidecar.read-consistency: ReadLinearizable (a GET
	// waits for a ZooKeeper sync shared with the GETs that arrived with it)
	// or ReadSequential (a GET answers from the cache or the session's
	// server as they are). See docs/semantics.md.
	ReadConsistency string
	// MaxQueuedRequestBytes is sidecar.max-queued-request-bytes: the
	// server-wide budget of request bytes in memory (wire.Budget).
	MaxQueuedRequestBytes int64
	// StorageStartChecks is sidecar.storage.start-check-attempts: how many
	// times a start probes remote storage that fails transiently.
	StorageStartChecks int
	// StorageCheckInterval is sidecar.storage.check-interval: how often a
	// running sidecar with the Prometheus reporter on probes that remote
	// storage still takes offsets files, for /readyz.
	StorageCheckInterval time.Duration

	// Security holds listener protocols, SASL users and authorizer
	// settings: internal.listener.name, security.protocol.map,
	// security.sasl.*, authorizer.enabled, super.users,
	// security.acl.principal.ignore-case, sidecar.authentication.timeout,
	// sidecar.authorization.require-table-for-empty.
	Security authz.Settings

	// Mode is sidecar.mode: "standalone" serves only the sidecar's APIs;
	// "proxy" also streams every other API to the cluster's coordinator.
	Mode string
	// UpstreamAddress is sidecar.upstream.address, the coordinator's real
	// client listener. When empty in proxy mode, the active coordinator is
	// found in ZooKeeper (/coordinators/active) and followed.
	UpstreamAddress string
	// UpstreamListenerName is sidecar.upstream.listener-name: which of the
	// active coordinator's listeners to forward to (empty: the first).
	UpstreamListenerName string
	// RewriteMetadata is sidecar.proxy.rewrite-metadata: replace the
	// coordinator's address in forwarded GET_METADATA answers by the
	// sidecar's (see docs/proxy.md for why advertising is preferred).
	RewriteMetadata bool
	// MaxResends and ResendTimeout are sidecar.proxy.failover.max-resends
	// and sidecar.proxy.failover.timeout: the bounds of resending a
	// forwarded request answered NOT_COORDINATOR_LEADER (0 resends: off).
	MaxResends    int
	ResendTimeout time.Duration

	// Embedded is sidecar.embedded (serve --embedded): snapshots and offsets
	// files are kept in memory, not in ZooKeeper and remote storage; for
	// client test suites (see embedded.go).
	Embedded bool
	// ACLFile is sidecar.embedded.acl-file: the ACLs of embedded mode.
	ACLFile string
	// ControlListen is sidecar.embedded.control.listen: where embedded
	// mode serves its control API, a loopback host:port; "" for none.
	ControlListen string
	// Ops holds the metrics reporter, operations endpoint and log format
	// settings (see OpsSettings).
	Ops OpsSettings

	// FileLimit is the open-files limit found at start (PrepareStart or
	// Start); nil before.
	FileLimit *FileLimit
	// MaxConnectionsDerived says MaxConnections was derived from FileLimit
	// because sidecar.max-connections was not set.
	MaxConnectionsDerived bool
	// maxConnectionsSet: sidecar.max-connections was given (validate
	// refuses a value below 1 then).
	maxConnectionsSet bool
}

// Proxy mode values (sidecar.mode).
const (
	ModeStandalone = "standalone"
	ModeProxy      = "proxy"
)

// Read consistency values (sidecar.read-consistency, docs/semantics.md).
const (
	ReadLinearizable = "linearizable"
	ReadSequential   = "sequential"
)

// FromConfig reads Settings and checks them. An unset key takes its
// default from the configuration table (configkeys.go).
func FromConfig(c *config.Config) (Settings, error) {
	var s Settings
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	s.Listeners, err = config.ParseListeners(c.String(KeyBindListeners, defaultText(KeyBindListeners)))
	add(wrapKey(KeyBindListeners, err))
	if v := c.String(KeyAdvertisedListeners, defaultText(KeyAdvertisedListeners)); v != "" {
		s.AdvertisedListeners, err = config.ParseListeners(v)
		add(wrapKey(KeyAdvertisedListeners, err))
	}
	if v := c.String(KeyTabletListeners, ""); v != "" {
		s.TabletListeners, err = config.ParseListeners(v)
		add(wrapKey(KeyTabletListeners, err))
	}
	if v := c.String(KeyTabletAdvertised, ""); v != "" {
		s.TabletAdvertised, err = config.ParseListeners(v)
		add(wrapKey(KeyTabletAdvertised, err))
	}
	s.Embedded, err = c.Bool(KeyEmbedded, defaultBool(KeyEmbedded))
	add(wrapKey(KeyEmbedded, err))
	s.ZooKeeperAddress = c.String(KeyZKAddress, defaultText(KeyZKAddress))
	if s.ZooKeeperAddress == "" && !s.Embedded {
		//lint:ignore ST1005 Fluss's own message, capital included
		add(errors.New("No valid ZooKeeper quorum has been specified. You can specify the quorum via the configuration key '" + KeyZKAddress + "'"))
	}
	s.ZooKeeperRoot = c.String(KeyZKRoot, defaultText(KeyZKRoot))
	s.ZooKeeperSessionTimeout, err = c.Duration(KeyZKSessionTimeout, defaultDuration(KeyZKSessionTimeout))
	add(err)
	s.ZooKeeperConnectionTimeout, err = c.Duration(KeyZKConnTimeout, defaultDuration(KeyZKConnTimeout))
	add(err)
	s.ZooKeeperMaxBufferSize, err = c.MemorySize(KeyZKMaxBufferSize, defaultMemory(KeyZKMaxBufferSize))
	add(err)
	s.ZooKeeperServerMaxBuffer, err = c.MemorySize(KeyZKServerMaxBuffer, defaultMemory(KeyZKServerMaxBuffer))
	add(err)
	if s.ZooKeeperMaxBufferSize <= 0 || s.ZooKeeperServerMaxBuffer <= 0 {
		add(errors.New("'" + KeyZKMaxBufferSize + "' and '" + KeyZKServerMaxBuffer + "' must be positive"))
	}
	if !s.Embedded {
		s.ZooKeeper, err = zooKeeperSecurityFromConfig(c, os.Getenv)
		add(err)
	}

	add(readRemoteDir(c, &s))
	add(readStorageKeys(c, &s, os.Getenv))
	s.S3Endpoint = c.String(KeyS3Endpoint, s.S3Endpoint)
	s.S3Region = c.String(KeyS3Region, s.S3Region)
	s.S3AccessKey = c.String(KeyS3AccessKey, s.S3AccessKey)
	s.S3SecretKey = c.String(KeyS3SecretKey, s.S3SecretKey)
	s.S3PathStyle, err = c.Bool(KeyS3PathStyle, defaultBool(KeyS3PathStyle))
	add(err)

	s.ProducerOffsetsTTL, err = c.Duration(KeyTTL, defaultDuration(KeyTTL))
	add(err)
	s.CleanupInterval, err = c.Duration(KeyCleanupInterval, defaultDuration(KeyCleanupInterval))
	add(err)
	if err == nil && s.CleanupInterval <= 0 {
		add(fmt.Errorf("%s must be positive, got %v", KeyCleanupInterval, s.CleanupInterval))
	}
	s.OrphanGracePeriod, err = c.Duration(KeyOrphanGrace, defaultDuration(KeyOrphanGrace))
	add(err)
	// A register whose outcome is unknown keeps its files while it settles,
	// for up to a session timeout: cleanup must not take them first.
	if err == nil && !s.Embedded && s.OrphanGracePeriod < 2*s.ZooKeeperSessionTimeout {
		add(fmt.Errorf("'%s' (%s) must be at least twice '%s' (%s): "+
			"a write whose outcome is unknown settles for up to one session timeout, and its files must outlive that",
			KeyOrphanGrace, s.OrphanGracePeriod, KeyZKSessionTimeout, s.ZooKeeperSessionTimeout))
	}
	s.MaxRequestSize, err = c.MemorySize(KeyMaxRequestSize, defaultMemory(KeyMaxRequestSize))
	add(err)
	if err == nil && (s.MaxRequestSize < 12 || s.MaxRequestSize > 1<<31-1) {
		add(fmt.Errorf("%s must be between 12 bytes and 2gb-1, got %d", KeyMaxRequestSize, s.MaxRequestSize))
	}
	s.IdleTimeout, err = c.Duration(KeyIdleTimeout, defaultDuration(KeyIdleTimeout))
	add(err)
	nodeID, err := c.Int(KeyNodeID, defaultInt(KeyNodeID))
	add(err)
	if err == nil && (nodeID < 0 || nodeID > 1<<31-1) {
		add(fmt.Errorf("%s must be a non-negative int32, got %d", KeyNodeID, nodeID))
	}
	s.NodeID = int32(nodeID)
	s.RequestTimeout, err = c.Duration(KeyRequestTimeout, defaultDuration(KeyRequestTimeout))
	add(err)
	n, err := c.Int(KeyMaxInFlight, defaultInt(KeyMaxInFlight))
	add(err)
	s.MaxInFlightPerConn = int(n)
	n, err = c.Int(KeyMaxRunningPerConn, defaultInt(KeyMaxRunningPerConn))
	add(err)
	s.MaxRunningPerConn = int(n)
	// Not set: 0, derived at start from the open-files limit.
	n, err = c.Int(KeyMaxConnections, defaultInt(KeyMaxConnections))
	add(err)
	s.MaxConnections = int(n)
	s.maxConnectionsSet = c.String(KeyMaxConnections, "") != ""
	s.MaxQueuedRequestBytes, err = c.MemorySize(KeyMaxQueuedBytes, defaultMemory(KeyMaxQueuedBytes))
	add(err)
	n, err = c.Int(KeyStorageStartChecks, defaultInt(KeyStorageStartChecks))
	add(err)
	s.StorageStartChecks = int(n)
	s.StorageCheckInterval, err = c.Duration(KeyStorageCheckInterval, defaultDuration(KeyStorageCheckInterval))
	add(err)
	s.LogLevel = strings.ToLower(c.String(KeyLogLevel, defaultText(KeyLogLevel)))
	s.AuditWrites, err = c.Bool(KeyAuditWrites, defaultBool(KeyAuditWrites))
	add(err)
	s.AuditReads, err = c.Bool(KeyAuditReads, defaultBool(KeyAuditReads))
	add(err)
	s.ShutdownDrainTimeout, err = c.Duration(KeyDrainTimeout, defaultDuration(KeyDrainTimeout))
	add(err)
	s.ShutdownAcceptDelay, err = c.Duration(KeyAcceptDelay, defaultDuration(KeyAcceptDelay))
	add(err)
	if _, set := c.Lookup(KeyAcceptDelay); !set && s.Embedded {
		// No load balancer in front of a client test suite's server.
		s.ShutdownAcceptDelay = 0
	}
	s.Cache, err = cacheSettingsFromConfig(c)
	add(err)
	names := make([]string, len(s.Listeners))
	for i, l := range s.Listeners {
		names[i] = l.Name
	}
	s.Security, err = authz.SettingsFromConfig(c, names)
	add(err)

	s.ReadConsistency = strings.ToLower(c.String(KeyReadConsistency, defaultText(KeyReadConsistency)))
	if s.ReadConsistency != ReadLinearizable && s.ReadConsistency != ReadSequential {
		add(fmt.Errorf("%s: %q is neither %q nor %q", KeyReadConsistency, s.ReadConsistency, ReadLinearizable, ReadSequential))
	}

	s.Mode = strings.ToLower(c.String(KeyMode, defaultText(KeyMode)))
	switch s.Mode {
	case ModeStandalone:
	case ModeProxy:
		s.UpstreamAddress = c.String(KeyUpstreamAddress, defaultText(KeyUpstreamAddress))
		s.UpstreamListenerName = c.String(KeyUpstreamListenerName, defaultText(KeyUpstreamListenerName))
		s.RewriteMetadata, err = c.Bool(KeyRewriteMetadata, defaultBool(KeyRewriteMetadata))
		add(err)
		n, err := c.Int(KeyMaxResends, defaultInt(KeyMaxResends))
		add(err)
		if err == nil && (n < 0 || n > 1000) {
			add(fmt.Errorf("%s must be between 0 and 1000, got %d", KeyMaxResends, n))
		}
		s.MaxResends = int(n)
		s.ResendTimeout, err = c.Duration(KeyResendTimeout, defaultDuration(KeyResendTimeout))
		add(err)
		if err == nil && s.ResendTimeout <= 0 {
			add(fmt.Errorf("%s must be positive, got %v", KeyResendTimeout, s.ResendTimeout))
		}
	default:
		add(fmt.Errorf("%s: %q is neither %q nor %q", KeyMode, s.Mode, ModeStandalone, ModeProxy))
	}
	add(embeddedSettings(c, &s))
	s.Ops, err = opsFromConfig(c)
	add(err)
	if len(errs) == 0 {
		// Values that parse but cannot work; checked once all parse, so
		// that a value that does not parse gives one line, not two.
		errs = append(errs, s.validate()...)
	}
	return s, errors.Join(errs...)
}

// Limits are the serving limits of s, which the assembly applies to every
// listener the same way in ZooKeeper and embedded mode.
func (s Settings) Limits() assembly.Limits {
	return assembly.Limits{
		MaxFrameSize:          int32(s.MaxRequestSize),
		MaxInFlightPerConn:    s.MaxInFlightPerConn,
		MaxRunningPerConn:     s.MaxRunningPerConn,
		MaxConns:              s.MaxConnections,
		MaxQueuedRequestBytes: s.MaxQueuedRequestBytes,
		IdleTimeout:           s.IdleTimeout,
		RequestTimeout:        s.RequestTimeout,
		DrainTimeout:          s.ShutdownDrainTimeout,
	}
}

func wrapKey(key string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", key, err)
}

// audit is the audit configuration of sidecar.audit.*, counted by
// observer (nil: not counted).
func (s Settings) audit(observer sidecar.AuditObserver) sidecar.AuditConfig {
	return sidecar.AuditConfig{Writes: s.AuditWrites, Reads: s.AuditReads, Observer: observer}
}
