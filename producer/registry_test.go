package producer_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// env is one registry over a real ZooKeeper (own root) and a remote dir.
type env struct {
	root     string
	dir      string // local remote.data.dir as given to remotestore.Open
	zc       *zk.Client
	store    *zkstore.Store
	files    *remotestore.Store
	reg      *producer.Registry
	clock    *fakeClock
	localDir string // the directory on disk
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// newEnv opens a registry; dirForm is "bare" (a scheme-less path, as in
// Fluss's shipped server.yaml) or "file" (file:///...).
func newEnv(t *testing.T, dirForm string) *env {
	t.Helper()
	e := &env{root: zktest.UniqueRoot(), localDir: t.TempDir(), clock: &fakeClock{now: time.UnixMilli(1735538268000)}}
	e.dir = e.localDir
	if dirForm == "file" {
		e.dir = "file://" + e.localDir
	}
	e.open(t)
	return e
}

func (e *env) open(t *testing.T) {
	t.Helper()
	zktest.SkipIfShort(t)
	ctx := t.Context()
	zc, err := zk.Connect(ctx, zk.Config{Address: zkAddr, Root: e.root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zc.Close() })
	files, err := remotestore.Open(ctx, e.dir, remotestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	e.zc, e.files, e.store = zc, files, zkstore.New(zc)
	e.reg = e.newRegistry(t)
}

func (e *env) newRegistry(t *testing.T) *producer.Registry {
	t.Helper()
	reg, err := producer.New(producer.Config{
		Snapshots: e.store,
		Files:     e.files,
		FastPaths: storage.FastPathsOf(e.store, e.files),
		Now:       e.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func p64(v int64) *int64   { return &v }
func str(s string) *string { return &s }

func bucket(b int32, off int64) producer.BucketInput {
	return producer.BucketInput{BucketID: b, LogEndOffset: p64(off)}
}

func pbucket(p int64, b int32, off int64) producer.BucketInput {
	return producer.BucketInput{PartitionID: p64(p), BucketID: b, LogEndOffset: p64(off)}
}

// threeBucketsTwoTables is the store test's fixture: 3 buckets over 2 tables.
func threeBucketsTwoTables(id string) producer.RegisterInput {
	return producer.RegisterInput{ProducerID: str(id), Tables: []producer.TableInput{
		{TableID: 1, Buckets: []producer.BucketInput{bucket(0, 100), bucket(1, 200)}},
		{TableID: 2, Buckets: []producer.BucketInput{bucket(0, 300)}},
	}}
}

// flat turns a snapshot into "table/partition/bucket=offset" strings, sorted.
func flat(tables []offsets.TableOffsets) []string {
	var out []string
	for _, t := range tables {
		for _, b := range t.Buckets {
			p := "-"
			if b.Partitioned {
				p = fmt.Sprint(b.PartitionID)
			}
			out = append(out, fmt.Sprintf("%d/%s/%d=%d", t.TableID, p, b.BucketID, b.LogEndOffset))
		}
	}
	sort.Strings(out)
	return out
}

func mustRegister(t *testing.T, reg *producer.Registry, in producer.RegisterInput) producer.Result {
	t.Helper()
	res, err := reg.Register(t.Context(), in)
	if err != nil {
		t.Fatalf("register %s: %v", *in.ProducerID, err)
	}
	return res
}

func mustGet(t *testing.T, reg *producer.Registry, id string) (producer.Snapshot, bool) {
	t.Helper()
	s, found, err := reg.Get(t.Context(), str(id))
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return s, found
}

// filesOnDisk lists the offsets files under the producer's directory.
func (e *env) filesOnDisk(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(e.localDir, "producers", id)
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestRegisterThenAlreadyExistsKeepsFirst(t *testing.T) {
	for _, form := range []string{"bare", "file"} {
		t.Run(form, func(t *testing.T) {
			e := newEnv(t, form)
			if res := mustRegister(t, e.reg, threeBucketsTwoTables("p1")); res != producer.Created {
				t.Fatalf("first register: %v", res)
			}
			snap, _, found, err := e.store.GetSnapshot(t.Context(), "p1")
			if err != nil || !found {
				t.Fatal(found, err)
			}
			if len(snap.Tables) != 2 {
				t.Fatalf("want 2 table entries, got %+v", snap.Tables)
			}
			if want := e.clock.Now().Add(24 * time.Hour).UnixMilli(); snap.ExpirationTime != want {
				t.Fatalf("expiration %d, want now+24h %d", snap.ExpirationTime, want)
			}
			for _, ref := range snap.Tables {
				// W1: the stored path is qualified even for a bare directory.
				if !strings.HasPrefix(ref.OffsetsPath, "file:"+e.localDir+"/producers/p1/") || !strings.HasSuffix(ref.OffsetsPath, ".offsets") {
					t.Errorf("offsets_path %q is not file:<dir>/producers/p1/...", ref.OffsetsPath)
				}
			}

			second := producer.RegisterInput{ProducerID: str("p1"), Tables: []producer.TableInput{
				{TableID: 1, Buckets: []producer.BucketInput{bucket(0, 999)}},
			}}
			if res := mustRegister(t, e.reg, second); res != producer.AlreadyExists {
				t.Fatalf("second register: %v", res)
			}
			got, found := mustGet(t, e.reg, "p1")
			if !found {
				t.Fatal("not found")
			}
			if want := []string{"1/-/0=100", "1/-/1=200", "2/-/0=300"}; strings.Join(flat(got.Tables), " ") != strings.Join(want, " ") {
				t.Fatalf("offsets %v, want %v", flat(got.Tables), want)
			}
			if n := len(e.filesOnDisk(t, "p1")); n != 2 {
				t.Fatalf("the refused register must leave no files: %d files", n)
			}
		})
	}
}

func TestMixedPartitionedRoundTrip(t *testing.T) {
	e := newEnv(t, "bare")
	in := producer.RegisterInput{ProducerID: str("mixed"), Tables: []producer.TableInput{
		{TableID: 10, Buckets: []producer.BucketInput{pbucket(1, 0, 5), pbucket(1, 1, 6), pbucket(2, 0, 7)}},
		{TableID: 11, Buckets: []producer.BucketInput{bucket(0, 8), bucket(3, 9)}},
		{TableID: 12, Buckets: []producer.BucketInput{pbucket(7, 2, 10)}},
	}}
	mustRegister(t, e.reg, in)
	got, found := mustGet(t, e.reg, "mixed")
	want := []string{"10/1/0=5", "10/1/1=6", "10/2/0=7", "11/-/0=8", "11/-/3=9", "12/7/2=10"}
	if !found || strings.Join(flat(got.Tables), " ") != strings.Join(want, " ") {
		t.Fatalf("got %v, want %v", flat(got.Tables), want)
	}
	if got.ProducerID != "mixed" || got.ExpirationTime != e.clock.Now().Add(24*time.Hour).UnixMilli() {
		t.Fatalf("%+v", got)
	}
}

func TestEmptyOffsets(t *testing.T) {
	e := newEnv(t, "bare")
	in := producer.RegisterInput{ProducerID: str("empty"), Tables: []producer.TableInput{{TableID: 5}}}
	if res := mustRegister(t, e.reg, in); res != producer.Created {
		t.Fatal(res)
	}
	raw, err := e.store.RawSnapshot(t.Context(), "empty")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`{"version":1,"expiration_time":%d,"tables":[]}`, e.clock.Now().Add(24*time.Hour).UnixMilli()); string(raw) != want {
		t.Fatalf("znode %s, want %s", raw, want)
	}
	got, found := mustGet(t, e.reg, "empty")
	if !found || len(got.Tables) != 0 {
		t.Fatalf("found=%v %+v", found, got)
	}
}

func TestMissingProducer(t *testing.T) {
	e := newEnv(t, "bare")
	if _, found := mustGet(t, e.reg, "nobody"); found {
		t.Fatal("found a missing producer")
	}
	if err := e.reg.Delete(t.Context(), str("nobody"), nil); err != nil {
		t.Fatalf("deleting a missing snapshot: %v", err)
	}
}

func TestDeleteClearsZnodeAndFiles(t *testing.T) {
	e := newEnv(t, "file")
	mustRegister(t, e.reg, threeBucketsTwoTables("gone"))
	if n := len(e.filesOnDisk(t, "gone")); n != 2 {
		t.Fatalf("want 2 files, got %d", n)
	}
	if err := e.reg.Delete(t.Context(), str("gone"), nil); err != nil {
		t.Fatal(err)
	}
	if _, found := mustGet(t, e.reg, "gone"); found {
		t.Fatal("still found after delete")
	}
	if n := len(e.filesOnDisk(t, "gone")); n != 0 {
		t.Fatalf("files left: %d", n)
	}
	ids, err := e.store.ListProducerIDs(t.Context())
	if err != nil || len(ids) != 0 {
		t.Fatal(ids, err)
	}
}

func TestDeleteCheckSeesZnodeTablesAndCanVeto(t *testing.T) {
	e := newEnv(t, "bare")
	mustRegister(t, e.reg, threeBucketsTwoTables("guarded"))
	var seen []int64
	veto := flusserr.New(flusserr.AuthorizationException, "no")
	err := e.reg.Delete(t.Context(), str("guarded"), func(ids []int64) error { seen = ids; return veto })
	if err != veto {
		t.Fatalf("veto not returned: %v", err)
	}
	sort.Slice(seen, func(i, j int) bool { return seen[i] < seen[j] })
	if fmt.Sprint(seen) != "[1 2]" {
		t.Fatalf("check saw %v", seen)
	}
	if _, found := mustGet(t, e.reg, "guarded"); !found {
		t.Fatal("vetoed delete removed the snapshot")
	}
}

func TestListProducerIDs(t *testing.T) {
	e := newEnv(t, "bare")
	for _, id := range []string{"a", "b", "c"} {
		mustRegister(t, e.reg, threeBucketsTwoTables(id))
	}
	ids, err := e.store.ListProducerIDs(t.Context())
	sort.Strings(ids)
	if err != nil || strings.Join(ids, ",") != "a,b,c" {
		t.Fatal(ids, err)
	}
}

func TestTTL(t *testing.T) {
	e := newEnv(t, "bare")
	in := threeBucketsTwoTables("ttl")
	in.TTLMillis = p64(1000)
	before := e.clock.Now().UnixMilli()
	mustRegister(t, e.reg, in)
	got, _ := mustGet(t, e.reg, "ttl")
	if got.ExpirationTime != before+1000 {
		t.Fatalf("expiration %d, want %d", got.ExpirationTime, before+1000)
	}
}

func TestExpiredSnapshotIsReplacedAndStillReadable(t *testing.T) {
	e := newEnv(t, "bare")
	in := threeBucketsTwoTables("old")
	in.TTLMillis = p64(-1000) // born expired: now - 1000
	mustRegister(t, e.reg, in)
	got, found := mustGet(t, e.reg, "old")
	if !found || got.ExpirationTime != e.clock.Now().UnixMilli()-1000 {
		t.Fatalf("expired snapshots are returned until cleanup: %v %+v", found, got)
	}
	oldFiles := e.filesOnDisk(t, "old")

	fresh := producer.RegisterInput{ProducerID: str("old"), Tables: []producer.TableInput{
		{TableID: 3, Buckets: []producer.BucketInput{bucket(0, 1)}},
	}}
	if res := mustRegister(t, e.reg, fresh); res != producer.Created {
		t.Fatalf("expired snapshot not replaced: %v", res)
	}
	got, _ = mustGet(t, e.reg, "old")
	if strings.Join(flat(got.Tables), " ") != "3/-/0=1" {
		t.Fatalf("replacement offsets %v", flat(got.Tables))
	}
	for _, f := range oldFiles {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("replaced snapshot's file %s still exists", f)
		}
	}
}

func TestExpiryIsStrict(t *testing.T) {
	e := newEnv(t, "bare")
	in := threeBucketsTwoTables("edge")
	in.TTLMillis = p64(0) // expires exactly now: not yet expired
	mustRegister(t, e.reg, in)
	if res := mustRegister(t, e.reg, threeBucketsTwoTables("edge")); res != producer.AlreadyExists {
		t.Fatalf("at now == expiration the snapshot is live: %v", res)
	}
	e.clock.Advance(time.Millisecond)
	if res := mustRegister(t, e.reg, threeBucketsTwoTables("edge")); res != producer.Created {
		t.Fatalf("one ms later it is expired: %v", res)
	}
}

func TestCleanupExpired(t *testing.T) {
	e := newEnv(t, "bare")
	expired := threeBucketsTwoTables("expired")
	expired.TTLMillis = p64(-1000)
	mustRegister(t, e.reg, expired)
	mustRegister(t, e.reg, threeBucketsTwoTables("valid"))
	n, err := e.reg.CleanupExpired(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("cleanup = %d, %v; want 1", n, err)
	}
	if _, found := mustGet(t, e.reg, "expired"); found {
		t.Fatal("expired snapshot survived cleanup")
	}
	if len(e.filesOnDisk(t, "expired")) != 0 {
		t.Fatal("expired snapshot's files survived cleanup")
	}
	if _, found := mustGet(t, e.reg, "valid"); !found {
		t.Fatal("valid snapshot removed")
	}
}

func TestInvalidIDsTouchNothing(t *testing.T) {
	e := newEnv(t, "bare")
	for _, id := range []*string{nil, str(""), str("invalid/producer"), str("."), str(".."), str("invalid@producer"), str("invalid producer"), str("invalid:producer")} {
		in := threeBucketsTwoTables("x")
		in.ProducerID = id
		_, errR := e.reg.Register(t.Context(), in)
		_, _, errG := e.reg.Get(t.Context(), id)
		errD := e.reg.Delete(t.Context(), id, nil)
		for op, err := range map[string]error{"register": errR, "get": errG, "delete": errD} {
			fe, ok := flusserr.From(err)
			if !ok || fe.Code != flusserr.InvalidProducerID || !strings.HasPrefix(fe.Message, "Invalid producer ID '") {
				t.Errorf("%s %v: got %v", op, id, err)
			}
		}
	}
	ids, _ := e.store.ListProducerIDs(t.Context())
	if len(ids) != 0 {
		t.Fatalf("invalid ids wrote znodes: %v", ids)
	}
	if entries, _ := os.ReadDir(filepath.Join(e.localDir, "producers")); len(entries) != 0 {
		t.Fatalf("invalid ids wrote files: %v", entries)
	}
}

func TestBadInputIsRefusedBeforeAnyWrite(t *testing.T) {
	e := newEnv(t, "bare")
	cases := []struct {
		name   string
		tables []producer.TableInput
		code   flusserr.Code
		text   string
	}{
		{"missing offset", []producer.TableInput{{TableID: 1, Buckets: []producer.BucketInput{{BucketID: 0}}}}, -1, "no log_end_offset"},
		{"negative offset", []producer.TableInput{{TableID: 1, Buckets: []producer.BucketInput{bucket(0, -1)}}}, -1, "negative log_end_offset"},
		{"negative bucket", []producer.TableInput{{TableID: 1, Buckets: []producer.BucketInput{bucket(-2, 5)}}}, -1, "negative bucket id"},
		{"huge bucket", []producer.TableInput{{TableID: 1, Buckets: []producer.BucketInput{bucket(1<<30, 5)}}}, 49, "exceeds the maximum"},
		{"duplicate bucket", []producer.TableInput{{TableID: 1, Buckets: []producer.BucketInput{bucket(0, 5)}}, {TableID: 1, Buckets: []producer.BucketInput{bucket(0, 6)}}}, -1, "appears more than once"},
		{"mixed", []producer.TableInput{{TableID: 1, Buckets: []producer.BucketInput{bucket(0, 5), pbucket(3, 0, 6)}}}, -1, "mixes partitioned and non-partitioned"},
		// Past the few buckets whose duplicates are found by scanning, an
		// index takes over: it must hold the buckets seen before it.
		{"duplicate bucket in a large table", []producer.TableInput{{TableID: 1, Buckets: append(manyBuckets(40, false), bucket(3, 9))}}, -1, "table 1 bucket 3 appears more than once"},
		{"duplicate partitioned bucket in a large table", []producer.TableInput{{TableID: 1, Buckets: append(manyBuckets(40, true), pbucket(7, 7, 9))}}, -1, "table 1 partition 7 bucket 7 appears more than once"},
		{"duplicate across requests' entries of a large table", []producer.TableInput{{TableID: 1, Buckets: manyBuckets(40, false)}, {TableID: 1, Buckets: []producer.BucketInput{bucket(39, 1)}}}, -1, "bucket 39 appears more than once"},
		{"mixed in a large plain table", []producer.TableInput{{TableID: 1, Buckets: append(manyBuckets(40, false), pbucket(1, 1, 1))}}, -1, "mixes partitioned and non-partitioned"},
		{"mixed in a large partitioned table", []producer.TableInput{{TableID: 1, Buckets: append(manyBuckets(40, true), bucket(100, 1))}}, -1, "mixes partitioned and non-partitioned"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A good table first: it must not be written either.
			tables := append([]producer.TableInput{{TableID: 99, Buckets: []producer.BucketInput{bucket(0, 1)}}}, c.tables...)
			_, err := e.reg.Register(t.Context(), producer.RegisterInput{ProducerID: str("bad"), Tables: tables})
			fe, ok := flusserr.From(err)
			if !ok || fe.Code != c.code || !strings.Contains(fe.Message, c.text) || !strings.Contains(fe.Message, "producer bad") {
				t.Fatalf("got %v, want code %d with %q", err, c.code, c.text)
			}
			if _, found := mustGet(t, e.reg, "bad"); found {
				t.Fatal("a znode was written")
			}
			if n := len(e.filesOnDisk(t, "bad")); n != 0 {
				t.Fatalf("%d files were written", n)
			}
		})
	}
	t.Run("ttl overflow", func(t *testing.T) {
		in := threeBucketsTwoTables("bad")
		in.TTLMillis = p64(math.MaxInt64)
		_, err := e.reg.Register(t.Context(), in)
		if fe, ok := flusserr.From(err); !ok || !strings.Contains(fe.Message, "overflows") {
			t.Fatalf("got %v", err)
		}
	})
}

// manyBuckets returns n distinct buckets: ids 0..n-1, or, partitioned,
// partition i bucket i.
func manyBuckets(n int, partitioned bool) []producer.BucketInput {
	out := make([]producer.BucketInput, n)
	for i := range out {
		if partitioned {
			out[i] = pbucket(int64(i), int32(i), 1)
		} else {
			out[i] = bucket(int32(i), 1)
		}
	}
	return out
}

func TestLargeTablesWithoutDuplicatesRegister(t *testing.T) {
	e := newEnv(t, "bare")
	for _, partitioned := range []bool{false, true} {
		id := fmt.Sprintf("large-%v", partitioned)
		// The same table in two entries, 100 distinct buckets in all.
		all := manyBuckets(100, partitioned)
		tables := []producer.TableInput{{TableID: 5, Buckets: all[:60]}, {TableID: 6, Buckets: all[:3]}, {TableID: 5, Buckets: all[60:]}}
		if res, err := e.reg.Register(t.Context(), producer.RegisterInput{ProducerID: &id, Tables: tables}); err != nil || res != producer.Created {
			t.Fatalf("%s: %v %v", id, res, err)
		}
		s, found := mustGet(t, e.reg, id)
		if !found || len(s.Tables) != 2 {
			t.Fatalf("%s: %+v", id, s)
		}
		for _, tb := range s.Tables {
			if want := map[int64]int{5: 100, 6: 3}[tb.TableID]; len(tb.Buckets) != want {
				t.Fatalf("%s: table %d has %d buckets, want %d", id, tb.TableID, len(tb.Buckets), want)
			}
		}
	}
}

func TestConcurrentRegisterOneID(t *testing.T) {
	e := newEnv(t, "bare")
	// Two registries over separate ZooKeeper sessions behave like two
	// sidecars: their process-local locks do not help, only ZooKeeper does.
	other := &env{root: e.root, dir: e.dir, localDir: e.localDir, clock: e.clock}
	other.open(t)
	regs := []*producer.Registry{e.reg, other.reg}
	results := make([]producer.Result, 10)
	errs := make([]error, 10)
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = regs[i%2].Register(context.Background(), threeBucketsTwoTables("race"))
		}(i)
	}
	wg.Wait()
	created := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("register %d: %v", i, errs[i])
		}
		if results[i] == producer.Created {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("want exactly 1 CREATED, got %d: %v", created, results)
	}
	if n := len(e.filesOnDisk(t, "race")); n != 2 {
		t.Fatalf("losers must remove their files: %d files for 2 tables", n)
	}
}

