package producer

import (
	"fmt"
	"math"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// normalizeBefore is normalize as it was written before it was split into
// a bucket set and a loop: one function of closures. It is kept only so
// TestNormalizeSameAsBefore and FuzzNormalizeSameAsBefore can prove the
// split changed nothing a caller sees.
func normalizeBefore(producerID string, tables []TableInput) ([]offsets.TableOffsets, *flusserr.Error) {
	type bucketKey struct {
		partitioned bool
		partition   int64
		bucket      int32
	}
	bad := func(format string, args ...any) *flusserr.Error {
		return (&apierr.Error{Class: apierr.ErrInvalidOffsets, ProducerID: producerID, Detail: fmt.Sprintf(format, args...)}).Fluss()
	}
	index := map[int64]int{}
	// Buckets seen so far, per table, for the duplicate check: the table's
	// own list while it is short (most tables of a register have a few
	// buckets), then a bitset of bucket ids for plain buckets (16 KiB per
	// table) or a map for partitioned ones. A map per bucket cost ~50 bytes
	// each for a million-bucket request.
	type seenSet struct {
		plain []uint64
		parts map[bucketKey]bool
	}
	add := func(ss *seenSet, k bucketKey) {
		if k.partitioned {
			ss.parts[k] = true
		} else {
			ss.plain[k.bucket/64] |= 1 << (k.bucket % 64)
		}
	}
	has := func(ss *seenSet, k bucketKey) bool {
		if k.partitioned {
			return ss.parts[k]
		}
		return ss.plain[k.bucket/64]&(1<<(k.bucket%64)) != 0
	}
	seen := map[int64]*seenSet{}
	var out []offsets.TableOffsets
	// adopted: tables whose ByBucket is still an input entry's own array,
	// to be copied before another entry's buckets are merged into it.
	adopted := map[int64]bool{}
	// check applies the per-bucket rules that need nothing but the bucket.
	check := func(tableID int64, b BucketInput) *flusserr.Error {
		if b.LogEndOffset == nil {
			return bad("table %d bucket %d has no log_end_offset", tableID, b.BucketID)
		}
		if *b.LogEndOffset < 0 {
			return bad("table %d bucket %d has negative log_end_offset %d", tableID, b.BucketID, *b.LogEndOffset)
		}
		if b.BucketID < 0 {
			return bad("table %d has negative bucket id %d", tableID, b.BucketID)
		}
		if b.BucketID > MaxBucketID {
			return (&apierr.Error{Class: apierr.ErrBucketOutOfRange, ProducerID: producerID,
				TableID: tableID, BucketID: b.BucketID, MaxBucketID: MaxBucketID}).Fluss()
		}
		return nil
	}
	// addBucket checks one bucket of a table held as a list, and appends it.
	addBucket := func(tableID int64, b BucketInput, sizeHint int) *flusserr.Error {
		if err := check(tableID, b); err != nil {
			return err
		}
		k := bucketKey{bucket: b.BucketID}
		if b.PartitionID != nil {
			k.partitioned, k.partition = true, *b.PartitionID
		}
		i, ok := index[tableID]
		if !ok {
			i = len(out)
			index[tableID] = i
			out = append(out, offsets.TableOffsets{TableID: tableID, Buckets: make([]offsets.BucketOffset, 0, sizeHint)})
		}
		if out[i].ByBucket != nil {
			// Held as an array by an earlier entry: now a list, since this
			// entry is not of that form.
			out[i] = out[i].InFileOrder()
			delete(adopted, tableID)
		}
		prev := out[i].Buckets
		// A table's buckets are all of one kind, so a duplicate is only
		// looked for among buckets of the kind k is.
		if len(prev) > 0 && prev[0].Partitioned != k.partitioned {
			return bad("table %d mixes partitioned and non-partitioned buckets", tableID)
		}
		ss := seen[tableID]
		if ss == nil && len(prev) >= 32 {
			// The table has grown: index what it holds so far.
			ss = &seenSet{}
			if k.partitioned {
				ss.parts = make(map[bucketKey]bool, 2*len(prev))
			} else {
				ss.plain = make([]uint64, (MaxBucketID+64)/64)
			}
			for _, p := range prev {
				add(ss, bucketKey{partitioned: p.Partitioned, partition: p.PartitionID, bucket: p.BucketID})
			}
			seen[tableID] = ss
		}
		var dup bool
		if ss != nil {
			dup = has(ss, k)
		} else {
			for _, p := range prev {
				if p.BucketID == k.bucket && p.Partitioned == k.partitioned && p.PartitionID == k.partition {
					dup = true
					break
				}
			}
		}
		if dup {
			if k.partitioned {
				return bad("table %d partition %d bucket %d appears more than once", tableID, k.partition, k.bucket)
			}
			return bad("table %d bucket %d appears more than once", tableID, k.bucket)
		}
		if ss != nil {
			add(ss, k)
		}
		out[i].Buckets = append(out[i].Buckets, offsets.BucketOffset{
			Partitioned: k.partitioned, PartitionID: k.partition, BucketID: k.bucket, LogEndOffset: *b.LogEndOffset,
		})
		return nil
	}
	// addArray checks the buckets of an entry given ByBucket, in the order
	// they were sent, and keeps them as an array when the table is one.
	addArray := func(t TableInput) *flusserr.Error {
		i, ok := index[t.TableID]
		if ok && out[i].ByBucket == nil {
			return eachBefore(t, func(b BucketInput) *flusserr.Error { return addBucket(t.TableID, b, 0) })
		}
		var dst []int64
		if ok {
			dst = out[i].ByBucket
		}
		last := -1 // the highest id of the entry's buckets
		for id, v := range t.ByBucket {
			if v == -1 {
				continue
			}
			off := v
			if err := check(t.TableID, BucketInput{BucketID: int32(min(id, math.MaxInt32)), LogEndOffset: &off}); err != nil {
				return err
			}
			if id < len(dst) && dst[id] != -1 {
				return bad("table %d bucket %d appears more than once", t.TableID, id)
			}
			last = id
		}
		switch {
		case last < 0: // no buckets: the entry adds nothing, as in Fluss
		case !ok:
			index[t.TableID] = len(out)
			out = append(out, offsets.TableOffsets{TableID: t.TableID, ByBucket: t.ByBucket[:last+1]})
			adopted[t.TableID] = true
		default:
			if adopted[t.TableID] || last >= len(dst) {
				grown := make([]int64, max(len(dst), last+1))
				copy(grown, dst)
				for id := len(dst); id < len(grown); id++ {
					grown[id] = -1
				}
				dst = grown
				delete(adopted, t.TableID)
			}
			for id, v := range t.ByBucket[:last+1] {
				if v != -1 {
					dst[id] = v
				}
			}
			out[i].ByBucket = dst
		}
		return nil
	}
	for _, t := range tables {
		if t.ByBucket != nil {
			if err := addArray(t); err != nil {
				return nil, err
			}
			continue
		}
		for _, b := range t.Buckets {
			if err := addBucket(t.TableID, b, len(t.Buckets)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// eachBefore is TableInput's each as normalizeBefore called it: f for
// every bucket of the entry in the order they were sent.
func eachBefore(t TableInput, f func(BucketInput) *flusserr.Error) *flusserr.Error {
	if t.ByBucket == nil {
		for _, b := range t.Buckets {
			if err := f(b); err != nil {
				return err
			}
		}
		return nil
	}
	for id, v := range t.ByBucket {
		if v == -1 {
			continue
		}
		off := v
		if err := f(BucketInput{BucketID: int32(min(id, math.MaxInt32)), LogEndOffset: &off}); err != nil {
			return err
		}
	}
	return nil
}
