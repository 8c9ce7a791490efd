package admin

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// now is the fixed clock of every test: snapshots expiring before it are
// expired.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// env is a registry in a private ZooKeeper root and a local remote.data.dir,
// planted directly (as a coordinator would leave it) rather than through the
// sidecar's write path.
type env struct {
	t     testing.TB
	zc    *zk.Client
	files *remotestore.Store
	dir   string // remote.data.dir
	admin *Admin
	seq   int
}

func newEnv(t testing.TB) *env {
	t.Helper()
	zktest.SkipIfShort(t)
	zc, err := zk.Connect(t.Context(), zk.Config{Address: zkAddr, Root: zktest.UniqueRoot(), ConnectionTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	dir := filepath.Join(t.TempDir(), "remote")
	files, err := remotestore.Open(t.Context(), "file://"+dir, remotestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	a, err := New(Config{Snapshots: zkstore.New(zc), Files: files, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, zc: zc, files: files, dir: dir, admin: a}
}

// file writes an offsets file with content t at producers/<producer>/<tableDir>/<name>
// (a fresh name if empty), modified at mtime, and returns its qualified path.
func (e *env) file(producer, tableDir, name string, t offsets.TableOffsets, mtime time.Time) string {
	e.t.Helper()
	data, err := flussjson.EncodeTableOffsets(t)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.rawFile(producer, tableDir, name, data, mtime)
}

func (e *env) rawFile(producer, tableDir, name string, data []byte, mtime time.Time) string {
	e.t.Helper()
	if name == "" {
		e.seq++
		name = fmt.Sprintf("00000000-0000-4000-8000-%012d.offsets", e.seq)
	}
	p := filepath.Join(e.dir, "producers", producer, tableDir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		e.t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		e.t.Fatal(err)
	}
	return "file:" + p
}

// znode creates /producers/<id> with the bytes a coordinator writes.
func (e *env) znode(id string, expiration time.Time, refs ...offsets.FileRef) {
	e.t.Helper()
	e.rawZnode(id, flussjson.EncodeSnapshot(offsets.Snapshot{ExpirationTime: expiration.UnixMilli(), Tables: refs}))
}

func (e *env) rawZnode(id string, data []byte) {
	e.t.Helper()
	if _, err := e.zc.Create(e.t.Context(), zkstore.ProducersPath+"/"+id, data, zk.Persistent); err != nil {
		e.t.Fatal(err)
	}
}

// snapshot plants a whole, consistent snapshot: one file per table, files
// written an hour before now.
func (e *env) snapshot(id string, expiration time.Time, tables ...offsets.TableOffsets) {
	e.t.Helper()
	refs := make([]offsets.FileRef, len(tables))
	for i, t := range tables {
		refs[i] = offsets.FileRef{TableID: t.TableID, OffsetsPath: e.file(id, fmt.Sprint(t.TableID), "", t, now.Add(-time.Hour))}
	}
	e.znode(id, expiration, refs...)
}

func nb(bucket int32, off int64) offsets.BucketOffset {
	return offsets.BucketOffset{BucketID: bucket, LogEndOffset: off}
}

func pb(partition int64, bucket int32, off int64) offsets.BucketOffset {
	return offsets.BucketOffset{Partitioned: true, PartitionID: partition, BucketID: bucket, LogEndOffset: off}
}

func table(id int64, bs ...offsets.BucketOffset) offsets.TableOffsets {
	return offsets.TableOffsets{TableID: id, Buckets: bs}
}

func TestList(t *testing.T) {
	e := newEnv(t)
	e.snapshot("job-live", now.Add(time.Hour), table(100, nb(0, 42), nb(1, 7)), table(200, pb(5, 0, 9)))
	e.snapshot("job-expired", now.Add(-time.Millisecond), table(300, nb(0, 1)))
	e.snapshot("job-edge", now) // expires exactly now: still live, as in Fluss
	e.rawZnode("job-bad", []byte(`{"version":1,"expiration_time":"x"`))
	e.znode("job-dangling", now.Add(time.Hour), offsets.FileRef{TableID: 400, OffsetsPath: "file:" + e.dir + "/producers/job-dangling/400/missing.offsets"})

	var got []ListEntry
	if err := e.admin.List(t.Context(), ListOptions{}, func(le ListEntry) error { got = append(got, le); return nil }); err != nil {
		t.Fatal(err)
	}
	type brief struct {
		ID, State string
		Tables    []int64
		Buckets   int
		Errors    int
	}
	var b []brief
	for _, le := range got {
		b = append(b, brief{le.ProducerID, le.State, le.Tables, le.Buckets, len(le.Errors)})
	}
	want := []brief{
		{"job-bad", StateUnreadable, []int64{}, 0, 1},
		{"job-dangling", StateLive, []int64{400}, 0, 1},
		{"job-edge", StateLive, []int64{}, 0, 0},
		{"job-expired", StateExpired, []int64{300}, 1, 0},
		{"job-live", StateLive, []int64{100, 200}, 3, 0},
	}
	if !reflect.DeepEqual(b, want) {
		t.Fatalf("list:\n got %+v\nwant %+v", b, want)
	}
	if got[4].ExpirationTime != now.Add(time.Hour).UnixMilli() || got[4].ExpiresAt != "2026-12-01T13:00:00Z" {
		t.Fatalf("expiration of job-live: %+v", got[4])
	}
	if !strings.Contains(got[1].Errors[0], "offsets file not found") {
		t.Fatalf("dangling error: %v", got[1].Errors)
	}

	var expired []string
	if err := e.admin.List(t.Context(), ListOptions{ExpiredOnly: true}, func(le ListEntry) error {
		expired = append(expired, le.ProducerID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(expired, []string{"job-expired"}) {
		t.Fatalf("--expired: %v", expired)
	}

	// The JSON line and the table row for one entry, byte for byte.
	var buf bytes.Buffer
	if err := NewJSONLines(&buf).Write(got[3]); err != nil {
		t.Fatal(err)
	}
	wantJSON := `{"producer_id":"job-expired","expiration_time":1796126399999,"expires_at":"2026-12-01T11:59:59.999Z","state":"expired","tables":[300],"buckets":1}` + "\n"
	if buf.String() != wantJSON {
		t.Fatalf("JSON line:\n got %s\nwant %s", buf.String(), wantJSON)
	}
	buf.Reset()
	tw := NewListTable(&buf)
	for _, le := range got {
		tw.Write(le)
	}
	tw.Flush()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "PRODUCER_ID  ") ||
		strings.Join(strings.Fields(lines[5]), " ") != "job-live 2026-12-01T13:00:00Z live 100,200 3 -" {
		t.Fatalf("table:\n%s", buf.String())
	}
}

func TestListEmptyAndMissingProducers(t *testing.T) {
	e := newEnv(t)
	n := 0
	if err := e.admin.List(t.Context(), ListOptions{}, func(ListEntry) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("no /producers: %d entries, %v", n, err)
	}
	// fn's error stops the walk and comes back.
	e.snapshot("a", now)
	e.snapshot("b", now)
	stop := fmt.Errorf("stop")
	n = 0
	err := e.admin.List(t.Context(), ListOptions{}, func(ListEntry) error { n++; return stop })
	if err != stop || n != 1 {
		t.Fatalf("stop: %d %v", n, err)
	}
}

func TestListClosedZooKeeper(t *testing.T) {
	e := newEnv(t)
	e.snapshot("a", now)
	e.zc.Close()
	err := e.admin.List(t.Context(), ListOptions{}, func(ListEntry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "list producers") {
		t.Fatalf("want an error naming the failed listing, got %v", err)
	}
}
