package app

import (
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remote"
)

// KeyAzureEndpoint is the sidecar's own key for an Azure blob endpoint that
// the path's host does not give (Azurite, private endpoints).
const KeyAzureEndpoint = "sidecar.azure.endpoint"

// StorageKeys are the file system keys the sidecar reads, per scheme of
// remote.data.dir, as Fluss's file system plugins name them. A key under
// "fs.X." may also be spelt "X." (as Fluss's obs, gs and Azure plugins
// accept), except for cosn, whose plugin reads only "fs.cosn.".
var StorageKeys = map[string][]string{
	"s3":    {"s3.endpoint", "s3.region", "s3.access-key", "s3.secret-key", "s3.path.style.access"},
	"oss":   {"fs.oss.endpoint", "fs.oss.accessKeyId", "fs.oss.accessKeySecret", "fs.oss.region"},
	"cosn":  {"fs.cosn.bucket.endpoint_suffix", "fs.cosn.bucket.region", "fs.cosn.userinfo.secretId", "fs.cosn.userinfo.secretKey"},
	"obs":   {"fs.obs.endpoint", "fs.obs.region", "fs.obs.access.key", "fs.obs.secret.key"},
	"gs":    {"fs.gs.storage.root.url", "fs.gs.auth.service.account.json.keyfile", "fs.gs.auth.type"},
	"azure": {"fs.azure.account.key", "fs.azure.account.key.<account host>", KeyAzureEndpoint},
}

// RemoteOptions are the remote store options the settings describe, for
// the server and for the admin commands alike.
func (s Settings) RemoteOptions(log hclog.Logger) remote.Options {
	return remote.Options{
		S3Endpoint: s.S3Endpoint, S3Region: s.S3Region, S3AccessKey: s.S3AccessKey,
		S3SecretKey: s.S3SecretKey, S3PathStyle: s.S3PathStyle, Logger: log,
		GCS: s.GCS, Azure: s.Azure,
	}
}

// fsKey returns "fs.<name>" or, when unset, its short spelling "<name>".
func fsKey(c *config.Config, name string) string {
	if v := c.String("fs."+name, ""); v != "" {
		return v
	}
	return c.String(name, "")
}

// readStorageKeys fills the object store fields of s from the keys of the
// file system remote.data.dir names. s3.* keys, read afterwards by
// FromConfig, override the S3 fields for every S3-compatible scheme.
func readStorageKeys(c *config.Config, s *Settings) error {
	scheme, rest, _ := strings.Cut(s.RemoteDataDir, "://")
	switch strings.ToLower(scheme) {
	case "oss":
		s.S3Endpoint = c.String("fs.oss.endpoint", "")
		s.S3AccessKey = c.String("fs.oss.accessKeyId", "")
		s.S3SecretKey = c.String("fs.oss.accessKeySecret", "")
		s.S3Region = c.String("fs.oss.region", "")
	case "cosn":
		// COS's S3-compatible endpoint is cos.<region>.myqcloud.com, the
		// value of fs.cosn.bucket.endpoint_suffix.
		s.S3Region = c.String("fs.cosn.bucket.region", "")
		s.S3Endpoint = c.String("fs.cosn.bucket.endpoint_suffix", "")
		if s.S3Endpoint == "" && s.S3Region != "" {
			s.S3Endpoint = "cos." + s.S3Region + ".myqcloud.com"
		}
		s.S3AccessKey = c.String("fs.cosn.userinfo.secretId", "")
		s.S3SecretKey = c.String("fs.cosn.userinfo.secretKey", "")
	case "obs":
		s.S3Endpoint = fsKey(c, "obs.endpoint")
		s.S3Region = fsKey(c, "obs.region")
		s.S3AccessKey = fsKey(c, "obs.access.key")
		s.S3SecretKey = fsKey(c, "obs.secret.key")
	case "gs":
		s.GCS.Endpoint = fsKey(c, "gs.storage.root.url")
		s.GCS.CredentialsFile = fsKey(c, "gs.auth.service.account.json.keyfile")
		switch t := strings.ToUpper(fsKey(c, "gs.auth.type")); t {
		case "", "APPLICATION_DEFAULT", "SERVICE_ACCOUNT_JSON_KEYFILE":
		case "UNAUTHENTICATED":
			s.GCS.Unauthenticated = true
		default:
			return fmt.Errorf("fs.gs.auth.type: %q is not supported (want APPLICATION_DEFAULT, SERVICE_ACCOUNT_JSON_KEYFILE or UNAUTHENTICATED)", t)
		}
	case "abfs", "abfss", "wasb", "wasbs":
		// The account key for this account's host, else the general one.
		authority, _, _ := strings.Cut(rest, "/")
		_, host, _ := strings.Cut(authority, "@")
		s.Azure.AccountKey = fsKey(c, "azure.account.key."+host)
		if s.Azure.AccountKey == "" {
			s.Azure.AccountKey = fsKey(c, "azure.account.key")
		}
		s.Azure.Endpoint = c.String(KeyAzureEndpoint, "")
	}
	return nil
}
