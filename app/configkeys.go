package app

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// This file is the one place that spells the sidecar's configuration keys
// (those authz reads are spelt in authz/settings.go): the constants below,
// and configKeys, the table of every key with its default, whether it is a
// secret, and what it does. The table feeds FromConfig's defaults, the
// typo check (CheckKeys), the redaction of the start-up line (IsSensitive)
// and README.md's configuration reference, which a test keeps equal to it
// (configKeysMarkdown).

// Listener keys.
const (
	KeyBindListeners       = "bind.listeners"
	KeyAdvertisedListeners = "advertised.listeners"
	// KeyTabletListeners and KeyTabletAdvertised bind and announce the
	// tablet-server endpoint, one per listener (assembly.Tablet).
	KeyTabletListeners  = "sidecar.tablet-server.listeners"
	KeyTabletAdvertised = "sidecar.tablet-server.advertised.listeners"
)

// ZooKeeper keys.
const (
	KeyZKAddress         = "zookeeper.address"
	KeyZKRoot            = "zookeeper.path.root"
	KeyZKSessionTimeout  = "zookeeper.client.session-timeout"
	KeyZKConnTimeout     = "zookeeper.client.connection-timeout"
	KeyZKMaxBufferSize   = "zookeeper.client.max-buffer-size"
	KeyZKServerMaxBuffer = "sidecar.zookeeper.jute-maxbuffer"
	// KeyZKClientConfig is ZooKeeper's client properties file (TLS, SASL).
	KeyZKClientConfig = "zookeeper.client.config-path"
	// KeyZKJAASFile names the JAAS file whose "Client" section holds the
	// ZooKeeper SASL credentials; unset, it is taken from the JVM options
	// Fluss's launch script gives a coordinator (KeyJavaOpts*).
	KeyZKJAASFile = "sidecar.zookeeper.jaas-file"
	// KeyJavaOptsAll and KeyJavaOptsCoordinator are the JVM options of
	// Fluss's launch script; the sidecar reads only
	// -Djava.security.auth.login.config from them.
	KeyJavaOptsAll         = "env.java.opts.all"
	KeyJavaOptsCoordinator = "env.java.opts.coordinator-server"
)

// Remote storage keys: where offsets files go, and the file system keys of
// each remote.data.dir scheme as Fluss's file system plugins name them.
const (
	KeyRemoteDataDir = "remote.data.dir"
	// KeyRemoteDataDirs is Fluss 1.0's list of remote directories; its
	// first entry is used when remote.data.dir is not set (remotedir.go).
	KeyRemoteDataDirs = "remote.data.dirs"
	// KeyRemoteDataDirsStrategy and KeyRemoteDataDirsWeights say how Fluss
	// spreads new tables over remote.data.dirs. Producer offsets do not
	// depend on them: they are known, so that the typo check leaves them
	// alone, and never read.
	KeyRemoteDataDirsStrategy = "remote.data.dirs.strategy"
	KeyRemoteDataDirsWeights  = "remote.data.dirs.weights"

	KeyS3Endpoint  = "s3.endpoint"
	KeyS3Region    = "s3.region"
	KeyS3AccessKey = "s3.access-key"
	KeyS3SecretKey = "s3.secret-key"
	KeyS3PathStyle = "s3.path.style.access"

	KeyOSSEndpoint        = "fs.oss.endpoint"
	KeyOSSAccessKeyID     = "fs.oss.accessKeyId"
	KeyOSSAccessKeySecret = "fs.oss.accessKeySecret"
	KeyOSSRegion          = "fs.oss.region"

	KeyCOSNEndpointSuffix = "fs.cosn.bucket.endpoint_suffix"
	KeyCOSNRegion         = "fs.cosn.bucket.region"
	KeyCOSNSecretID       = "fs.cosn.userinfo.secretId"
	KeyCOSNSecretKey      = "fs.cosn.userinfo.secretKey"

	KeyOBSEndpoint  = "fs.obs.endpoint"
	KeyOBSRegion    = "fs.obs.region"
	KeyOBSAccessKey = "fs.obs.access.key"
	KeyOBSSecretKey = "fs.obs.secret.key"

	KeyGSRootURL  = "fs.gs.storage.root.url"
	KeyGSKeyFile  = "fs.gs.auth.service.account.json.keyfile"
	KeyGSAuthType = "fs.gs.auth.type"

	// KeyAzureAccountKey is the general Azure account key; the key of one
	// account is KeyAzureAccountKey + "." + the account's host.
	KeyAzureAccountKey = "fs.azure.account.key"
	// KeyAzureEndpoint is the sidecar's own key for an Azure blob endpoint
	// that the path's host does not give (Azurite, private endpoints).
	KeyAzureEndpoint = "sidecar.azure.endpoint"

	// HadoopKeyPrefix starts the Hadoop configuration keys Fluss's HDFS
	// file system passes to Hadoop without the prefix:
	// fluss.hadoop.dfs.nameservices is Hadoop's dfs.nameservices.
	HadoopKeyPrefix = "fluss.hadoop."
)