func TestConcurrentRegisterDistinctIDs(t *testing.T) {
	e := newEnv(t, "bare")
	var wg sync.WaitGroup
	results := make([]producer.Result, 10)
	errs := make([]error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = e.reg.Register(context.Background(), threeBucketsTwoTables(fmt.Sprintf("p-%d", i)))
		}(i)
	}
	wg.Wait()
	for i := range results {
		if errs[i] != nil || results[i] != producer.Created {
			t.Fatalf("register %d: %v %v", i, results[i], errs[i])
		}
	}
}

func TestManyTablesAndBuckets(t *testing.T) {
	e := newEnv(t, "bare")
	in := producer.RegisterInput{ProducerID: str("big")}
	for tb := int64(0); tb < 100; tb++ {
		ti := producer.TableInput{TableID: tb}
		for b := int32(0); b < 10; b++ {
			ti.Buckets = append(ti.Buckets, bucket(b, tb*1000+int64(b)))
		}
		in.Tables = append(in.Tables, ti)
	}
	mustRegister(t, e.reg, in)
	got, _ := mustGet(t, e.reg, "big")
	n := 0
	for _, tbl := range got.Tables {
		for _, b := range tbl.Buckets {
			n++
			if b.LogEndOffset != tbl.TableID*1000+int64(b.BucketID) {
				t.Fatalf("table %d bucket %d = %d", tbl.TableID, b.BucketID, b.LogEndOffset)
			}
			if tbl.TableID == 50 && b.BucketID == 5 && b.LogEndOffset != 50005 {
				t.Fatal("table 50 bucket 5")
			}
		}
	}
	if n != 1000 {
		t.Fatalf("want 1000 offsets, got %d", n)
	}
}

