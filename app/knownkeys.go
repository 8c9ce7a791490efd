package app

import (
	"slices"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
)

// serverKeys are the keys FromConfig reads besides the file system keys.
var serverKeys = []string{
	KeyBindListeners, KeyAdvertisedListeners,
	KeyZKAddress, KeyZKRoot, KeyZKSessionTimeout, KeyZKConnTimeout,
	KeyZKMaxBufferSize, KeyZKServerMaxBuffer,
	KeyRemoteDataDir, KeyTTL, KeyCleanupInterval, KeyMaxRequestSize, KeyIdleTimeout,
	"sidecar.orphan-cleanup.grace-period", "sidecar.node-id", "sidecar.request-timeout",
	"sidecar.max-inflight-per-connection", "sidecar.max-connections", "sidecar.log.level",
	"sidecar.shutdown.drain-timeout",
	KeyMaxQueuedBytes, KeyMaxRunningPerConn, KeyStorageStartChecks, KeyStorageCheckInterval,
	KeyCacheMaxBytes, KeyCacheMaxEntries, KeyReadConsistency,
	KeyMode, KeyUpstreamAddress, KeyUpstreamListenerName, KeyRewriteMetadata,
	KeyEmbedded, KeyEmbeddedACLFile,
	KeyMetricsReporters, KeyPrometheusPort, KeyMetricsHost, KeyPprof, KeyLogFormat,
	KeyAzureEndpoint,
	authz.KeyInternalListener, authz.KeyProtocolMap, authz.KeyMechanisms, authz.KeyPlainJAAS,
	authz.KeyPlainCredentials, authz.KeyAuthorizerEnabled, authz.KeyAuthorizerType,
	authz.KeySuperUsers, authz.KeyIgnoreCase, authz.KeyAuthTimeout, authz.KeyRequireTableForEmpty,
}

// KnownKeys returns every configuration key the sidecar reads, sorted: the
// server's keys and the file system keys of every remote.data.dir scheme,
// with the short spellings ("obs.x" for "fs.obs.x") Fluss's plugins accept.
// A per-account Azure key, fs.azure.account.key.<account host>, matches
// IsKnownKey but is not listed.
func KnownKeys() []string {
	keys := slices.Clone(serverKeys)
	for _, ks := range StorageKeys {
		for _, k := range ks {
			if strings.Contains(k, "<") {
				continue
			}
			keys = append(keys, k)
			if short, ok := strings.CutPrefix(k, "fs."); ok && !strings.HasPrefix(k, "fs.cosn.") && !strings.HasPrefix(k, "fs.oss.") {
				keys = append(keys, short)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// IsKnownKey reports whether the sidecar reads key.
func IsKnownKey(key string) bool {
	if _, found := slices.BinarySearch(KnownKeys(), key); found {
		return true
	}
	for _, p := range []string{"fs.azure.account.key.", "azure.account.key."} {
		if rest, ok := strings.CutPrefix(key, p); ok && rest != "" {
			return true
		}
	}
	return strings.HasPrefix(key, "security.sasl.listener.name.") && strings.HasSuffix(key, ".jaas.config")
}