// Producer offsets and cleanup keys.
const (
	KeyTTL             = "coordinator.producer-offsets.ttl"
	KeyCleanupInterval = "coordinator.producer-offsets.cleanup-interval"
	KeyOrphanGrace     = "sidecar.orphan-cleanup.grace-period"
)

// Serving keys: what every listener applies (assembly.Limits), the node id
// and the start-up storage checks.
const (
	KeyMaxRequestSize       = "netty.server.max-request-size"
	KeyIdleTimeout          = "netty.connection.max-idle-time"
	KeyNodeID               = "sidecar.node-id"
	KeyRequestTimeout       = "sidecar.request-timeout"
	KeyMaxInFlight          = "sidecar.max-inflight-per-connection"
	KeyMaxConnections       = "sidecar.max-connections"
	KeyMaxRunningPerConn    = "sidecar.max-running-per-connection"
	KeyMaxQueuedBytes       = "sidecar.max-queued-request-bytes"
	KeyDrainTimeout         = "sidecar.shutdown.drain-timeout"
	KeyAcceptDelay          = "sidecar.shutdown.accept-delay"
	KeyStorageStartChecks   = "sidecar.storage.start-check-attempts"
	KeyStorageCheckInterval = "sidecar.storage.check-interval"
)

// Proxy mode keys (values in settings.go).
const (
	KeyMode                 = "sidecar.mode"
	KeyUpstreamAddress      = "sidecar.upstream.address"
	KeyUpstreamListenerName = "sidecar.upstream.listener-name"
	KeyRewriteMetadata      = "sidecar.proxy.rewrite-metadata"
	KeyMaxResends           = "sidecar.proxy.failover.max-resends"
	KeyResendTimeout        = "sidecar.proxy.failover.timeout"
)

// Read path keys (docs/cache.md, docs/semantics.md).
const (
	KeyCacheMaxBytes   = "sidecar.snapshot-cache.max-bytes"
	KeyCacheMaxEntries = "sidecar.snapshot-cache.max-entries"
	KeyReadConsistency = "sidecar.read-consistency"
)

// Operations keys: Fluss's own for the reporter, sidecar.* for the rest.
const (
	KeyLogLevel         = "sidecar.log.level"
	KeyLogFormat        = "sidecar.log.format"
	KeyMetricsReporters = "metrics.reporters"
	KeyPrometheusPort   = "metrics.reporter.prometheus.port"
	KeyMetricsHost      = "sidecar.metrics.host"
	KeyPprof            = "sidecar.debug.pprof"
	KeyAuditWrites      = "sidecar.audit.writes"
	KeyAuditReads       = "sidecar.audit.reads"
)

// Embedded mode keys. Embedded mode is chosen only by sidecar.embedded:
// true (what `serve --embedded` sets), never inferred from a missing or
// unreachable ZooKeeper, so a sidecar configured for ZooKeeper never keeps
// data in memory.
const (
	KeyEmbedded        = "sidecar.embedded"
	KeyEmbeddedACLFile = "sidecar.embedded.acl-file"
	// KeyEmbeddedControl is where embedded mode serves its control API
	// over HTTP (`serve --control`); unset serves none.
	KeyEmbeddedControl = "sidecar.embedded.control.listen"
)