// javaEnv writes a snapshot as a Java coordinator would: the znode's raw
// bytes (through a plain ZooKeeper connection) and the offsets file at the
// path the znode names, in the path form under test.
func TestReadsSnapshotsWrittenByJava(t *testing.T) {
	e := newEnv(t, "bare")
	conn := zktest.RawConn(t, zkAddr)
	forms := map[string]func(p string) string{
		"bare":       func(p string) string { return p },             // W1: Java with remote.data.dir=/tmp/...
		"file-colon": func(p string) string { return "file:" + p },   // Java with file:///...
		"file-slash": func(p string) string { return "file://" + p }, // a hand-written file:///
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			id := "java-" + name
			rel := filepath.Join("producers", id, "7", "550e8400-e29b-41d4-a716-446655440000.offsets")
			abs := filepath.Join(e.localDir, rel)
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(abs, []byte(`{"version":1,"table_id":7,"bucket_offsets":[100,-1,300]}`), 0o644); err != nil {
				t.Fatal(err)
			}
			data := fmt.Sprintf(`{"version":1,"expiration_time":4102444800000,"tables":[{"table_id":7,"offsets_path":"%s"}]}`, form(abs))
			for _, p := range []string{e.root, e.root + "/producers"} {
				conn.Create(p, nil, 0, gozk.WorldACL(gozk.PermAll))
			}
			if _, err := conn.Create(e.root+"/producers/"+id, []byte(data), 0, gozk.WorldACL(gozk.PermAll)); err != nil {
				t.Fatal(err)
			}
			got, found := mustGet(t, e.reg, id)
			if !found || got.ExpirationTime != 4102444800000 || strings.Join(flat(got.Tables), " ") != "7/-/0=100 7/-/2=300" {
				t.Fatalf("found=%v %+v", found, flat(got.Tables))
			}
			if res := mustRegister(t, e.reg, threeBucketsTwoTables(id)); res != producer.AlreadyExists {
				t.Fatalf("a live Java snapshot must not be overwritten: %v", res)
			}
			if err := e.reg.Delete(t.Context(), str(id), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(abs); !os.IsNotExist(err) {
				t.Fatalf("delete left the Java-written file: %v", err)
			}
		})
	}
}

