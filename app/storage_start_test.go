package app_test

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
)

// TestStartChecksRemoteStorage: a missing bucket fails the start with a
// line that says so; an endpoint that does not answer is retried and the
// sidecar starts anyway (requests fail until it is back).
func TestStartChecksRemoteStorage(t *testing.T) {
	mem := s3mem.New()
	if err := mem.CreateBucket("fluss"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server())
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadEndpoint := "http://" + closed.Addr().String()
	closed.Close()

	s3 := func(dir, endpoint string) map[string]string {
		return map[string]string{
			"remote.data.dir": dir, "s3.endpoint": endpoint, "s3.region": "us-east-1",
			"s3.access-key": "test", "s3.secret-key": "test-secret", "s3.path.style.access": "true",
			app.KeyStorageStartChecks: "2",
		}
	}
	for _, tt := range []struct {
		name    string
		kv      map[string]string
		wantErr string
	}{
		{"bucket exists", s3("s3://fluss/c1", srv.URL), ""},
		{"missing bucket", s3("s3://no-such-bucket/c1", srv.URL), "remote storage s3://no-such-bucket/c1 is unusable (NotFound)"},
		{"endpoint down", s3("s3://fluss/c1", deadEndpoint), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := app.FromConfig(apptest.Config(t, sharedZK, tt.kv))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			a, err := app.Start(ctx, s, app.Options{})
			if err == nil {
				a.Close()
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("start: %v, want %q", err, tt.wantErr)
			}
		})
	}
	// The probe leaves nothing behind.
	list, err := mem.ListBucket("fluss", &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil || len(list.Contents) != 0 {
		t.Fatalf("objects left: %v %v", list, err)
	}
}