// Defaults that other code names.
const (
	// DefaultListeners is used when bind.listeners is not set.
	DefaultListeners = "FLUSS://127.0.0.1:9123"
	// DefaultMetricsPort is metrics.reporter.prometheus.port's default.
	DefaultMetricsPort = "9249"
	// PackagedTabletPort is the tablet-server endpoint's port in the
	// packaging files (image, systemd example, make run): the port after
	// DefaultListeners'. Unset, sidecar.tablet-server.listeners takes a
	// free port.
	PackagedTabletPort = 9124
)

// Kind is how a key's value is written.
type Kind int

// Kinds of values.
const (
	KindText      Kind = iota
	KindListeners      // NAME://host:port,...
	KindDuration       // "30 s", "10 min", "24h"; a bare number is milliseconds
	KindMemory         // "100mb", "1048575" bytes
	KindInt
	KindBool
)

// ConfigKey is one row of the configuration table.
type ConfigKey struct {
	// Name is the key. A name with <placeholders> stands for a family of
	// keys (one per account, one per listener).
	Name string
	Kind Kind
	// Default is the value an unset key takes, written as in server.yaml;
	// "" when there is none, and then Unset says what an unset key means.
	Default string
	Unset   string
	// Secret keys are redacted in logs.
	Secret bool
	// Short keys may also be spelt without their "fs." prefix, as Fluss's
	// obs, gs and Azure file system plugins accept.
	Short bool
	// Serving keys are applied to every listener by the assembly, the same
	// way in ZooKeeper and embedded mode; embedded/limits_test.go proves
	// each one in force in embedded mode.
	Serving bool
	// Doc says what the key does, in one line of Markdown.
	Doc string
}

