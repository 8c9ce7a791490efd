package remotestore

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/hdfstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/storagetest"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
)

// The emulators come from the test kit shared with app's tests.

func startFakeGCS(t *testing.T, buckets ...string) string {
	t.Helper()
	url, _ := storagetest.StartGCS(t, buckets...)
	return url
}

func startAzurite(t *testing.T, containers ...string) string {
	t.Helper()
	return storagetest.StartAzurite(t, containers...)
}

const (
	azuriteAccount = storagetest.AzuriteAccount
	azuriteKey     = storagetest.AzuriteKey
)

func TestMain(m *testing.M) {
	code := m.Run()
	storagetest.StopAzurite()
	hdfstest.StopShared()
	os.Exit(code)
}

// cloudBackends are the emulated object stores of the conformance suite:
// gs through fake-gcs-server, the four Azure schemes through Azurite (the
// endpoint override makes each plain http), cosn and obs through the S3
// fake.
func cloudBackends(t *testing.T, s3Endpoint string) []backend {
	gcsURL := startFakeGCS(t, "gbucket", "other")
	azEndpoint := startAzurite(t, "fluss", "other")
	prefixFor := func(t *testing.T) string { return strings.ReplaceAll(t.Name(), "/", "_") }
	objectBackend := func(name, dirFmt string, opts func(Options) Options, outside []string) backend {
		return backend{
			name: name,
			open: func(t *testing.T, o Options) *Store {
				s, err := Open(context.Background(), fmt.Sprintf(dirFmt, prefixFor(t)), opts(o))
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			producers: func(s *Store) string { return s.Dir().String() + "/producers" },
			altForms:  extraSlashes,
			outside:   outside,
			local:     noLocal,
		}
	}
	keep := func(base Options) func(Options) Options {
		return func(o Options) Options {
			// A copy: the suite opens stores from parallel cases.
			b := base
			b.NewUUID, b.Sleep, b.Logger = o.NewUUID, o.Sleep, o.Logger
			return b
		}
	}
	gcs := Options{Remote: remote.Options{GCS: remote.GCSOptions{Endpoint: gcsURL, Unauthenticated: true}}}
	az := Options{Remote: remote.Options{Azure: remote.AzureOptions{AccountKey: azuriteKey, Endpoint: azEndpoint}}}
	return []backend{
		objectBackend("gs", "gs://gbucket/%s", keep(gcs),
			[]string{"gs://other/x/producers/p/1/x.offsets", "s3://gbucket/x/producers/p/1/x.offsets", "/producers/p/1/x.offsets"}),
		objectBackend("abfs", "abfs://fluss@"+azuriteAccount+".dfs.core.windows.net/%s", keep(az),
			[]string{"abfs://other@" + azuriteAccount + ".dfs.core.windows.net/x/producers/p/1/x.offsets", "wasb://fluss@" + azuriteAccount + ".blob.core.windows.net/x/producers/p/1/x.offsets"}),
		objectBackend("wasbs", "wasbs://fluss@"+azuriteAccount+".blob.core.windows.net/%s/", keep(az),
			[]string{"abfss://fluss@" + azuriteAccount + ".dfs.core.windows.net/x/producers/p/1/x.offsets"}),
		objectBackend("abfss", "abfss://fluss@"+azuriteAccount+".dfs.core.windows.net/%s", keep(az),
			[]string{"abfs://fluss@" + azuriteAccount + ".dfs.core.windows.net/x/producers/p/1/x.offsets"}),
		objectBackend("wasb", "wasb://fluss@"+azuriteAccount+".blob.core.windows.net/%s", keep(az),
			[]string{"wasbs://fluss@" + azuriteAccount + ".blob.core.windows.net/x/producers/p/1/x.offsets"}),
		objectBackend("cosn", "cosn://bucket/%s", keep(s3Options(s3Endpoint)),
			[]string{"s3://bucket/x/producers/p/1/x.offsets", "cosn://other/x/producers/p/1/x.offsets"}),
		objectBackend("obs", "obs://bucket/%s", keep(s3Options(s3Endpoint)),
			[]string{"oss://bucket/x/producers/p/1/x.offsets"}),
		hdfsBackend(t, "hdfs", false),
		hdfsBackend(t, "hdfs-nameservice", true),
	}
}

// hdfsBackend is the test binary's HDFS minicluster, named by its
// NameNode's address or, with nameservice, by a nameservice the Hadoop
// configuration maps to it. Each store gets its own directory.
func hdfsBackend(t *testing.T, name string, nameservice bool) backend {
	c := hdfstest.Shared(t)
	authority := c.Addr()
	var conf map[string]string
	if nameservice {
		authority = "fluss-ns"
		conf = map[string]string{
			"dfs.nameservices":                      "fluss-ns",
			"dfs.ha.namenodes.fluss-ns":             "nn1",
			"dfs.namenode.rpc-address.fluss-ns.nn1": c.Addr(),
		}
	}
	return backend{
		name: name,
		open: func(t *testing.T, o Options) *Store {
			o.Remote.HDFS = remote.HDFSOptions{Conf: conf}
			s, err := Open(context.Background(), "hdfs://"+authority+"/"+hdfsDirName(t), o)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		producers: func(s *Store) string { return s.Dir().String() + "/producers" },
		altForms:  extraSlashes,
		outside: []string{
			"hdfs://127.0.0.1:1/x/producers/p/1/x.offsets", "hdfs://other-ns/x/producers/p/1/x.offsets",
			"file:/x/producers/p/1/x.offsets", "/producers/p/1/x.offsets",
		},
		local: noLocal,
	}
}

// extraSlashes spells p, a path with an authority, with an extra slash
// after the authority and one in the middle.
func extraSlashes(p string) []string {
	i := strings.Index(p, "://") + 3
	j := i + strings.Index(p[i:], "/")
	return []string{p[:j] + "/" + p[j:], strings.Replace(p, "/producers/", "//producers/", 1)}
}

// hdfsDirName is a directory name unique to the test, from its name.
func hdfsDirName(t *testing.T) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, t.Name()) + "-" + fmt.Sprint(time.Now().UnixNano())
}

func TestOpenCloudErrors(t *testing.T) {
	for _, dir := range []string{"cosn://bucket/x", "obs://bucket/x"} {
		if _, err := Open(context.Background(), dir, Options{}); err == nil || !strings.Contains(err.Error(), "needs an S3-compatible endpoint") {
			t.Errorf("%s without endpoint: %v", dir, err)
		}
	}
	if _, err := Open(context.Background(), "abfss://nocontainer.dfs.core.windows.net/x", Options{}); err == nil || !strings.Contains(err.Error(), "container@account") {
		t.Errorf("abfss without container: %v", err)
	}
	if _, err := Open(context.Background(), "gs:///x", Options{}); err == nil || !strings.Contains(err.Error(), "no bucket name") {
		t.Errorf("gs without bucket: %v", err)
	}
	// A gs bucket that does not exist on the emulator: writes fail with a
	// clear error, nothing hangs.
	url := startFakeGCS(t)
	s, err := Open(context.Background(), "gs://missing/x", Options{Remote: remote.Options{GCS: remote.GCSOptions{Endpoint: url, Unauthenticated: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.WriteOffsets(ctx, "p", tableA); err == nil {
		t.Fatal("write to a missing bucket succeeded")
	}
}
