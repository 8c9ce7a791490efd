package storetest

import (
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

func dir(path string) string { return path[:strings.LastIndex(path, "/")+1] }

func sameOffsets(a, b offsets.TableOffsets) bool {
	return a.TableID == b.TableID && slices.Equal(a.Buckets, b.Buckets)
}

// WriteOffsets writes Fluss's exact bytes to a new file in the directory
// PlannedPath names, at a path of PlannedPath's length, which ReadOffsets
// reads back; files another writer left are read alike, and offsets Fluss
// would misread are refused before anything is written.
func testFileRoundTrip(e *env) {
	var written []string
	for _, t := range []offsets.TableOffsets{
		tablePlain, tablePartitioned, tableByBucket,
		{TableID: 1},
		{TableID: 1 << 40, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: 1 << 50}}},
	} {
		path := e.write("p-1", t) // checks the bytes
		written = append(written, path)
		planned := e.f.PlannedPath("p-1", t.TableID)
		if len(path) != len(planned) || dir(path) != dir(planned) {
			e.t.Errorf("WriteOffsets wrote %s; PlannedPath is %s: want the same length and directory", path, planned)
		}
		got, err := e.f.ReadOffsets(e.ctx, path)
		if err != nil || !sameOffsets(got, t.InFileOrder()) {
			e.t.Errorf("ReadOffsets(%s) = %+v, %v; want %+v", path, got, err, t.InFileOrder())
		}
		if o := e.h.Orphans(); o != nil {
			if q, err := o.Qualify(path); err != nil || q != path {
				e.t.Errorf("Qualify(%s) = %s, %v; want it unchanged", path, q, err)
			}
		}
	}
	again := e.write("p-1", tablePlain)
	if slices.Contains(written, again) {
		e.t.Errorf("a second file of one table has the first one's path %s", again)
	}
	written = append(written, again)
	slices.Sort(written)
	if files := e.rawFiles(); !slices.Equal(files, written) {
		e.t.Errorf("the backend holds %q, want what was written: %q", files, written)
	}

	// Files a coordinator wrote (docs/storage-format.md §6).
	for i, c := range []struct {
		data string
		want offsets.TableOffsets
	}{
		{`{"version":1,"table_id":5,"bucket_offsets":[100,-1,300,-1,500]}`, offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{
			{BucketID: 0, LogEndOffset: 100}, {BucketID: 2, LogEndOffset: 300}, {BucketID: 4, LogEndOffset: 500}}}},
		{`{"version":1,"table_id":6,"partition_offsets":[{"partition_id":1,"bucket_offsets":[100,200]},{"partition_id":2,"bucket_offsets":[300,400]}]}`,
			offsets.TableOffsets{TableID: 6, Buckets: []offsets.BucketOffset{
				{Partitioned: true, PartitionID: 1, BucketID: 0, LogEndOffset: 100}, {Partitioned: true, PartitionID: 1, BucketID: 1, LogEndOffset: 200},
				{Partitioned: true, PartitionID: 2, BucketID: 0, LogEndOffset: 300}, {Partitioned: true, PartitionID: 2, BucketID: 1, LogEndOffset: 400}}}},
		{`{"version":1,"table_id":1}`, offsets.TableOffsets{TableID: 1}},
		// Offsets below -1 and a bucket id past flussjson.MaxBucketID, which
		// a coordinator stores and answers and the sidecar does not write.
		{`{"version":1,"table_id":5,"bucket_offsets":[-1,-5,7,-9223372036854775808]}`, offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{
			{BucketID: 1, LogEndOffset: -5}, {BucketID: 2, LogEndOffset: 7}, {BucketID: 3, LogEndOffset: math.MinInt64}}}},
		{`{"version":1,"table_id":5,"bucket_offsets":[` + strings.Repeat("-1,", flussjson.MaxBucketID+1) + `9]}`, offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{
			{BucketID: flussjson.MaxBucketID + 1, LogEndOffset: 9}}}},
	} {
		path := e.plantedPath("p-2", c.want.TableID, i)
		e.plant(path, []byte(c.data))
		if got, err := e.f.ReadOffsets(e.ctx, path); err != nil || !sameOffsets(got, c.want) {
			e.t.Errorf("ReadOffsets of a coordinator's %s = %+v, %v; want %+v", c.data, got, err, c.want)
		}
	}

	files := e.rawFiles()
	for _, bad := range []offsets.TableOffsets{
		{TableID: 1, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: -1}}},
		{TableID: 1, Buckets: []offsets.BucketOffset{{BucketID: -1, LogEndOffset: 1}}},
		{TableID: 1, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: 1}, {Partitioned: true, BucketID: 1, LogEndOffset: 1}}},
		{TableID: 1, ByBucket: []int64{1, -2}},
	} {
		if _, err := e.f.WriteOffsets(e.ctx, "p-1", bad); !errors.Is(err, flussjson.ErrInvalidOffsets) {
			e.t.Errorf("WriteOffsets of %+v: %v, want flussjson.ErrInvalidOffsets", bad, err)
		}
	}
	if after := e.rawFiles(); !slices.Equal(after, files) {
		e.t.Errorf("refused writes left files: %q, before %q", after, files)
	}
}

