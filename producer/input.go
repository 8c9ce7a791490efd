package producer

import (
	"fmt"
	"math"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/javaorder"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// MaxBucketID is the largest bucket id a register may name. An offsets file
// stores a non-partitioned table as an array indexed by bucket id, so a huge
// id would make a huge file of -1 padding (weakness W9). Fluss's own
// max.bucket.num default is 128000, so every real bucket id fits.
const MaxBucketID = 131071

// RegisterInput is one register request after decoding from the wire.
type RegisterInput struct {
	ProducerID *string
	// Tables as sent; the same table may appear more than once (the buckets
	// are merged, as Fluss does).
	Tables []TableInput
	// TTLMillis overrides the registry default when set. Zero or negative is
	// allowed: the snapshot is born expired, as in Fluss.
	TTLMillis *int64
}

// TableInput is one PbProducerTableOffsets entry.
type TableInput struct {
	TableID int64
	Buckets []BucketInput
	// ByBucket, when not nil, holds the entry's buckets instead of Buckets,
	// in the offsets file's layout: the log_end_offset of each bucket id, -1
	// for an id the entry does not name. It stands for buckets that were
	// sent in ascending bucket id order, none partitioned and each with a
	// log_end_offset, which is how Fluss clients send a table; a decoder
	// uses it for those, at 8 bytes a bucket id instead of 32 a bucket, and
	// normalize keeps the array instead of copying it. Its buckets are
	// checked as Buckets' are.
	ByBucket []int64
}

// each calls f for every bucket of the entry in the order they were sent.
func (t TableInput) each(f func(BucketInput) *flusserr.Error) *flusserr.Error {
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

// count is the number of buckets of the entry.
func (t TableInput) count() int {
	if t.ByBucket == nil {
		return len(t.Buckets)
	}
	n := 0
	for _, v := range t.ByBucket {
		if v != -1 {
			n++
		}
	}
	return n
}

// BucketInput is one PbBucketOffset entry; nil pointers are absent fields.
type BucketInput struct {
	PartitionID  *int64
	BucketID     int32
	LogEndOffset *int64
}

// linearDupCheck is the bucket count up to which normalize finds a
// table's duplicate buckets by scanning its list rather than an index.
const linearDupCheck = 32

// normalize checks a register request and groups its buckets by table. The
// rules, each stricter than or equal to Fluss (which fails late, after
// writing files, or silently stores something it cannot read back):
//   - a bucket without log_end_offset is refused (Fluss: -1 after writing);
//   - a negative log_end_offset is refused: the file format reads -1 as
//     "absent", so it could never be read back;
//   - a negative bucket id is refused (Fluss writes it at index 0 and reads it
//     back as bucket 0);
//   - a bucket id above MaxBucketID is refused with code 49;
//   - the same bucket twice is refused (Fluss keeps one silently);
//   - partitioned and non-partitioned buckets in one table are refused
//     (Fluss: -1 after writing and deleting files);
//   - a table entry with no buckets is dropped, as in Fluss.
//
// All of these are code -1 (UNKNOWN_SERVER_ERROR, the code Fluss answers for
// the same input, and not retriable) with a message that names the problem:
// apierr's answers to ErrInvalidOffsets and ErrBucketOutOfRange.
// Tables keep the order of their first appearance.
func normalize(producerID string, tables []TableInput) ([]offsets.TableOffsets, *flusserr.Error) {
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
		if ss == nil && len(prev) >= linearDupCheck {
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
			return t.each(func(b BucketInput) *flusserr.Error { return addBucket(t.TableID, b, 0) })
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

// coordinatorOrder puts the tables normalize returned into the order a Fluss
// coordinator lists them in the znode for the same request (see
// javaorder.CoordinatorTableOrder), which depends on every bucket of the
// request in wire order, not only on the order tables first appear. exact is
// false in the rare requests where Java's tree bins decide the order; the
// tables then keep the model's best guess.
func coordinatorOrder(in []TableInput, tables []offsets.TableOffsets) (ordered []offsets.TableOffsets, exact bool) {
	// Usually the order follows from the table ids alone; modelling the
	// coordinator's map of every bucket costs far more memory than the
	// request (a million buckets: hundreds of MB).
	ids := make([]int64, len(tables))
	for i, t := range tables {
		ids[i] = t.TableID
	}
	if order, ok := javaorder.TableOrderByBins(ids); ok {
		byID := make(map[int64]int, len(tables))
		for i, t := range tables {
			byID[t.TableID] = i
		}
		ordered = make([]offsets.TableOffsets, 0, len(tables))
		for _, id := range order {
			ordered = append(ordered, tables[byID[id]])
		}
		return ordered, true
	}
	n := 0
	for _, t := range in {
		n += t.count()
	}
	buckets := make([]javaorder.Bucket, 0, n)
	for _, t := range in {
		t.each(func(b BucketInput) *flusserr.Error {
			jb := javaorder.Bucket{TableID: t.TableID, BucketID: b.BucketID}
			if b.PartitionID != nil {
				jb.Partitioned, jb.PartitionID = true, *b.PartitionID
			}
			buckets = append(buckets, jb)
			return nil
		})
	}
	ids, exact = javaorder.CoordinatorTableOrder(buckets)
	byID := make(map[int64]offsets.TableOffsets, len(tables))
	for _, t := range tables {
		byID[t.TableID] = t
	}
	ordered = make([]offsets.TableOffsets, 0, len(tables))
	for _, id := range ids {
		if t, ok := byID[id]; ok {
			ordered = append(ordered, t)
			delete(byID, id)
		}
	}
	// Every table normalize kept has a bucket, so the model names them all;
	// keep any it did not, rather than lose a table.
	for _, t := range tables {
		if _, left := byID[t.TableID]; left {
			ordered = append(ordered, t)
		}
	}
	return ordered, exact
}

// expiration returns now+ttl in epoch milliseconds, refusing a sum that does
// not fit in an int64 (Fluss lets it wrap into the past).
func expiration(producerID string, nowMillis, ttlMillis int64) (int64, error) {
	if (ttlMillis > 0 && nowMillis > math.MaxInt64-ttlMillis) || (ttlMillis < 0 && nowMillis < math.MinInt64-ttlMillis) {
		return 0, &apierr.Error{Class: apierr.ErrInvalidOffsets, ProducerID: producerID,
			Detail: fmt.Sprintf("ttl %d ms overflows the expiration time", ttlMillis)}
	}
	return nowMillis + ttlMillis, nil
}
