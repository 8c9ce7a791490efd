package bench

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// BenchmarkGetManyTablesS3 reads a snapshot of 100 tables (100 offsets
// files) kept on S3 (an in-process S3 server over loopback HTTP). The
// sub-benchmark files=1 reads one file at a time, as a Fluss coordinator
// does: it is the baseline for files=8, the sidecar's default, in the same
// run. scripts/bench.sh prints the ratio.
func BenchmarkGetManyTablesS3(b *testing.B) {
	mem := s3mem.New()
	if err := mem.CreateBucket("fluss"); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	zc, err := zk.Connect(ctx, zk.Config{Address: zkAddr, Root: zktest.UniqueRoot()})
	if err != nil {
		b.Fatal(err)
	}
	defer zc.Close()
	files, err := remotestore.Open(ctx, "s3://fluss/cluster", remotestore.Options{Remote: remote.Options{
		S3Endpoint: srv.URL, S3Region: "us-east-1", S3AccessKey: "k", S3SecretKey: "s", S3PathStyle: true,
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer files.Close()
	registry := func(concurrency int) *producer.Registry {
		snaps := zkstore.New(zc)
		r, err := producer.New(producer.Config{
			Snapshots: snaps, Files: files, FileConcurrency: concurrency,
			FastPaths: storage.FastPathsOf(snaps, files),
		})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	in := producer.RegisterInput{ProducerID: ptr("many")}
	for t := int64(0); t < 100; t++ {
		in.Tables = append(in.Tables, producer.TableInput{TableID: t, Buckets: []producer.BucketInput{
			{BucketID: 0, LogEndOffset: ptr(t)}, {BucketID: 1, LogEndOffset: ptr(t + 1)},
		}})
	}
	if res, err := registry(producer.DefaultFileConcurrency).Register(ctx, in); err != nil || res != producer.Created {
		b.Fatal(res, err)
	}
	for _, n := range []int{1, producer.DefaultFileConcurrency} {
		r := registry(n)
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s, found, err := r.Get(ctx, in.ProducerID)
				if err != nil || !found || len(s.Tables) != 100 {
					b.Fatal(found, err)
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
