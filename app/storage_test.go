package app

import (
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remote"
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
			opts := s.RemoteOptions(nil)
			if opts.GCS != c.gcs || opts.Azure != c.azure {
				t.Errorf("gcs %+v azure %+v, want %+v %+v", opts.GCS, opts.Azure, c.gcs, c.azure)
			}
		})
	}
}
