package app

import (
	"fmt"
	"maps"
	"path/filepath"
	"strings"

	"github.com/colinmarc/hdfs/v2/hadoopconf"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
)

// RemoteOptions are the remote store options the settings describe, for
// the server and for the admin commands alike.
func (s Settings) RemoteOptions(log hclog.Logger) remotestore.Options {
	return remotestore.Options{
		Remote: remote.Options{
			S3Endpoint: s.S3Endpoint, S3Region: s.S3Region, S3AccessKey: s.S3AccessKey,
			S3SecretKey: s.S3SecretKey, S3PathStyle: s.S3PathStyle,
			GCS: s.GCS, Azure: s.Azure, HDFS: s.HDFS,
		},
		Logger: log,
	}
}

// fsKey returns the value of key, a file system key "fs.<name>", or, when
// it is unset, of its short spelling "<name>" (see ConfigKey.Short).
func fsKey(c *config.Config, key string) string {
	if v := c.String(key, ""); v != "" {
		return v
	}
	return c.String(strings.TrimPrefix(key, "fs."), "")
}

// readStorageKeys fills the object store fields of s from the keys of the
// file system remote.data.dir names. s3.* keys, read afterwards by
// FromConfig, override the S3 fields for every S3-compatible scheme.
func readStorageKeys(c *config.Config, s *Settings, getenv func(string) string) error {
	scheme, rest, _ := strings.Cut(s.RemoteDataDir, "://")
	switch strings.ToLower(scheme) {
	case "oss":
		s.S3Endpoint = c.String(KeyOSSEndpoint, "")
		s.S3AccessKey = c.String(KeyOSSAccessKeyID, "")
		s.S3SecretKey = c.String(KeyOSSAccessKeySecret, "")
		s.S3Region = c.String(KeyOSSRegion, "")
	case "cosn":
		// COS's S3-compatible endpoint is cos.<region>.myqcloud.com, the
		// value of fs.cosn.bucket.endpoint_suffix.
		s.S3Region = c.String(KeyCOSNRegion, "")
		s.S3Endpoint = c.String(KeyCOSNEndpointSuffix, "")
		if s.S3Endpoint == "" && s.S3Region != "" {
			s.S3Endpoint = "cos." + s.S3Region + ".myqcloud.com"
		}
		s.S3AccessKey = c.String(KeyCOSNSecretID, "")
		s.S3SecretKey = c.String(KeyCOSNSecretKey, "")
	case "obs":
		s.S3Endpoint = fsKey(c, KeyOBSEndpoint)
		s.S3Region = fsKey(c, KeyOBSRegion)
		s.S3AccessKey = fsKey(c, KeyOBSAccessKey)
		s.S3SecretKey = fsKey(c, KeyOBSSecretKey)
	case "gs":
		s.GCS.Endpoint = fsKey(c, KeyGSRootURL)
		s.GCS.CredentialsFile = fsKey(c, KeyGSKeyFile)
		switch t := strings.ToUpper(fsKey(c, KeyGSAuthType)); t {
		case "", "APPLICATION_DEFAULT", "SERVICE_ACCOUNT_JSON_KEYFILE":
		case "UNAUTHENTICATED":
			s.GCS.Unauthenticated = true
		default:
			return fmt.Errorf("%s: %q is not supported (want APPLICATION_DEFAULT, SERVICE_ACCOUNT_JSON_KEYFILE or UNAUTHENTICATED)", KeyGSAuthType, t)
		}
	case "abfs", "abfss", "wasb", "wasbs":
		// The account key for this account's host, else the general one.
		authority, _, _ := strings.Cut(rest, "/")
		_, host, _ := strings.Cut(authority, "@")
		s.Azure.AccountKey = fsKey(c, KeyAzureAccountKey+"."+host)
		if s.Azure.AccountKey == "" {
			s.Azure.AccountKey = fsKey(c, KeyAzureAccountKey)
		}
		s.Azure.Endpoint = c.String(KeyAzureEndpoint, "")
	case "hdfs":
		conf, err := hadoopConf(c, getenv)
		if err != nil {
			return err
		}
		s.HDFS.Conf = conf
	}
	return nil
}

// hadoopConf is the Hadoop configuration of Fluss's HDFS file system: the
// core-site.xml and hdfs-site.xml of $HADOOP_HOME/etc/hadoop,
// $HADOOP_HOME/conf and $HADOOP_CONF_DIR, each over the one before, and
// the fluss.hadoop.* keys, without the prefix, over them all.
func hadoopConf(c *config.Config, getenv func(string) string) (map[string]string, error) {
	conf := map[string]string{}
	var dirs []string
	if home := getenv("HADOOP_HOME"); home != "" {
		dirs = append(dirs, filepath.Join(home, "etc", "hadoop"), filepath.Join(home, "conf"))
	}
	if d := getenv("HADOOP_CONF_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		files, err := hadoopconf.Load(d)
		if err != nil {
			return nil, fmt.Errorf("hadoop configuration in %s: %w", d, err)
		}
		maps.Copy(conf, files)
	}
	for _, k := range c.Keys() {
		if name, ok := strings.CutPrefix(k, HadoopKeyPrefix); ok && name != "" {
			conf[name] = c.String(k, "")
		}
	}
	if strings.EqualFold(strings.TrimSpace(conf["hadoop.security.authentication"]), "kerberos") {
		return nil, fmt.Errorf("%s%s: kerberos is not supported: the sidecar's HDFS client uses simple authentication only (the user is $HADOOP_USER_NAME, else the process's)", HadoopKeyPrefix, "hadoop.security.authentication")
	}
	return conf, nil
}
