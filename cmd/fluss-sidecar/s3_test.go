package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// TestS3RemoteDataDir runs the sidecar with remote.data.dir on S3 (an
// in-process S3 server on loopback), configured with Fluss's s3.* keys.
func TestS3RemoteDataDir(t *testing.T) {
	zktest.SkipIfShort(t)
	mem := s3mem.New()
	if err := mem.CreateBucket("fluss"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	defer srv.Close()

	cfg, err := loadConfig([]string{
		"-Dbind.listeners=FLUSS://127.0.0.1:0",
		"-Dzookeeper.address=" + zkAddr,
		"-Dzookeeper.path.root=" + zktest.UniqueRoot(),
		"-Dremote.data.dir=s3://fluss/cluster-1",
		"-Ds3.endpoint=" + srv.URL,
		"-Ds3.region=us-east-1",
		"-Ds3.access-key=test",
		"-Ds3.secret-key=test-secret",
		"-Ds3.path.style.access=true",
	})
	if err != nil {
		t.Fatal(err)
	}
	a := apptest.StartConfig(t, cfg, app.Options{})

	out, code, stderr := cli(t, "offsets", "register", "--bootstrap", a.Addr(), "--producer-id", "s3-job", "--offset", "7:0=5", "--offset", "7:2=9")
	if code != 0 || out["result"] != "CREATED" {
		t.Fatalf("register: %v %s", out, stderr)
	}
	out, _, _ = cli(t, "offsets", "get", "--bootstrap", a.Addr(), "--producer-id", "s3-job")
	if out["found"] != true {
		t.Fatalf("get: %v", out)
	}
	// The object is at Fluss's key with Fluss's bytes.
	list, err := mem.ListBucket("fluss", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil || len(list.Contents) != 1 {
		t.Fatalf("objects: %v %v", list, err)
	}
	key := list.Contents[0].Key
	if !strings.HasPrefix(key, "cluster-1/producers/s3-job/7/") || !strings.HasSuffix(key, ".offsets") {
		t.Fatalf("key %s", key)
	}
	obj, err := mem.GetObject("fluss", key, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Contents.Close()
	data, _ := io.ReadAll(obj.Contents)
	if string(data) != `{"version":1,"table_id":7,"bucket_offsets":[5,-1,9]}` {
		t.Fatalf("object bytes %s", data)
	}
	if out, _, _ := cli(t, "offsets", "delete", "--bootstrap", a.Addr(), "--producer-id", "s3-job"); out["deleted"] != true {
		t.Fatalf("delete: %v", out)
	}
	list, _ = mem.ListBucket("fluss", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if len(list.Contents) != 0 {
		t.Fatalf("delete left objects: %v", list.Contents)
	}
}
