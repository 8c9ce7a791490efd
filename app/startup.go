package app

import (
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// Redacted replaces a secret's value in logs, as Fluss prints hidden
// values.
const Redacted = "******"

// sensitiveKeyParts mark keys whose values are secrets, for the keys
// outside the configuration table too (client.security.sasl.password, a
// server.yaml's other keys): Fluss's list of sensitive key fragments plus
// the spellings of the S3, OSS and OBS access keys. (The Azure account key
// needs no fragment: it is a Secret row of the table in both spellings,
// per account too.) TestConfigTable checks that every table key they match
// is a Secret row.
var sensitiveKeyParts = []string{
	"password", "secret", "apikey", "api-key", "auth-params", "service-key",
	"token", "basic-auth", "jaas.config", "access-key", "accesskey", "access.key",
}

// IsSensitive reports whether key's value must not be logged: a Secret
// key of the configuration table, or any key with a sensitive fragment.
func IsSensitive(key string) bool {
	if k := lookupKey(key); k != nil && k.Secret {
		return true
	}
	return hasSensitivePart(key)
}

func hasSensitivePart(key string) bool {
	k := strings.ToLower(key)
	for _, p := range sensitiveKeyParts {
		if strings.Contains(k, p) {
			return true
		}
	}
	return false
}

// EffectiveConfig is the configuration the sidecar runs with: every key
// given, with the effective value (defaults applied) of every key the
// sidecar reads, secrets redacted.
func EffectiveConfig(c *config.Config, s Settings) map[string]string {
	out := map[string]string{}
	for _, k := range c.Keys() {
		v, _ := c.Lookup(k)
		out[k] = v
	}
	dur := func(d interface{ String() string }) string { return d.String() }
	set := func(k, v string) { out[k] = v }
	set(KeyBindListeners, config.FormatListeners(s.Listeners))
	if len(s.AdvertisedListeners) > 0 {
		set(KeyAdvertisedListeners, config.FormatListeners(s.AdvertisedListeners))
	}
	if s.Embedded {
		set(KeyEmbedded, "true")
	} else {
		set(KeyZKAddress, s.ZooKeeperAddress)
		set(KeyZKRoot, s.ZooKeeperRoot)
		set(KeyZKSessionTimeout, dur(s.ZooKeeperSessionTimeout))
		set(KeyZKConnTimeout, dur(s.ZooKeeperConnectionTimeout))
		if s.RemoteDataDirKey == KeyRemoteDataDir {
			set(KeyRemoteDataDir, s.RemoteDataDir)
		}
	}
	set(KeyTTL, dur(s.ProducerOffsetsTTL))
	set(KeyCleanupInterval, dur(s.CleanupInterval))
	set(KeyOrphanGrace, dur(s.OrphanGracePeriod))
	set(KeyMaxRequestSize, strconv.FormatInt(s.MaxRequestSize, 10))
	set(KeyIdleTimeout, dur(s.IdleTimeout))
	set(KeyNodeID, strconv.Itoa(int(s.NodeID)))
	set(KeyRequestTimeout, dur(s.RequestTimeout))
	set(KeyMaxInFlight, strconv.Itoa(s.MaxInFlightPerConn))
	if s.MaxConnections == 0 {
		set(KeyMaxConnections, "derived at start from the open-files limit")
	} else {
		set(KeyMaxConnections, strconv.Itoa(s.MaxConnections))
	}
	set(KeyLogLevel, s.LogLevel)
	set(KeyLogFormat, s.Ops.LogFormat)
	set(KeyDrainTimeout, dur(s.ShutdownDrainTimeout))
	set(KeyReadConsistency, s.ReadConsistency)
	set(KeyMode, s.Mode)
	if s.Mode == ModeProxy {
		set(KeyUpstreamAddress, s.UpstreamAddress)
		set(KeyUpstreamListenerName, s.UpstreamListenerName)
		set(KeyRewriteMetadata, strconv.FormatBool(s.RewriteMetadata))
		set(KeyMaxResends, strconv.Itoa(s.MaxResends))
		set(KeyResendTimeout, dur(s.ResendTimeout))
	}
	if s.Ops.Prometheus {
		if _, ok := out[KeyPrometheusPort]; !ok {
			set(KeyPrometheusPort, DefaultMetricsPort)
		}
		set(KeyPprof, strconv.FormatBool(s.Ops.Pprof))
	}
	for k := range out {
		out[k] = redact(k, out[k])
	}
	return out
}

// redact returns v, or Redacted when key's value must not be logged.
func redact(key, v string) string {
	if IsSensitive(key) && v != "" {
		return Redacted
	}
	return v
}

// LogStartup logs one line with the build, the effective configuration
// and, outside embedded mode, the remote directory offsets files go to and
// the key it came from; after PrepareStart, also the open-files limit and
// where sidecar.max-connections came from.
func LogStartup(log hclog.Logger, c *config.Config, s Settings) {
	b := buildinfo.Get()
	kv := []any{"version", b.Version, "commit", b.Commit, "build_time", b.BuildTime,
		"go_version", b.GoVersion, "config", EffectiveConfig(c, s)}
	if !s.Embedded {
		kv = append(kv, "remote_dir", redact(s.RemoteDataDirKey, s.RemoteDataDir), "remote_dir_from", s.remoteDirSource())
	}
	if s.FileLimit != nil {
		kv = append(kv, "open_files", s.FileLimit.String(), "max_connections_from", s.maxConnectionsNote())
	}
	log.Info("starting fluss-sidecar", kv...)
	if w := s.remoteDirMismatch(); w != "" {
		log.Warn(w)
	}
	if r := c.String(KeyMetricsReporters, ""); r != "" && !s.Ops.Prometheus {
		log.Warn(KeyMetricsReporters+" lists no reporter the sidecar has (it has prometheus); no metrics are served", "reporters", r)
	}
}
