// Package offsets holds the plain data types of the producer offsets
// registry, shared by the storage wing (storage and the stores beneath it)
// and the registry logic (producer). It does no I/O; their bytes on
// ZooKeeper and remote storage are package flussjson's.
package offsets

import (
	"cmp"
	"slices"
)

// BucketOffset is the log end offset a producer recorded for one bucket. For
// a partitioned table Partitioned is true and PartitionID names the
// partition; otherwise PartitionID is ignored.
type BucketOffset struct {
	// Fields ordered largest first: 24 bytes instead of 32, which is 8 MB
	// less for a million-bucket register.
	PartitionID  int64
	LogEndOffset int64
	BucketID     int32
	Partitioned  bool
}

// TableOffsets is every bucket offset a snapshot holds for one table: the
// content of one offsets file.
//
// A writer may give a non-partitioned table's offsets as ByBucket instead of
// Buckets: the offsets indexed by bucket id, -1 where the table has no
// bucket, which is the offsets file's own layout and costs 8 bytes a bucket
// id instead of 24 a bucket (a million-bucket register is 16 MB smaller).
// At most one of the two is set. Reads (a store's ReadOffsets, the decoder)
// always give Buckets; InFileOrder turns one form into the other.
type TableOffsets struct {
	TableID  int64
	Buckets  []BucketOffset
	ByBucket []int64
}

// Len is the number of buckets t holds, in either form.
func (t TableOffsets) Len() int {
	if t.ByBucket == nil {
		return len(t.Buckets)
	}
	n := 0
	for _, v := range t.ByBucket {
		if v >= 0 {
			n++
		}
	}
	return n
}

// InFileOrder returns t as reading its offsets file back gives it
// (flussjson.DecodeTableOffsets): Buckets sorted by partition id, then bucket
// id, with no partition id on a non-partitioned bucket, and no ByBucket.
// The result shares nothing with t, which is unchanged.
func (t TableOffsets) InFileOrder() TableOffsets {
	if t.ByBucket != nil {
		out := TableOffsets{TableID: t.TableID, Buckets: make([]BucketOffset, 0, t.Len())}
		for id, v := range t.ByBucket {
			if v >= 0 {
				out.Buckets = append(out.Buckets, BucketOffset{BucketID: int32(id), LogEndOffset: v})
			}
		}
		return out
	}
	out := TableOffsets{TableID: t.TableID, Buckets: slices.Clone(t.Buckets)}
	for i := range out.Buckets {
		if !out.Buckets[i].Partitioned {
			out.Buckets[i].PartitionID = 0
		}
	}
	slices.SortFunc(out.Buckets, compareInFile)
	return out
}

// IsInFileOrder reports whether t is already as InFileOrder returns it, so
// that a copy of it would be equal to it.
func (t TableOffsets) IsInFileOrder() bool {
	if t.ByBucket != nil {
		return false
	}
	for i, b := range t.Buckets {
		if !b.Partitioned && b.PartitionID != 0 {
			return false
		}
		if i > 0 && compareInFile(t.Buckets[i-1], b) >= 0 {
			return false
		}
	}
	return true
}

func compareInFile(a, b BucketOffset) int {
	return cmp.Or(cmp.Compare(a.PartitionID, b.PartitionID), cmp.Compare(a.BucketID, b.BucketID))
}

// FileRef is one entry of a producer znode's "tables" list: the table and the
// fully qualified path (FsPath string) of its offsets file.
type FileRef struct {
	TableID     int64
	OffsetsPath string
}

// Snapshot is the content of a producer znode, /producers/<id>.
type Snapshot struct {
	// ExpirationTime is in epoch milliseconds.
	ExpirationTime int64
	Tables         []FileRef
}

// Expired reports whether the snapshot is expired at nowMillis. As in Fluss,
// a snapshot is expired only strictly after its expiration time.
func (s Snapshot) Expired(nowMillis int64) bool { return nowMillis > s.ExpirationTime }

// Incarnation identifies one life of a znode: ZooKeeper's creation zxid
// tells apart two znodes created one after the other at the same path, which
// the data version alone cannot (a producer znode's version is always 0).
type Incarnation struct {
	Czxid   int64
	Version int32
}

// Equal reports whether s and o have the same expiration time and name the
// same files for the same tables, in the same order. Offsets file names
// hold random UUIDs, so two snapshots with files are equal only when they
// are the same write.
func (s Snapshot) Equal(o Snapshot) bool {
	if s.ExpirationTime != o.ExpirationTime || len(s.Tables) != len(o.Tables) {
		return false
	}
	for i := range s.Tables {
		if s.Tables[i] != o.Tables[i] {
			return false
		}
	}
	return true
}
