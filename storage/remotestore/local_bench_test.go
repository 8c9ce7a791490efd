package remotestore_test

import (
	"context"
	"testing"

	"gocloud.dev/blob/fileblob"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
)

// BenchmarkLocalWrite compares a local store's writes (the store's own,
// which survive a prune of their directory) with the same writes through
// gocloud's fileblob writer (a store over an injected fileblob bucket), in
// the same run: compare the two ns/op.
func BenchmarkLocalWrite(b *testing.B) {
	t := offsets.TableOffsets{TableID: 1}
	for i := range 16 {
		t.Buckets = append(t.Buckets, offsets.BucketOffset{BucketID: int32(i), LogEndOffset: 1 << 40})
	}
	ctx := context.Background()
	open := map[string]func(dir string) (*remotestore.Store, error){
		"own": func(dir string) (*remotestore.Store, error) {
			return remotestore.Open(ctx, "file://"+dir, remotestore.Options{})
		},
		"fileblob": func(dir string) (*remotestore.Store, error) {
			bucket, err := fileblob.OpenBucket(dir, &fileblob.Options{CreateDir: true, NoTempDir: true, Metadata: fileblob.MetadataDontWrite})
			if err != nil {
				return nil, err
			}
			b.Cleanup(func() { bucket.Close() })
			return remotestore.Open(ctx, "file://"+dir, remotestore.Options{Bucket: bucket})
		},
	}
	for _, name := range []string{"fileblob", "own"} {
		b.Run(name, func(b *testing.B) {
			s, err := open[name](b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for b.Loop() {
				if _, err := s.WriteOffsets(ctx, "bench", t); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
