package app

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
)

func TestStorageKeys(t *testing.T) {
	type s3 struct{ Endpoint, Region, Access, Secret string }
	cases := []struct {
		name  string
		keys  map[string]string
		s3    s3
		gcs   remote.GCSOptions
		azure remote.AzureOptions
		err   string
	}{
		{name: "s3", keys: map[string]string{"remote.data.dir": "s3://b/f", "s3.endpoint": "http://e", "s3.region": "r", "s3.access-key": "a", "s3.secret-key": "s"},
			s3: s3{"http://e", "r", "a", "s"}},
		{name: "oss", keys: map[string]string{"remote.data.dir": "oss://b/f", "fs.oss.endpoint": "oss-cn.example", "fs.oss.accessKeyId": "a", "fs.oss.accessKeySecret": "s"},
			s3: s3{"oss-cn.example", "", "a", "s"}},
		{name: "cosn endpoint suffix", keys: map[string]string{"remote.data.dir": "cosn://b-125/f", "fs.cosn.bucket.endpoint_suffix": "cos.ap-guangzhou.myqcloud.com", "fs.cosn.bucket.region": "ap-guangzhou", "fs.cosn.userinfo.secretId": "id", "fs.cosn.userinfo.secretKey": "k"},
			s3: s3{"cos.ap-guangzhou.myqcloud.com", "ap-guangzhou", "id", "k"}},
		{name: "cosn region only", keys: map[string]string{"remote.data.dir": "cosn://b-125/f", "fs.cosn.bucket.region": "ap-beijing"},
			s3: s3{"cos.ap-beijing.myqcloud.com", "ap-beijing", "", ""}},
		{name: "cosn ignores short keys", keys: map[string]string{"remote.data.dir": "cosn://b/f", "cosn.userinfo.secretId": "x"},
			s3: s3{}},
		{name: "obs long keys", keys: map[string]string{"remote.data.dir": "obs://b/f", "fs.obs.endpoint": "obs.cn-north-4.myhuaweicloud.com", "fs.obs.access.key": "a", "fs.obs.secret.key": "s", "fs.obs.region": "cn-north-4"},
			s3: s3{"obs.cn-north-4.myhuaweicloud.com", "cn-north-4", "a", "s"}},
		{name: "obs short keys, long wins", keys: map[string]string{"remote.data.dir": "obs://b/f", "obs.endpoint": "short", "fs.obs.endpoint": "long", "obs.access.key": "a"},
			s3: s3{"long", "", "a", ""}},
		{name: "s3 keys override for cosn", keys: map[string]string{"remote.data.dir": "cosn://b/f", "fs.cosn.bucket.endpoint_suffix": "cos.x", "s3.endpoint": "http://127.0.0.1:9000"},
			s3: s3{"http://127.0.0.1:9000", "", "", ""}},
		{name: "gs", keys: map[string]string{"remote.data.dir": "gs://b/f", "fs.gs.storage.root.url": "http://127.0.0.1:4443/", "gs.auth.service.account.json.keyfile": "/k.json"},
			gcs: remote.GCSOptions{Endpoint: "http://127.0.0.1:4443/", CredentialsFile: "/k.json"}},
		{name: "gs unauthenticated", keys: map[string]string{"remote.data.dir": "gs://b/f", "gs.auth.type": "unauthenticated"},
			gcs: remote.GCSOptions{Unauthenticated: true}},
		{name: "gs bad auth type", keys: map[string]string{"remote.data.dir": "gs://b/f", "fs.gs.auth.type": "USER_CREDENTIALS"}, err: "fs.gs.auth.type"},
		{name: "abfss general key", keys: map[string]string{"remote.data.dir": "abfss://c@acct.dfs.core.windows.net/f", "fs.azure.account.key": "k1"},
			azure: remote.AzureOptions{AccountKey: "k1"}},
		{name: "abfss per-account key wins", keys: map[string]string{"remote.data.dir": "abfss://c@acct.dfs.core.windows.net/f", "fs.azure.account.key": "k1", "fs.azure.account.key.acct.dfs.core.windows.net": "k2"},
			azure: remote.AzureOptions{AccountKey: "k2"}},
		{name: "wasb short key and endpoint", keys: map[string]string{"remote.data.dir": "wasb://c@acct.blob.core.windows.net/f", "azure.account.key": "k3", "sidecar.azure.endpoint": "http://127.0.0.1:10000/acct"},
			azure: remote.AzureOptions{AccountKey: "k3", Endpoint: "http://127.0.0.1:10000/acct"}},
		{name: "other scheme reads nothing", keys: map[string]string{"remote.data.dir": "file:///x", "fs.azure.account.key": "k", "fs.obs.endpoint": "e"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.New()
			cfg.Set("zookeeper.address", "127.0.0.1:1")
			for k, v := range c.keys {
				cfg.Set(k, v)
			}
			s, err := FromConfig(cfg)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := (s3{s.S3Endpoint, s.S3Region, s.S3AccessKey, s.S3SecretKey}); got != c.s3 {
				t.Errorf("s3 %+v, want %+v", got, c.s3)
			}
			opts := s.RemoteOptions(nil).Remote
			if opts.GCS != c.gcs || opts.Azure != c.azure {
				t.Errorf("gcs %+v azure %+v, want %+v %+v", opts.GCS, opts.Azure, c.gcs, c.azure)
			}
		})
	}
}