// configKeys is the table of every key the sidecar reads, and of the few
// Fluss keys beside them it knows and ignores (a row that says so), in the
// order of README.md's configuration reference.
var configKeys = []ConfigKey{
	{Name: KeyBindListeners, Kind: KindListeners, Default: DefaultListeners, Serving: true,
		Doc: "where to listen, `NAME://host:port,...`"},
	{Name: KeyAdvertisedListeners, Kind: KindListeners, Unset: "bind listeners", Serving: true,
		Doc: "address announced in GET_METADATA, per listener name"},
	{Name: KeyTabletListeners, Kind: KindListeners, Unset: "each listener's host, a free port", Serving: true,
		Doc: "where the tablet-server endpoint listens, one per listener of the same name: the tablet server GET_METADATA names, which answers API_VERSIONS as a TABLET_SERVER ([Two endpoints](#two-endpoints-coordinator-and-tablet-server)); not in proxy mode"},
	{Name: KeyTabletAdvertised, Kind: KindListeners, Unset: "the listener's advertised host, the bound port", Serving: true,
		Doc: "tablet-server address announced in GET_METADATA, per listener name; not in proxy mode"},

	{Name: KeyZKAddress, Unset: "(required)",
		Doc: "the Fluss cluster's ZooKeeper, `host:port,...`"},
	{Name: KeyZKRoot, Default: "/fluss",
		Doc: "Fluss's root znode"},
	{Name: KeyZKSessionTimeout, Kind: KindDuration, Default: "60 s",
		Doc: "ZooKeeper session timeout; also bounds how long a write whose outcome is unknown settles"},
	{Name: KeyZKConnTimeout, Kind: KindDuration, Default: "15 s",
		Doc: "time to connect to ZooKeeper"},
	{Name: KeyZKMaxBufferSize, Kind: KindMemory, Default: "100mb",
		Doc: "largest ZooKeeper packet the client sends or accepts"},
	{Name: KeyZKServerMaxBuffer, Kind: KindMemory, Default: "1048575",
		Doc: "the ZooKeeper servers' `jute.maxbuffer`; snapshots whose znode would not fit are refused (code 13) before anything is written"},
	{Name: KeyZKClientConfig, Unset: "none",
		Doc: "ZooKeeper's client properties file: TLS (`zookeeper.client.secure`, `zookeeper.ssl.*`) and SASL (`zookeeper.sasl.*`); every property is honoured, accepted with a start-up line when ZooKeeper's Java client ignores it too (`java.security.auth.login.config` included), or refused at start, a misspelling with \"did you mean\" ([Secured ZooKeeper](#secured-zookeeper))"},
	{Name: KeyZKJAASFile, Unset: "from the JVM options",
		Doc: "the JAAS file whose `Client` section (`DigestLoginModule`) holds the ZooKeeper SASL user; sidecar only"},
	{Name: KeyJavaOptsAll, Unset: "none",
		Doc: "JVM options of Fluss's launch script; only `-Djava.security.auth.login.config=…` is read (the ZooKeeper JAAS file); `$FLUSS_ENV_JAVA_OPTS` wins over it as in Fluss's script"},
	{Name: KeyJavaOptsCoordinator, Unset: "none",
		Doc: "as above, for the coordinator only, after `env.java.opts.all`; `$FLUSS_ENV_JAVA_OPTS_CS` wins over it"},

	{Name: KeyRemoteDataDir, Unset: "(required unless `remote.data.dirs` is set)",
		Doc: "where offsets files go (under `producers/`): `file:///dir`, `/dir`, `s3://bucket/prefix`, `oss://…`, `cosn://…`, `obs://…`, `gs://bucket/prefix`, `abfs[s]://container@account.dfs.core.windows.net/prefix`, `wasb[s]://container@account.blob.core.windows.net/prefix`, `hdfs://namenode:port/path`, `hdfs://nameservice/path`. Used even when `remote.data.dirs` is set, since Fluss's coordinator keeps producer offsets here (a WARN at start when it is not that list's first entry)"},
	{Name: KeyRemoteDataDirs, Unset: "none",
		Doc: "Fluss 1.0's remote directories (0.9.x has no such key), comma-separated on one line, an entry quoted `'…'` if it holds a comma; without `remote.data.dir` offsets files go to the first entry. Every entry must be a valid path; an empty entry, or an empty list without `remote.data.dir`, refuses to start; a YAML list is refused, as Fluss's server.yaml reader skips it. The start-up line names the directory used and its key"},
	{Name: KeyRemoteDataDirsStrategy, Unset: "(ignored)",
		Doc: "known and ignored: how Fluss picks an entry of `remote.data.dirs` for a new table or partition; producer offsets do not depend on it"},
	{Name: KeyRemoteDataDirsWeights, Unset: "(ignored)",
		Doc: "known and ignored: the entries' weights for Fluss's `WEIGHTED_ROUND_ROBIN` strategy; producer offsets do not depend on them"},
	{Name: KeyS3Endpoint,
		Doc: "S3 (or S3-compatible) endpoint; each `s3.*` key overrides its counterpart below for `oss`, `cosn`, `obs`"},
	{Name: KeyS3Region, Doc: "S3 region"},
	{Name: KeyS3AccessKey, Secret: true, Doc: "S3 access key"},
	{Name: KeyS3SecretKey, Secret: true, Doc: "S3 secret key"},
	{Name: KeyS3PathStyle, Kind: KindBool, Default: "false", Doc: "S3 path-style addressing (MinIO and most S3-compatible servers)"},
	{Name: KeyOSSEndpoint, Doc: "Aliyun OSS, through its S3-compatible endpoint"},
	{Name: KeyOSSAccessKeyID, Secret: true, Doc: "OSS access key id"},
	{Name: KeyOSSAccessKeySecret, Secret: true, Doc: "OSS access key secret"},
	{Name: KeyOSSRegion, Doc: "OSS region"},
	{Name: KeyCOSNEndpointSuffix, Unset: "`cos.<region>.myqcloud.com`", Doc: "Tencent COS, through its S3-compatible endpoint"},
	{Name: KeyCOSNRegion, Doc: "COS region"},
	{Name: KeyCOSNSecretID, Secret: true, Doc: "COS secret id"},
	{Name: KeyCOSNSecretKey, Secret: true, Doc: "COS secret key"},
	{Name: KeyOBSEndpoint, Short: true, Doc: "Huawei OBS, through its S3-compatible endpoint"},
	{Name: KeyOBSRegion, Short: true, Doc: "OBS region"},
	{Name: KeyOBSAccessKey, Short: true, Secret: true, Doc: "OBS access key"},
	{Name: KeyOBSSecretKey, Short: true, Secret: true, Doc: "OBS secret key"},
	{Name: KeyGSRootURL, Short: true, Unset: "Google's", Doc: "Google Cloud Storage endpoint (emulators)"},
	{Name: KeyGSKeyFile, Short: true, Unset: "default credentials", Doc: "Google Cloud Storage service account JSON key file"},
	{Name: KeyGSAuthType, Short: true, Unset: "default credentials", Doc: "`APPLICATION_DEFAULT`, `SERVICE_ACCOUNT_JSON_KEYFILE`, or `UNAUTHENTICATED` for emulators"},
	{Name: KeyAzureAccountKey, Short: true, Secret: true, Unset: "Azure default credentials",
		Doc: "Azure Blob Storage / ADLS Gen2 account key (`abfs`, `wasb`: http; `abfss`, `wasbs`: https)"},
	{Name: KeyAzureAccountKey + ".<account host>", Short: true, Secret: true, Unset: "the general key",
		Doc: "the account key of one account host, e.g. `acct.dfs.core.windows.net`"},
	{Name: KeyAzureEndpoint, Unset: "from the path's host", Doc: "Azure blob endpoint override (Azurite, private endpoints); sidecar only"},
	{Name: HadoopKeyPrefix + "<hadoop key>", Unset: "`$HADOOP_CONF_DIR`'s files",
		Doc: "Hadoop configuration for `hdfs://`, as Fluss passes it (over `core-site.xml` and `hdfs-site.xml` of `$HADOOP_HOME/etc/hadoop`, `$HADOOP_HOME/conf`, `$HADOOP_CONF_DIR`). Read: `dfs.nameservices`, `dfs.ha.namenodes.<ns>`, `dfs.namenode.rpc-address.<ns>[.<nn>]` (HA: fails over between the NameNodes), `dfs.client.use.datanode.hostname`, `dfs.data.transfer.protection`, `dfs.encrypt.data.transfer`, `dfs.client.socket-timeout`, `ipc.client.connect.timeout`; the user is `$HADOOP_USER_NAME`, else the process's. `hadoop.security.authentication: kerberos` is refused at start; other Hadoop keys are accepted and not used ([HDFS](#hdfs))"},

	{Name: KeyTTL, Kind: KindDuration, Default: "24h",
		Doc: "snapshot TTL when a request sets no `ttl_ms`"},
	{Name: KeyCleanupInterval, Kind: KindDuration, Default: "1h",
		Doc: "expired-snapshot cleanup period (must be > 0)"},
	{Name: KeyOrphanGrace, Kind: KindDuration, Default: "1h",
		Doc: "unreferenced offsets files younger than this are never deleted; at least twice the session timeout"},

	{Name: KeyMaxRequestSize, Kind: KindMemory, Default: "100mb", Serving: true,
		Doc: "largest frame, length field included"},
	{Name: KeyIdleTimeout, Kind: KindDuration, Default: "10 min", Serving: true,
		Doc: "idle connections are closed"},
	{Name: KeyNodeID, Kind: KindInt, Default: "0", Serving: true,
		Doc: "node id announced as coordinator and tablet server"},
	{Name: KeyRequestTimeout, Kind: KindDuration, Default: "30 s", Serving: true,
		Doc: "time limit of one producer-offsets answer; a write already sent still settles afterwards, for up to the session timeout"},
	{Name: KeyMaxInFlight, Kind: KindInt, Default: "1024", Serving: true,
		Doc: "pipelined requests served at once per connection"},
	{Name: KeyMaxConnections, Kind: KindInt, Unset: "open-files limit less a reserve", Serving: true,
		Doc: "per listener; more are closed at once, counted, and logged at most once a second. Unset: the soft open-files limit is raised to the hard one at start and this is that limit less max(64, 1/16 of it), halved in proxy mode; the start-up line says which ([docs/limits.md](docs/limits.md#connections-and-open-files))"},
	{Name: KeyMaxRunningPerConn, Kind: KindInt, Default: "2", Serving: true,
		Doc: "handlers of one connection running at once; its other requests wait ([docs/limits.md](docs/limits.md))"},
	{Name: KeyMaxQueuedBytes, Kind: KindMemory, Default: "256mb", Serving: true,
		Doc: "request bytes in memory across all connections; when spent, sockets are not read ([docs/limits.md](docs/limits.md))"},
	{Name: KeyStorageStartChecks, Kind: KindInt, Default: "5",
		Doc: "probes of remote storage at start before starting anyway ([docs/limits.md](docs/limits.md))"},
	{Name: KeyStorageCheckInterval, Kind: KindDuration, Default: "30 s",
		Doc: "how often remote storage is probed again for `/readyz` and GET_CLUSTER_HEALTH ([docs/limits.md](docs/limits.md))"},
	{Name: KeyDrainTimeout, Kind: KindDuration, Default: "30 s", Serving: true,
		Doc: "how long shutdown waits for in-flight requests and those the sockets already hold"},
	{Name: KeyAcceptDelay, Kind: KindDuration, Default: "5 s",
		Doc: "after SIGTERM, `/readyz` answers 503 at once while new connections are still accepted and served for this long (load balancers stop sending them), then the drain; a second signal skips the rest; `serve --embedded`: `0` unless set ([docs/limits.md](docs/limits.md#signals-and-exit-status))"},

	{Name: KeyMode, Default: ModeStandalone,
		Doc: "`proxy`: also forward every other API to the cluster's coordinator ([docs/proxy.md](docs/proxy.md))"},
	{Name: KeyUpstreamAddress, Unset: "follow ZooKeeper",
		Doc: "proxy mode: the coordinator's real client listener; empty: follow `/coordinators/active` in ZooKeeper"},
	{Name: KeyUpstreamListenerName, Unset: "first listener",
		Doc: "proxy mode with discovery: which coordinator listener to forward to"},
	{Name: KeyRewriteMetadata, Kind: KindBool, Default: "false",
		Doc: "proxy mode: put the sidecar's address in forwarded GET_METADATA answers"},
	{Name: KeyMaxResends, Kind: KindInt, Default: "5",
		Doc: "proxy mode: how often one forwarded request answered NOT_COORDINATOR_LEADER (65) is sent again, to the active coordinator read anew; `0`: never, the client gets the 65 ([docs/proxy.md](docs/proxy.md#coordinator-fail-over))"},
	{Name: KeyResendTimeout, Kind: KindDuration, Default: "30 s",
		Doc: "proxy mode: time from a request's first answer 65 after which it is not sent again and the client gets the 65 as it came"},

	{Name: KeyLogLevel, Default: "info",
		Doc: "`trace`, `debug`, `info`, `warn`, `error`"},
	{Name: KeyLogFormat, Default: "text",
		Doc: "`json`: hclog's JSON lines"},
	{Name: KeyAuditWrites, Kind: KindBool, Default: "true",
		Doc: "one INFO line of the `audit` logger per REGISTER and DELETE: who, from which client software, which producer and tables, the outcome; never the offsets ([docs/admin.md](docs/admin.md#audit-lines))"},
	{Name: KeyAuditReads, Kind: KindBool, Default: "false",
		Doc: "the same line for every GET; GETs then skip their quick path ([docs/admin.md](docs/admin.md#audit-lines))"},
	{Name: KeyCacheMaxBytes, Kind: KindMemory, Default: "64mb",
		Doc: "GETs served from memory, kept current by a ZooKeeper watch ([docs/cache.md](docs/cache.md)); `0` turns the cache off"},
	{Name: KeyCacheMaxEntries, Kind: KindInt, Default: "100000",
		Doc: "snapshots the cache holds at most; `0` turns the cache off"},
	{Name: KeyReadConsistency, Default: ReadLinearizable,
		Doc: "`linearizable`: a GET waits for a ZooKeeper `sync` sent after it arrived, one sync shared by every GET that arrived meanwhile, so every sidecar and coordinator agrees on one order; `sequential`: GETs answered from the cache at once, current for this sidecar's writes but possibly milliseconds behind another's ([docs/semantics.md](docs/semantics.md#consistency-across-sidecars-and-coordinators)). REGISTER and DELETE decide on synced state in both modes"},
	{Name: KeyMetricsReporters, Unset: "none",
		Doc: "`prometheus` serves `/metrics`, `/healthz`, `/readyz` ([Monitoring](#monitoring))"},
	{Name: KeyPrometheusPort, Default: DefaultMetricsPort,
		Doc: "the metrics port; a range such as `9250-9260` takes its first free port"},
	{Name: KeyMetricsHost, Unset: "every interface",
		Doc: "where the metrics port binds"},
	{Name: KeyPprof, Kind: KindBool, Default: "false",
		Doc: "`true` adds `/debug/pprof/` to the metrics port"},
	{Name: KeyEmbedded, Kind: KindBool, Default: "false",
		Doc: "in-memory test server (`serve --embedded`, [below](#testing-your-fluss-client-against-fluss-sidecar))"},
	{Name: KeyEmbeddedACLFile, Unset: "none",
		Doc: "embedded mode's ACLs and table names, a JSON file ([docs/embedded.md](docs/embedded.md))"},
	{Name: KeyEmbeddedControl, Unset: "off",
		Doc: "embedded mode's control API over HTTP, `HOST:PORT` on loopback or `PORT` (`serve --control`, [docs/embedded.md](docs/embedded.md))"},

	{Name: authz.KeyInternalListener, Default: authz.DefaultInternalListener,
		Doc: "the listener that skips authorization, for the cluster's own servers ([docs/security.md](docs/security.md))"},
	{Name: authz.KeyProtocolMap, Unset: "every listener PLAINTEXT",
		Doc: "`LISTENER:protocol,...`, protocol `SASL` or `PLAINTEXT`"},
	{Name: authz.KeyMechanisms, Default: authz.MechanismPlain,
		Doc: "SASL mechanisms offered; the sidecar has `PLAIN`"},
	{Name: authz.KeyPlainJAAS, Secret: true,
		Doc: "SASL/PLAIN users of every SASL listener, a `PlainLoginModule` entry with `user_NAME=\"password\"` options"},
	{Name: authz.JAASKey("<listener>", "<mechanism>"), Secret: true, Unset: "the general entry",
		Doc: "SASL/PLAIN users of one listener"},
	{Name: authz.KeyPlainCredentials, Secret: true,
		Doc: "more SASL/PLAIN users, `user:password,...`"},
	{Name: authz.KeyAuthorizerEnabled, Kind: KindBool, Default: "false",
		Doc: "check every producer offsets request against the cluster's ACLs"},
	{Name: authz.KeyAuthorizerType, Default: "default",
		Doc: "only Fluss's `default` authorizer is implemented"},
	{Name: authz.KeySuperUsers, Unset: "none",
		Doc: "principals allowed everything, `User:admin;User:bob`"},
	{Name: authz.KeyIgnoreCase, Kind: KindBool, Default: "false",
		Doc: "compare ACL principals without case"},
	{Name: authz.KeyAuthTimeout, Kind: KindDuration, Default: "30 s", Serving: true,
		Doc: "connections to a SASL listener that have not logged in by then are closed; `0` never closes them"},
	{Name: authz.KeyRequireTableForEmpty, Kind: KindBool, Default: "false",
		Doc: "`true`: a snapshot with no tables needs WRITE on the cluster (W9 in [docs/security.md](docs/security.md))"},
}