// DeleteOffsets removes the file for good; a second delete is no error.
func testDeleteOffsets(e *env) {
	keep := e.write("p", tablePartitioned)
	stores := []struct {
		name string
		del  func(path string) error
	}{
		{"FileStore", func(p string) error { return e.f.DeleteOffsets(e.ctx, p) }},
	}
	if o := e.h.Orphans(); o != nil {
		stores = append(stores, struct {
			name string
			del  func(path string) error
		}{"OrphanStore", func(p string) error { return o.DeleteOffsets(e.ctx, p) }})
	}
	for _, s := range stores {
		path := e.write("p", tablePlain)
		if _, err := e.f.ReadOffsets(e.ctx, path); err != nil {
			e.t.Fatal(err) // so that a cache holds it
		}
		if err := s.del(path); err != nil {
			e.t.Fatalf("%s.DeleteOffsets: %v", s.name, err)
		}
		if e.rawFileExists(path) {
			e.t.Errorf("%s.DeleteOffsets left the file", s.name)
		}
		if s.name == "FileStore" {
			if _, err := e.f.ReadOffsets(e.ctx, path); !isNotFound(err) {
				e.t.Errorf("ReadOffsets after DeleteOffsets: %v, want storage.ErrNotFound", err)
			}
		}
		if err := s.del(path); err != nil {
			e.t.Errorf("%s.DeleteOffsets a second time: %v", s.name, err)
		}
	}
	if !e.rawFileExists(keep) {
		e.t.Error("another file was deleted")
	}
}

// A path that is not a file in a table directory of the producers
// directory is refused with ErrOutsidePath, and nothing is deleted.
func testOutsidePath(e *env) {
	path := e.write("p", tablePlain)
	files := e.rawFiles()
	producers := path[:strings.Index(path, "/producers/")+len("/producers/")]
	for _, bad := range []string{
		"",
		"/etc/passwd",
		strings.TrimSuffix(dir(path), "/"), // the table directory
		dir(path),                          // the same, with a slash
		dir(strings.TrimSuffix(dir(path), "/")) + "x.offsets", // a file in the producer directory
		path + "/x.offsets",                  // one level too deep
		producers + "../secrets/1/x.offsets", // out by ".."
		strings.Replace(path, "/producers/", "/producers-other/", 1),
		strings.Replace(path, "/producers/", "/other/producers/", 1),
		strings.TrimSuffix(producers, "/"),
	} {
		if _, err := e.f.ReadOffsets(e.ctx, bad); !errors.Is(err, storage.ErrOutsidePath) {
			e.t.Errorf("ReadOffsets(%q): %v, want storage.ErrOutsidePath", bad, err)
		}
		if err := e.f.DeleteOffsets(e.ctx, bad); !errors.Is(err, storage.ErrOutsidePath) {
			e.t.Errorf("DeleteOffsets(%q): %v, want storage.ErrOutsidePath", bad, err)
		}
		if o := e.h.Orphans(); o != nil {
			if q, err := o.Qualify(bad); !errors.Is(err, storage.ErrOutsidePath) {
				e.t.Errorf("Qualify(%q) = %q, %v; want storage.ErrOutsidePath", bad, q, err)
			}
			if err := o.DeleteOffsets(e.ctx, bad); !errors.Is(err, storage.ErrOutsidePath) {
				e.t.Errorf("OrphanStore.DeleteOffsets(%q): %v, want storage.ErrOutsidePath", bad, err)
			}
		}
	}
	if after := e.rawFiles(); !slices.Equal(after, files) {
		e.t.Errorf("files changed: %q, before %q", after, files)
	}
}