// TestHadoopConf reads the Hadoop configuration of hdfs:// as Fluss's HDFS
// file system does: fluss.hadoop.* over the files of HADOOP_CONF_DIR over
// those of HADOOP_HOME; Kerberos is refused with a clear message.
func TestHadoopConf(t *testing.T) {
	confDir := t.TempDir()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "etc", "hadoop"), 0o755); err != nil {
		t.Fatal(err)
	}
	site := func(dir string, props map[string]string) {
		var b strings.Builder
		b.WriteString("<configuration>")
		for k, v := range props {
			b.WriteString("<property><name>" + k + "</name><value>" + v + "</value></property>")
		}
		b.WriteString("</configuration>")
		if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	site(filepath.Join(home, "etc", "hadoop"), map[string]string{"dfs.nameservices": "home-ns", "dfs.client.socket-timeout": "1000"})
	site(confDir, map[string]string{"dfs.nameservices": "conf-ns", "dfs.ha.namenodes.conf-ns": "nn1"})
	env := map[string]string{"HADOOP_HOME": home, "HADOOP_CONF_DIR": confDir}
	cases := []struct {
		name string
		keys map[string]string
		env  map[string]string
		want map[string]string
		err  string
	}{
		{name: "files only", env: env, want: map[string]string{"dfs.nameservices": "conf-ns", "dfs.ha.namenodes.conf-ns": "nn1", "dfs.client.socket-timeout": "1000"}},
		{name: "fluss.hadoop wins", env: env,
			keys: map[string]string{"fluss.hadoop.dfs.nameservices": "mycluster", "fluss.hadoop.dfs.namenode.rpc-address.mycluster.nn1": "nn:9000"},
			want: map[string]string{"dfs.nameservices": "mycluster", "dfs.ha.namenodes.conf-ns": "nn1", "dfs.client.socket-timeout": "1000", "dfs.namenode.rpc-address.mycluster.nn1": "nn:9000"}},
		{name: "no environment", keys: map[string]string{"fluss.hadoop.dfs.client.use.datanode.hostname": "true"},
			want: map[string]string{"dfs.client.use.datanode.hostname": "true"}},
		{name: "kerberos refused", keys: map[string]string{"fluss.hadoop.hadoop.security.authentication": "kerberos"},
			err: "fluss.hadoop.hadoop.security.authentication: kerberos is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.New()
			cfg.Set("zookeeper.address", "127.0.0.1:1")
			cfg.Set("remote.data.dir", "hdfs://mycluster/fluss")
			for k, v := range c.keys {
				cfg.Set(k, v)
			}
			var s Settings
			s.RemoteDataDir = "hdfs://mycluster/fluss"
			err := readStorageKeys(cfg, &s, func(k string) string { return c.env[k] })
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(s.HDFS.Conf, c.want) {
				t.Errorf("conf %v, want %v", s.HDFS.Conf, c.want)
			}
			if got := s.RemoteOptions(nil).Remote.HDFS.Conf; !maps.Equal(got, c.want) {
				t.Errorf("RemoteOptions conf %v", got)
			}
			if w := CheckKeys(cfg); len(w) != 0 {
				t.Errorf("fluss.hadoop.* keys warned about: %v", w)
			}
		})
	}
}
