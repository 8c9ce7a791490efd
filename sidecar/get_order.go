package sidecar

import (
	"sort"

	"github.com/fluss-sidecar/fluss-sidecar/javaorder"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// coordinatorAnswer returns the tables a GET answer lists, in the order a
// Fluss 0.9.1 coordinator on JDK 17 lists them, given a snapshot's tables
// as the registry reads them (znode order, each file's buckets in file
// order). A coordinator reads every file into Java HashMaps, merges them
// into one and groups that by table (javaorder.CoordinatorGetOrder,
// docs/storage-format.md §7.3), so:
//   - tables and buckets come in those maps' iteration order;
//   - a table whose file holds no bucket has no entry (a coordinator writes
//     a file of holes only for log end offsets of -1, which read back as
//     absent, §6);
//   - a table named twice by the znode is one entry with the buckets of
//     both files, a bucket in both carrying the later file's offset.
//
// The result shares nothing with tables. Authorization comes after: a
// coordinator removes the tables the principal may not READ from the
// grouped map, which leaves the others in their order (keptTables).
func coordinatorAnswer(tables []offsets.TableOffsets) []offsets.TableOffsets {
	n := 0
	for _, t := range tables {
		n += len(t.Buckets)
	}
	if n == 0 {
		return nil
	}
	flat := make([]javaorder.Bucket, n)
	files := make([][]javaorder.Bucket, len(tables))
	starts := make([]int, len(tables)) // each file's first index in flat
	k := 0
	for i, t := range tables {
		starts[i] = k
		for _, b := range t.Buckets {
			flat[k] = javaorder.Bucket{TableID: t.TableID, Partitioned: b.Partitioned, PartitionID: b.PartitionID, BucketID: b.BucketID}
			k++
		}
		files[i] = flat[starts[i]:k:k]
	}
	a := javaorder.CoordinatorGetOrder(files)
	out := make([]offsets.TableOffsets, len(a.Tables))
	buckets := make([]offsets.BucketOffset, len(a.Buckets))
	for i, idx := range a.Buckets {
		// The last file starting at or before idx holds it.
		f := sort.Search(len(starts), func(j int) bool { return starts[j] > idx }) - 1
		buckets[i] = tables[f].Buckets[idx-starts[f]]
	}
	start := 0
	for i, t := range a.Tables {
		out[i] = offsets.TableOffsets{TableID: t.ID, Buckets: buckets[start:t.End:t.End]}
		start = t.End
	}
	return out
}

// keptTables returns the tables keep admits (all of them if keep is nil),
// in their order. It returns tables itself when it leaves none out.
func keptTables(tables []offsets.TableOffsets, keep func(tableID int64) bool) []offsets.TableOffsets {
	for i, t := range tables {
		if answered(t, keep) {
			continue
		}
		out := make([]offsets.TableOffsets, i, len(tables)-1)
		copy(out, tables)
		for _, t := range tables[i+1:] {
			if answered(t, keep) {
				out = append(out, t)
			}
		}
		return out
	}
	return tables
}

// answered reports whether a GET answer lists table t, one of
// coordinatorAnswer's: keep admits it. A table without buckets, which
// coordinatorAnswer never returns, is never listed, nor authorized.
func answered(t offsets.TableOffsets, keep func(tableID int64) bool) bool {
	return len(t.Buckets) > 0 && (keep == nil || keep(t.TableID))
}