// The OrphanStore lists the producer directories and their files, whoever
// wrote them, in the qualified form WriteOffsets returns, and prunes a
// producer's directories once its files are gone.
func testOrphans(e *env) {
	o := e.h.Orphans()
	if o == nil {
		e.t.Skip("the store has no OrphanStore")
	}
	listDirs := func(want ...string) {
		e.t.Helper()
		dirs, err := o.ListProducerDirs(e.ctx)
		if err != nil || !slices.Equal(dirs, want) && !(len(dirs) == 0 && len(want) == 0) {
			e.t.Errorf("ListProducerDirs = %q, %v; want %q", dirs, err, want)
		}
	}
	listDirs()
	p1a := e.write("p1", offsets.TableOffsets{TableID: 1, Buckets: tablePlain.Buckets})
	p1b := e.write("p1", offsets.TableOffsets{TableID: 2, Buckets: tablePlain.Buckets})
	p2 := e.write("p2", tablePlain)
	p3 := e.plantedPath("p3", 3, 1)
	e.plant(p3, mustEncode(offsets.TableOffsets{TableID: 3}))
	listDirs("p1", "p2", "p3")

	files, err := o.ListProducerFiles(e.ctx, "p1")
	if err != nil || len(files) != 2 {
		e.t.Fatalf("ListProducerFiles(p1) = %+v, %v; want two files", files, err)
	}
	want := []storage.FileInfo{{Path: p1a, TableDir: "1"}, {Path: p1b, TableDir: "2"}}
	slices.SortFunc(want, func(a, b storage.FileInfo) int { return strings.Compare(a.Path, b.Path) })
	for i, f := range files {
		if f.Path != want[i].Path || f.TableDir != want[i].TableDir || f.ModTime.IsZero() {
			e.t.Errorf("ListProducerFiles(p1)[%d] = %+v, want %+v with a modification time", i, f, want[i])
		}
	}
	if files, err := o.ListProducerFiles(e.ctx, "p3"); err != nil || len(files) != 1 || files[0].Path != p3 || files[0].TableDir != "3" {
		e.t.Errorf("ListProducerFiles(p3) = %+v, %v; want the planted %s", files, err, p3)
	}
	if files, err := o.ListProducerFiles(e.ctx, "nobody"); err != nil || len(files) != 0 {
		e.t.Errorf("ListProducerFiles(nobody) = %+v, %v; want none", files, err)
	}

	if gone, err := o.PruneEmptyDirs(e.ctx, "p1"); err != nil || gone {
		e.t.Errorf("PruneEmptyDirs of a producer with files = %v, %v; want false", gone, err)
	}
	for _, p := range []string{p1a, p1b} {
		if err := o.DeleteOffsets(e.ctx, p); err != nil {
			e.t.Fatal(err)
		}
	}
	if gone, err := o.PruneEmptyDirs(e.ctx, "p1"); err != nil || !gone {
		e.t.Errorf("PruneEmptyDirs once its files are deleted = %v, %v; want true", gone, err)
	}
	listDirs("p2", "p3")
	if gone, err := o.PruneEmptyDirs(e.ctx, "nobody"); err != nil || !gone {
		e.t.Errorf("PruneEmptyDirs(nobody) = %v, %v; want true", gone, err)
	}
	if !e.rawFileExists(p2) || !e.rawFileExists(p3) {
		e.t.Error("pruning p1 removed other producers' files")
	}
}