// ConfigKeys returns the configuration table: every key the sidecar reads,
// with its default, whether it is secret and what it does.
func ConfigKeys() []ConfigKey { return slices.Clone(configKeys) }

// LookupConfigKey returns the row of key, under any of its spellings.
func LookupConfigKey(key string) (ConfigKey, bool) {
	if k := lookupKey(key); k != nil {
		return *k, true
	}
	return ConfigKey{}, false
}

// keyIndex finds table rows by name.
var keyIndex = sync.OnceValue(func() map[string]*ConfigKey {
	m := make(map[string]*ConfigKey, len(configKeys))
	for i := range configKeys {
		m[configKeys[i].Name] = &configKeys[i]
	}
	return m
})

// keyPattern matches the names of the keys a <placeholder> row stands for.
type keyPattern struct {
	re  *regexp.Regexp
	key *ConfigKey
}

var patterns = sync.OnceValue(func() []keyPattern {
	placeholder := regexp.MustCompile(`<[^>]+>`)
	var out []keyPattern
	for i := range configKeys {
		for _, name := range configKeys[i].spellings() {
			if !strings.Contains(name, "<") {
				continue
			}
			parts := placeholder.Split(name, -1)
			for j, p := range parts {
				parts[j] = regexp.QuoteMeta(p)
			}
			out = append(out, keyPattern{regexp.MustCompile("^" + strings.Join(parts, ".+") + "$"), &configKeys[i]})
		}
	}
	return out
})

