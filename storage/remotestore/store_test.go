package remotestore

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"gocloud.dev/blob/memblob"
	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

const testUUID = "550e8400-e29b-41d4-a716-446655440000"

// uuidSeq returns a NewUUID func giving testUUID first, then distinct ones.
func uuidSeq() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		if n == 1 {
			return testUUID
		}
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	}
}

// backend is one storage under the conformance suite.
type backend struct {
	name string
	// open opens a store on a fresh, empty storage.
	open func(t *testing.T, opts Options) *Store
	// producers is the qualified producers directory the store must report.
	producers func(s *Store) string
	// altForms gives other spellings a Java coordinator may have stored
	// for the qualified file path p.
	altForms func(p string) []string
	// outside gives paths that name files outside the store.
	outside []string
	// local is the directory of a local store, "" otherwise.
	local func(s *Store) string
}

func startFakeS3(t *testing.T, buckets ...string) string {
	t.Helper()
	mem := s3mem.New()
	for _, b := range buckets {
		if err := mem.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(gofakes3.New(mem).Server()) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return srv.URL
}

func s3Options(endpoint string) Options {
	return Options{Remote: remote.Options{S3Endpoint: endpoint, S3Region: "us-east-1", S3AccessKey: "fake-access", S3SecretKey: "fake-secret", S3PathStyle: true}}
}

func localBackend(name string, dirForm func(dir string) string) backend {
	dirs := map[*Store]string{}
	var mu sync.Mutex
	return backend{
		name: name,
		open: func(t *testing.T, opts Options) *Store {
			dir := filepath.Join(t.TempDir(), "remote") // created by Open
			s, err := Open(context.Background(), dirForm(dir), opts)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			dirs[s] = dir
			mu.Unlock()
			return s
		},
		producers: func(s *Store) string {
			mu.Lock()
			defer mu.Unlock()
			return "file:" + dirs[s] + "/producers"
		},
		altForms: func(p string) []string {
			bare := strings.TrimPrefix(p, "file:")
			return []string{bare, "file://" + bare, "FILE:" + bare, strings.ReplaceAll(p, "/producers/", "//producers///"), p + "/", strings.Replace(p, "/producers/", "/producers/x/../", 1)}
		},
		outside: []string{"/etc/passwd", "file:/etc/passwd", "file://host/tmp/x", "s3://bucket/fluss/producers/p/1/x.offsets"},
		local: func(s *Store) string {
			mu.Lock()
			defer mu.Unlock()
			return dirs[s]
		},
	}
}

// noLocal is the local path of a store that keeps no local files.
func noLocal(*Store) string { return "" }

func backends(t *testing.T) []backend {
	endpoint := startFakeS3(t, "bucket", "other")
	return append([]backend{
		{
			name: "mem",
			open: func(t *testing.T, opts Options) *Store {
				s, err := Open(context.Background(), "mem://", opts)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			producers: func(*Store) string { return "mem:/producers" },
			altForms: func(p string) []string {
				return []string{"mem://" + strings.TrimPrefix(p, "mem:"), "MEM:" + strings.TrimPrefix(p, "mem:")}
			},
			outside: []string{"/producers/p/1/x.offsets", "mem://other/producers/p/1/x.offsets", "s3://bucket/producers/p/1/x.offsets"},
			local:   noLocal,
		},
		{
			name: "mem-injected",
			open: func(t *testing.T, opts Options) *Store {
				opts.Bucket = memblob.OpenBucket(nil)
				s, err := Open(context.Background(), "s3://injected/base/dir", opts)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			producers: func(*Store) string { return "s3://injected/base/dir/producers" },
			altForms:  func(p string) []string { return []string{strings.Replace(p, "/base/", "//base//", 1)} },
			outside:   []string{"s3://injected/base/producers/p/1/x.offsets", "s3://other/base/dir/producers/p/1/x.offsets", "oss://injected/base/dir/producers/p/1/x.offsets"},
			local:     noLocal,
		},
		localBackend("file-uri", func(dir string) string { return "file://" + dir }),
		localBackend("file-bare", func(dir string) string { return dir + "/" }),
		{
			name: "s3",
			open: func(t *testing.T, opts Options) *Store {
				prefix := strings.ReplaceAll(t.Name(), "/", "_")
				o := s3Options(endpoint)
				o.NewUUID, o.Sleep, o.Logger = opts.NewUUID, opts.Sleep, opts.Logger
				s, err := Open(context.Background(), "s3://bucket/"+prefix, o)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			producers: func(s *Store) string { return s.Dir().String() + "/producers" },
			altForms:  func(p string) []string { return []string{strings.Replace(p, "s3://bucket/", "s3://bucket//", 1)} },
			outside:   []string{"s3://other/x/producers/p/1/x.offsets", "oss://bucket/x/producers/p/1/x.offsets", "/producers/p/1/x.offsets"},
			local:     noLocal,
		},
		{
			name: "oss",
			open: func(t *testing.T, opts Options) *Store {
				prefix := strings.ReplaceAll(t.Name(), "/", "_")
				o := s3Options(endpoint)
				o.NewUUID, o.Sleep, o.Logger = opts.NewUUID, opts.Sleep, opts.Logger
				s, err := Open(context.Background(), "oss://bucket/"+prefix+"/", o)
				if err != nil {
					t.Fatal(err)
				}
				return s
			},
			producers: func(s *Store) string { return s.Dir().String() + "/producers" },
			altForms:  func(p string) []string { return []string{p} },
			outside:   []string{"s3://bucket/x/producers/p/1/x.offsets"},
			local:     noLocal,
		},
	}, cloudBackends(t, endpoint)...)
}

var (
	tableA = offsets.TableOffsets{TableID: 12345, Buckets: []offsets.BucketOffset{nb(0, 100), nb(2, 300)}}
	tableB = offsets.TableOffsets{TableID: 7, Buckets: []offsets.BucketOffset{pb(1, 0, 100), pb(1, 2, 300), pb(2, 1, 400)}}
)

// TestEveryBlobDriver runs the remote store's own cases against every blob
// driver it opens (the emulators where a cloud is needed).
func TestEveryBlobDriver(t *testing.T) {
	for _, be := range backends(t) {
		t.Run(be.name, func(t *testing.T) {
			t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, be) })
			t.Run("Outside", func(t *testing.T) { testOutside(t, be) })
			t.Run("NotFoundAndDelete", func(t *testing.T) { testNotFoundAndDelete(t, be) })
			t.Run("Listing", func(t *testing.T) { testListing(t, be) })
			t.Run("WriteRefused", func(t *testing.T) { testWriteRefused(t, be) })
		})
	}
}

func testRoundTrip(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t, Options{NewUUID: uuidSeq()})
	defer s.Close()
	if got, want := s.ProducersDir().String(), be.producers(s); got != want {
		t.Errorf("ProducersDir = %q, want %q", got, want)
	}
	p, err := s.WriteOffsets(ctx, "my-producer-1", tableA)
	if err != nil {
		t.Fatal(err)
	}
	want := be.producers(s) + "/my-producer-1/12345/" + testUUID + ".offsets"
	if p != want {
		t.Errorf("WriteOffsets path = %q, want %q", p, want)
	}
	if got := remote.MustParseFsPath(p).String(); got != p {
		t.Errorf("path %q is not in FsPath normal form (%q)", p, got)
	}
	for _, form := range append([]string{p}, be.altForms(p)...) {
		if q, err := s.Qualify(form); err != nil || q != p {
			t.Errorf("Qualify(%q) = %q, %v; want %q", form, q, err, p)
		}
		got, err := s.ReadOffsets(ctx, form)
		if err != nil {
			t.Errorf("ReadOffsets(%q): %v", form, err)
			continue
		}
		if !reflect.DeepEqual(got, tableA) {
			t.Errorf("ReadOffsets(%q) = %+v, want %+v", form, got, tableA)
		}
	}
	// The stored bytes are exactly the encoding.
	wantBytes, _ := flussjson.EncodeTableOffsets(tableA)
	key, err := s.fileKey(p)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := s.bucket.ReadAll(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != string(wantBytes) {
		t.Errorf("stored %q, want %q", raw, wantBytes)
	}
	if dir := be.local(s); dir != "" {
		tableDir := filepath.Join(dir, "producers", "my-producer-1", "12345")
		raw, err := os.ReadFile(filepath.Join(tableDir, testUUID+".offsets"))
		if err != nil || string(raw) != string(wantBytes) {
			t.Errorf("file on disk = %q, %v; want %q", raw, err, wantBytes)
		}
		entries, err := os.ReadDir(tableDir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Equal(names, []string{testUUID + ".offsets"}) {
			t.Errorf("table directory holds %v, want only the offsets file (no .attrs)", names)
		}
	}
	// A second table, partitioned.
	p2, err := s.WriteOffsets(ctx, "my-producer-1", tableB)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadOffsets(ctx, p2); err != nil || !reflect.DeepEqual(got, tableB) {
		t.Errorf("ReadOffsets(%q) = %+v, %v; want %+v", p2, got, err, tableB)
	}
}

func testOutside(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t, Options{NewUUID: uuidSeq()})
	defer s.Close()
	p, err := s.WriteOffsets(ctx, "p", tableA)
	if err != nil {
		t.Fatal(err)
	}
	prod := s.ProducersDir().String()
	dir := s.Dir().String()
	paths := append([]string{
		prod,              // the directory itself
		prod + "/p",       // a producer directory
		prod + "/p/12345", // a table directory
		prod + "/p/12345/" + testUUID + ".offsets/x", // too deep
		dir + "/x.offsets",                           // beside producers/
		dir + "/producersX/p/1/x.offsets",            // a sibling sharing the prefix
		prod + "/p/12345/../../../x/y/z",             // escapes by ".."
		prod + "/p/../../p/12345/x",                  // ".." resolved: still outside the layout
		prod + "/p/12345/..",                         // a directory
		"",                                           // not a path
		"1x:/y",                                      // unparsable
		"relative/producers/p/1/x.offsets",
	}, be.outside...)
	for _, o := range paths {
		if _, err := s.ReadOffsets(ctx, o); !errors.Is(err, ErrOutsidePath) {
			t.Errorf("ReadOffsets(%q) error %v, want ErrOutsidePath", o, err)
		}
		if _, err := s.Qualify(o); !errors.Is(err, ErrOutsidePath) {
			t.Errorf("Qualify(%q) error %v, want ErrOutsidePath", o, err)
		}
		if err := s.DeleteOffsets(ctx, o); !errors.Is(err, ErrOutsidePath) {
			t.Errorf("DeleteOffsets(%q) error %v, want ErrOutsidePath", o, err)
		}
	}
	// Nothing was deleted.
	if _, err := s.ReadOffsets(ctx, p); err != nil {
		t.Errorf("file gone after refused deletes: %v", err)
	}
}

func testNotFoundAndDelete(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t, Options{NewUUID: uuidSeq()})
	defer s.Close()
	missing := s.ProducersDir().String() + "/p/1/missing.offsets"
	if _, err := s.ReadOffsets(ctx, missing); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("ReadOffsets(missing) error %v, want storage.ErrNotFound", err)
	} else if IsRetriable(err) {
		t.Errorf("ErrNotFound is retriable")
	}
	if err := s.DeleteOffsets(ctx, missing); err != nil {
		t.Errorf("DeleteOffsets(missing) = %v, want nil", err)
	}
	p, err := s.WriteOffsets(ctx, "p", tableA)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := s.DeleteOffsets(ctx, p); err != nil {
			t.Errorf("delete #%d: %v", i+1, err)
		}
		if _, err := s.ReadOffsets(ctx, p); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("read after delete #%d: %v, want storage.ErrNotFound", i+1, err)
		}
	}
	// A file that is not valid JSON: a permanent, non-retriable error.
	key, _ := s.fileKey(p)
	if err := s.bucket.WriteAll(ctx, key, []byte(`{"version":2,"table_id":1}`), nil); err != nil {
		t.Fatal(err)
	}
	_, err = s.ReadOffsets(ctx, p)
	if !errors.Is(err, flussjson.ErrMalformedOffsetsFile) || !strings.Contains(err.Error(), "Unsupported version: 2") || IsRetriable(err) {
		t.Errorf("ReadOffsets(version 2) error %v", err)
	}
}