func TestGetOfBrokenSnapshotIsAClearError(t *testing.T) {
	e := newEnv(t, "bare")
	mustRegister(t, e.reg, threeBucketsTwoTables("broken"))
	for _, f := range e.filesOnDisk(t, "broken") {
		os.Remove(f)
	}
	_, _, err := e.reg.Get(t.Context(), str("broken"))
	fe, ok := flusserr.From(err)
	if !ok || fe.Code != flusserr.UnknownServerError || !strings.Contains(fe.Message, "offsets file not found") {
		t.Fatalf("got %v", err)
	}
	// Delete still works on a broken snapshot.
	if err := e.reg.Delete(t.Context(), str("broken"), nil); err != nil {
		t.Fatal(err)
	}
}

// TestZnodeTableOrder: the znode lists the tables in the order a Fluss
// coordinator writes for the same request. The expected orders were printed
// by javaorder/testdata/java/OrderOracle.java (a real java.util.HashMap).
func TestZnodeTableOrder(t *testing.T) {
	type b struct {
		table     int64
		partition *int64
		bucket    int32
	}
	p := func(v int64) *int64 { return &v }
	cases := []struct {
		name    string
		buckets []b // one table entry per element, in wire order
		want    []int64
	}{
		{"spec ids, one bucket each", []b{{2, nil, 0}, {17, nil, 0}, {100, nil, 0}, {200, nil, 0}, {1, nil, 0}}, []int64{1, 17, 2, 100, 200}},
		{"a table sent twice", []b{{17, nil, 0}, {1, nil, 0}, {17, nil, 1}, {33, nil, 0}}, []int64{33, 1, 17}},
		{"13 tables then more buckets", []b{{0, nil, 0}, {1, nil, 0}, {2, nil, 0}, {3, nil, 0}, {4, nil, 0}, {5, nil, 0}, {6, nil, 0},
			{7, nil, 0}, {8, nil, 0}, {9, nil, 0}, {10, nil, 0}, {11, nil, 0}, {16, nil, 0}, {5, nil, 1}, {5, nil, 2}, {5, nil, 3}},
			[]int64{0, 16, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"partitions and a negative id", []b{{7, p(3), 0}, {7, p(3), 1}, {-4, nil, 0}, {9, p(-1), 2}}, []int64{-4, 7, 9}},
	}
	e := newEnv(t, "bare")
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("order-%d", i)
			in := producer.RegisterInput{ProducerID: str(id)}
			for _, x := range c.buckets {
				in.Tables = append(in.Tables, producer.TableInput{TableID: x.table, Buckets: []producer.BucketInput{
					{PartitionID: x.partition, BucketID: x.bucket, LogEndOffset: p(int64(x.bucket) + 10)},
				}})
			}
			if res := mustRegister(t, e.reg, in); res != producer.Created {
				t.Fatal(res)
			}
			raw, err := e.store.RawSnapshot(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			s, err := flussjson.DecodeSnapshot(raw)
			if err != nil {
				t.Fatal(err)
			}
			var got []int64
			for _, ref := range s.Tables {
				got = append(got, ref.TableID)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("znode tables %v, want %v (%s)", got, c.want, raw)
			}
		})
	}
}