// spellings are the names under which the key is read: its name and, for
// a Short key, the name without "fs.".
func (k ConfigKey) spellings() []string {
	if short, ok := strings.CutPrefix(k.Name, "fs."); ok && k.Short {
		return []string{k.Name, short}
	}
	return []string{k.Name}
}

// row returns the table row of key, which must be in the table.
func row(key string) *ConfigKey {
	k, ok := keyIndex()[key]
	if !ok {
		panic("app: " + key + " is not in the configuration table")
	}
	return k
}

// The default of a key, parsed as its kind; the zero value when it has
// none. The configuration table test parses every default, so these never
// fail at run time.

func defaultText(key string) string { return row(key).Default }

func defaultDuration(key string) time.Duration {
	return mustParse(key, KindDuration, config.ParseDuration)
}

func defaultMemory(key string) int64 { return mustParse(key, KindMemory, config.ParseMemorySize) }

func defaultInt(key string) int64 {
	return mustParse(key, KindInt, func(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) })
}

func defaultBool(key string) bool { return mustParse(key, KindBool, strconv.ParseBool) }

func mustParse[T any](key string, kind Kind, parse func(string) (T, error)) T {
	var zero T
	k := row(key)
	if k.Kind != kind {
		panic(fmt.Sprintf("app: %s is read as kind %d, but the configuration table says %d", key, kind, k.Kind))
	}
	if k.Default == "" {
		return zero
	}
	v, err := parse(k.Default)
	if err != nil {
		panic(fmt.Sprintf("app: the default of %s: %v", key, err))
	}
	return v
}

// KnownKeys returns every key the sidecar reads, sorted, with the short
// spellings ("obs.x" for "fs.obs.x") Fluss's plugins accept. A key family
// such as fs.azure.account.key.<account host> matches IsKnownKey but is not
// listed.
func KnownKeys() []string {
	var keys []string
	for _, k := range configKeys {
		for _, name := range k.spellings() {
			if !strings.Contains(name, "<") {
				keys = append(keys, name)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// IsKnownKey reports whether the sidecar reads key.
func IsKnownKey(key string) bool { return lookupKey(key) != nil }

// lookupKey returns the row of key under any of its spellings, or nil.
func lookupKey(key string) *ConfigKey {
	if k, ok := keyIndex()[key]; ok {
		return k
	}
	for i := range configKeys {
		k := &configKeys[i]
		if k.Short && "fs."+key == k.Name {
			return k
		}
	}
	for _, p := range patterns() {
		if p.re.MatchString(key) {
			return p.key
		}
	}
	return nil
}
