package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// TestGCSRemoteDataDir runs the sidecar with remote.data.dir on gs:// (an
// in-process fake-gcs-server on loopback), configured with Fluss's fs.gs.*
// keys, the endpoint coming from the environment through ${env:NAME}; then
// lists the snapshot with the admin command over the same configuration.
func TestGCSRemoteDataDir(t *testing.T) {
	zktest.SkipIfShort(t)
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: "fluss"})
	t.Setenv("FLUSS_SIDECAR_TEST_GCS_URL", srv.URL()+"/")

	yaml := filepath.Join(t.TempDir(), "server.yaml")
	os.WriteFile(yaml, []byte(`
bind.listeners: FLUSS://127.0.0.1:0
zookeeper.address: `+zkAddr+`
zookeeper.path.root: `+zktest.UniqueRoot()+`
remote.data.dir: gs://fluss/cluster-1
fs.gs.storage.root.url: ${env:FLUSS_SIDECAR_TEST_GCS_URL}
gs.auth.type: UNAUTHENTICATED
`), 0o644)
	cfg, err := loadConfig([]string{"--config", yaml})
	if err != nil {
		t.Fatal(err)
	}
	a := apptest.StartConfig(t, cfg, app.Options{})

	out, code, stderr := cli(t, "offsets", "register", "--bootstrap", a.Addr(), "--producer-id", "gs-job", "--offset", "7:0=5", "--offset", "7:2=9")
	if code != 0 || out["result"] != "CREATED" {
		t.Fatalf("register: %v %s", out, stderr)
	}
	list, err := srv.ListObjectsWithOptionsPaginated("fluss", fakestorage.ListOptions{Prefix: "cluster-1/producers/gs-job/7/"})
	objs := list.Objects
	if err != nil || len(objs) != 1 || !strings.HasSuffix(objs[0].Name, ".offsets") {
		t.Fatalf("objects %v %v", objs, err)
	}
	obj, err := srv.GetObject("fluss", objs[0].Name)
	if err != nil || string(obj.Content) != `{"version":1,"table_id":7,"bucket_offsets":[5,-1,9]}` {
		t.Fatalf("object bytes %q %v", obj.Content, err)
	}
	stdout, stderrS, code := runCLI("offsets", "list", "--config", yaml)
	if code != 0 || !strings.Contains(stdout, `"producer_id":"gs-job"`) || !strings.Contains(stdout, `"buckets":2`) {
		t.Fatalf("list: %d %s %s", code, stdout, stderrS)
	}
	// An unset variable is a configuration error naming the key.
	os.Unsetenv("FLUSS_SIDECAR_TEST_GCS_URL")
	if _, stderrS, code := runCLI("offsets", "list", "--config", yaml); code != 2 || !strings.Contains(stderrS, "fs.gs.storage.root.url: reference ${env:FLUSS_SIDECAR_TEST_GCS_URL}") {
		t.Fatalf("unset variable: %d %s", code, stderrS)
	}
}