func testListing(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t, Options{NewUUID: uuidSeq()})
	defer s.Close()
	if dirs, err := s.ListProducerDirs(ctx); err != nil || len(dirs) != 0 {
		t.Errorf("ListProducerDirs on empty store = %v, %v", dirs, err)
	}
	if files, err := s.ListProducerFiles(ctx, "nobody"); err != nil || len(files) != 0 {
		t.Errorf("ListProducerFiles(nobody) = %v, %v", files, err)
	}
	var written []string
	for _, w := range []struct {
		producer string
		t        offsets.TableOffsets
	}{{"p1", tableA}, {"p1", tableB}, {"p2", tableA}, {"p1", tableA}} {
		p, err := s.WriteOffsets(ctx, w.producer, w.t)
		if err != nil {
			t.Fatal(err)
		}
		if w.producer == "p1" {
			written = append(written, p)
		}
	}
	dirs, err := s.ListProducerDirs(ctx)
	if err != nil || !slices.Equal(dirs, []string{"p1", "p2"}) {
		t.Errorf("ListProducerDirs = %v, %v; want [p1 p2]", dirs, err)
	}
	files, err := s.ListProducerFiles(ctx, "p1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path)
		if want := strings.Split(strings.TrimPrefix(f.Path, s.ProducersDir().String()+"/p1/"), "/")[0]; f.TableDir != want {
			t.Errorf("%s: TableDir %q, want %q", f.Path, f.TableDir, want)
		}
		if f.ModTime.IsZero() {
			t.Errorf("%s: zero ModTime", f.Path)
		}
		// Listed paths are the form WriteOffsets returns and read back.
		if _, err := s.ReadOffsets(ctx, f.Path); err != nil {
			t.Errorf("ReadOffsets(listed %q): %v", f.Path, err)
		}
	}
	slices.Sort(written)
	if !slices.Equal(got, written) {
		t.Errorf("ListProducerFiles(p1) = %v, want %v", got, written)
	}

	// Cleanup helpers: p2 goes file by file, as orphan cleanup removes it.
	p2files, err := s.ListProducerFiles(ctx, "p2")
	if err != nil || len(p2files) != 1 {
		t.Fatalf("ListProducerFiles(p2) = %v, %v", p2files, err)
	}
	if err := s.DeleteOffsets(ctx, p2files[0].Path); err != nil {
		t.Fatal(err)
	}
	if gone, err := s.PruneEmptyDirs(ctx, "p2"); err != nil || !gone {
		t.Errorf("PruneEmptyDirs(p2) when empty = %v, %v; want true", gone, err)
	}
	if dirs, err := s.ListProducerDirs(ctx); err != nil || !slices.Equal(dirs, []string{"p1"}) {
		t.Errorf("after removing p2: %v, %v; want [p1]", dirs, err)
	}
	if gone, err := s.PruneEmptyDirs(ctx, "p1"); err != nil || gone {
		t.Errorf("PruneEmptyDirs(p1) with files = %v, %v; want false", gone, err)
	}
	for _, p := range written[:2] {
		if err := s.DeleteOffsets(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if gone, err := s.PruneEmptyDirs(ctx, "p1"); err != nil || gone {
		t.Errorf("PruneEmptyDirs(p1) with one file = %v, %v; want false", gone, err)
	}
	if err := s.DeleteOffsets(ctx, written[2]); err != nil {
		t.Fatal(err)
	}
	if gone, err := s.PruneEmptyDirs(ctx, "p1"); err != nil || !gone {
		t.Errorf("PruneEmptyDirs(p1) when empty = %v, %v; want true", gone, err)
	}
	if dirs, err := s.ListProducerDirs(ctx); err != nil || len(dirs) != 0 {
		t.Errorf("after pruning: %v, %v; want none", dirs, err)
	}
	for _, bad := range []string{"", ".", "..", "a/b", `a\b`} {
		if _, err := s.ListProducerFiles(ctx, bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ListProducerFiles(%q) error %v, want ErrInvalidName", bad, err)
		}
		if _, err := s.PruneEmptyDirs(ctx, bad); !errors.Is(err, ErrInvalidName) {
			t.Errorf("PruneEmptyDirs(%q) error %v, want ErrInvalidName", bad, err)
		}
	}
}

func testWriteRefused(t *testing.T, be backend) {
	ctx := context.Background()
	s := be.open(t, Options{NewUUID: uuidSeq()})
	defer s.Close()
	bad := offsets.TableOffsets{TableID: 1, Buckets: []offsets.BucketOffset{nb(0, 5), pb(1, 0, 5)}}
	if _, err := s.WriteOffsets(ctx, "p", bad); !errors.Is(err, flussjson.ErrInvalidOffsets) {
		t.Errorf("WriteOffsets(mixed) error %v, want flussjson.ErrInvalidOffsets", err)
	}
	for _, id := range []string{"", ".", "..", "a/b", "invalid@producer", "invalid producer", "invalid:producer", strings.Repeat("x", 201)} {
		if _, err := s.WriteOffsets(ctx, id, tableA); !errors.Is(err, ErrInvalidName) {
			t.Errorf("WriteOffsets(%q) error %v, want ErrInvalidName", id, err)
		}
	}
	if dirs, err := s.ListProducerDirs(ctx); err != nil || len(dirs) != 0 {
		t.Errorf("refused writes left %v (%v)", dirs, err)
	}
}

// The exact offsets_path strings of docs/storage-format.md §5 for a fixed uuid, with the producers
// directory qualified even for a bare local path (W1).
func TestWriteOffsetsPathForms(t *testing.T) {
	const file = "/producers/my-producer-1/12345/" + testUUID + ".offsets"
	tests := []struct {
		dir, want string
	}{
		{"file:///tmp/fluss/remote", "file:/tmp/fluss/remote" + file},
		{"/tmp/fluss/remote", "file:/tmp/fluss/remote" + file},
		{"/tmp//fluss/remote/", "file:/tmp/fluss/remote" + file},
		{"file:/tmp/fluss/remote", "file:/tmp/fluss/remote" + file},
		{"s3://bucket/fluss", "s3://bucket/fluss" + file},
		{"s3://bucket", "s3://bucket" + file},
		{"s3a://bucket/fluss", "s3a://bucket/fluss" + file},
		{"oss://bucket/fluss", "oss://bucket/fluss" + file},
		{"mem://", "mem:" + file},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			ctx := context.Background()
			bucket := memblob.OpenBucket(nil)
			s, err := Open(ctx, tt.dir, Options{Bucket: bucket, NewUUID: func() string { return testUUID }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got, err := s.WriteOffsets(ctx, "my-producer-1", tableA)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if _, err := s.ReadOffsets(ctx, got); err != nil {
				t.Errorf("ReadOffsets(%q): %v", got, err)
			}
			// What a Java coordinator stores for the same file (docs/storage-format.md §5 table):
			// for a bare dir the unqualified path. It must be readable too.
			javaStored := remote.MustParseFsPath(tt.dir).Join("producers/my-producer-1/12345/" + testUUID + ".offsets").String()
			if _, err := s.ReadOffsets(ctx, javaStored); err != nil {
				t.Errorf("ReadOffsets(java %q): %v", javaStored, err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	endpoint := startFakeS3(t)
	tests := []struct {
		dir     string
		opts    Options
		wantErr string
	}{
		{"", Options{}, "empty string"},
		{"relative/dir", Options{}, "must be absolute"},
		{"file://host/tmp/x", Options{}, "must not have an authority"},
		{"/../x", Options{}, "must be absolute"},
		{"viewfs://cluster/fluss", Options{}, "unsupported scheme"},
		{"s3:///fluss", Options{}, "no bucket name"},
		{"oss://bucket/fluss", Options{}, "needs an S3-compatible endpoint"},
		{"oss://bucket/fluss", Options{Remote: remote.Options{S3AccessKey: "a", S3SecretKey: "b"}}, "needs an S3-compatible endpoint"},
		{"s3:bucket", Options{}, "relative path"},
		{"s3://bucket/fluss", s3Options(endpoint), ""},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			s, err := Open(context.Background(), tt.dir, tt.opts)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(); err != nil {
					t.Errorf("second Close: %v", err)
				}
				return
			}
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q) succeeded, want error", tt.dir)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	// A local directory that is a file.
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(context.Background(), f, Options{}); err == nil {
		s.Close()
		t.Errorf("Open(file) succeeded")
	}
}

// An injected bucket is not closed by the store.
func TestInjectedBucketNotClosed(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	defer b.Close()
	s, err := Open(ctx, "mem://", Options{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, "k", []byte("v"), nil); err != nil {
		t.Errorf("injected bucket closed by Store.Close: %v", err)
	}
}

func TestIsRetriable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain I/O", errors.New("connection reset"), true},
		{"deadline", context.DeadlineExceeded, true},
		{"canceled", context.Canceled, false},
		{"not found", fmt.Errorf("x: %w", storage.ErrNotFound), false},
		{"outside", fmt.Errorf("x: %w", ErrOutsidePath), false},
		{"invalid name", ErrInvalidName, false},
		{"invalid offsets", flussjson.ErrInvalidOffsets, false},
		{"malformed", fmt.Errorf("x: %w", flussjson.ErrMalformedOffsetsFile), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsRetriable(tt.err); got != tt.want {
				t.Errorf("IsRetriable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
	// gcerrors codes from a real bucket.
	b := memblob.OpenBucket(nil)
	defer b.Close()
	_, err := b.ReadAll(context.Background(), "missing")
	if gcerrors.Code(err) != gcerrors.NotFound || IsRetriable(err) {
		t.Errorf("NotFound from blob: code %v retriable %v", gcerrors.Code(err), IsRetriable(err))
	}
}

func TestRetry(t *testing.T) {
	transient := errors.New("transient")
	notFound := func() error {
		_, err := memblob.OpenBucket(nil).ReadAll(context.Background(), "x")
		return err
	}()
	tests := []struct {
		name          string
		errs          []error // returned by successive attempts; nil after
		retryNotFound bool
		wantCalls     int
		wantSleeps    []time.Duration
		wantErr       error
	}{
		{"success", nil, false, 1, nil, nil},
		{"one transient", []error{transient}, false, 2, []time.Duration{100 * time.Millisecond}, nil},
		{"two transient", []error{transient, transient}, false, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, nil},
		{"exhausted", []error{transient, transient, transient, transient}, false, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, transient},
		{"not found", []error{notFound}, false, 1, nil, notFound},
		{"not found on write", []error{notFound}, true, 2, []time.Duration{100 * time.Millisecond}, nil},
		{"malformed", []error{flussjson.ErrMalformedOffsetsFile}, false, 1, nil, flussjson.ErrMalformedOffsetsFile},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sleeps []time.Duration
			s, err := Open(context.Background(), "mem://", Options{Sleep: func(_ context.Context, d time.Duration) error {
				sleeps = append(sleeps, d)
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			calls := 0
			err = s.retry(context.Background(), "op", tt.retryNotFound, func(context.Context) error {
				calls++
				if calls <= len(tt.errs) {
					return tt.errs[calls-1]
				}
				return nil
			})
			if calls != tt.wantCalls || !slices.Equal(sleeps, tt.wantSleeps) || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("calls %d sleeps %v err %v; want %d %v %v", calls, sleeps, err, tt.wantCalls, tt.wantSleeps, tt.wantErr)
			}
		})
	}
	// A context cancelled during a try stops the retries.
	ctx, cancel := context.WithCancel(context.Background())
	s, _ := Open(ctx, "mem://", Options{Sleep: func(context.Context, time.Duration) error { t.Error("slept"); return nil }})
	defer s.Close()
	calls := 0
	if err := s.retry(ctx, "op", false, func(context.Context) error { calls++; cancel(); return transient }); err == nil || calls != 1 {
		t.Errorf("cancelled during a try: calls %d err %v", calls, err)
	}
	// One cancelled before makes no try at all: fileblob would read or
	// delete regardless of it.
	calls = 0
	if err := s.retry(ctx, "op", false, func(context.Context) error { calls++; return nil }); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("cancelled before: calls %d err %v", calls, err)
	}
}

// Concurrent writes for one producer all land and list.
func TestConcurrentWrites(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "file://"+t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var wg sync.WaitGroup
	paths := make([]string, 10)
	for i := range paths {
		wg.Go(func() {
			p, err := s.WriteOffsets(ctx, "p", offsets.TableOffsets{TableID: int64(i % 3), Buckets: []offsets.BucketOffset{nb(0, int64(i))}})
			if err != nil {
				t.Error(err)
			}
			paths[i] = p
		})
	}
	wg.Wait()
	files, err := s.ListProducerFiles(ctx, "p")
	if err != nil || len(files) != len(paths) {
		t.Fatalf("listed %d files (%v), want %d", len(files), err, len(paths))
	}
}

// nb is an offset of a non-partitioned table's bucket, pb one of a
// partition's bucket.
func nb(bucket int32, off int64) offsets.BucketOffset {
	return offsets.BucketOffset{BucketID: bucket, LogEndOffset: off}
}

func pb(partition int64, bucket int32, off int64) offsets.BucketOffset {
	return offsets.BucketOffset{Partitioned: true, PartitionID: partition, BucketID: bucket, LogEndOffset: off}
}
