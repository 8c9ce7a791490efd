package producer

import (
	"fmt"
	"iter"
	"math"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
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

// buckets yields the entry's buckets in the order they were sent. For an
// entry given ByBucket, LogEndOffset points into the array: read it, never
// write it.
func (t TableInput) buckets() iter.Seq[BucketInput] {
	return func(yield func(BucketInput) bool) {
		if t.ByBucket == nil {
			for _, b := range t.Buckets {
				if !yield(b) {
					return
				}
			}
			return
		}
		for id, v := range t.ByBucket {
			if v == -1 {
				continue
			}
			if !yield(BucketInput{BucketID: int32(min(id, math.MaxInt32)), LogEndOffset: &t.ByBucket[id]}) {
				return
			}
		}
	}
}

// Count is the number of buckets of the entry.
func (t TableInput) Count() int {
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
		n += t.Count()
	}
	buckets := make([]javaorder.Bucket, 0, n)
	for _, t := range in {
		for b := range t.buckets() {
			jb := javaorder.Bucket{TableID: t.TableID, BucketID: b.BucketID}
			if b.PartitionID != nil {
				jb.Partitioned, jb.PartitionID = true, *b.PartitionID
			}
			buckets = append(buckets, jb)
		}
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
