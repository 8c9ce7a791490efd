package producer

import (
	"fmt"
	"math"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

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
	n := normalizer{index: map[int64]int{}, seen: map[int64]*bucketSet{}, adopted: map[int64]bool{}}
	var out []offsets.TableOffsets
	for _, t := range tables {
		var err *apierr.Error
		if t.ByBucket != nil {
			out, err = n.addArray(out, t)
		} else {
			out, err = n.addList(out, t)
		}
		if err != nil {
			err.ProducerID = producerID
			return nil, err.Fluss()
		}
	}
	return out, nil
}

// normalizer holds what normalize's checks need to know of each table it
// has built so far. The tables themselves are passed in and handed back,
// as append does, and a refusal leaves the producer id for normalize to
// fill in: kept in the normalizer, either would make its maps escape to
// the heap, four allocations more for a small request.
type normalizer struct {
	// index: a table id's place in the tables.
	index map[int64]int
	// seen: the bucketSet of each table held as a list once it has
	// linearDupCheck buckets.
	seen map[int64]*bucketSet
	// adopted: tables whose ByBucket is still an input entry's own array,
	// to be copied before another entry's buckets are merged into it.
	adopted map[int64]bool
}

// bad is the refusal of a bucket for breaking one of normalize's rules.
func bad(format string, args ...any) *apierr.Error {
	return &apierr.Error{Class: apierr.ErrInvalidOffsets, Detail: fmt.Sprintf(format, args...)}
}

// valid applies the rules that need nothing but the bucket; refusal says
// which one it breaks.
func valid(b BucketInput) bool {
	// As a uint32, a negative bucket id is out of range too.
	return b.LogEndOffset != nil && *b.LogEndOffset >= 0 && uint32(b.BucketID) <= MaxBucketID
}

// refusal is the answer to a bucket that is not valid.
func refusal(tableID int64, b BucketInput) *apierr.Error {
	switch {
	case b.LogEndOffset == nil:
		return bad("table %d bucket %d has no log_end_offset", tableID, b.BucketID)
	case *b.LogEndOffset < 0:
		return bad("table %d bucket %d has negative log_end_offset %d", tableID, b.BucketID, *b.LogEndOffset)
	case b.BucketID < 0:
		return bad("table %d has negative bucket id %d", tableID, b.BucketID)
	}
	return &apierr.Error{Class: apierr.ErrBucketOutOfRange, TableID: tableID, BucketID: b.BucketID, MaxBucketID: MaxBucketID}
}

// addList checks an entry's buckets in the order they were sent, and
// appends them to its table, held as a list.
func (n *normalizer) addList(out []offsets.TableOffsets, t TableInput) ([]offsets.TableOffsets, *apierr.Error) {
	i := -1 // the table's place in out, once a bucket is valid
	var seen *bucketSet
	for _, b := range t.Buckets {
		if !valid(b) {
			return out, refusal(t.TableID, b)
		}
		if i < 0 {
			out, i = n.listTable(out, t.TableID, len(t.Buckets))
			seen = n.seen[t.TableID]
		}
		k := bucketKey{bucket: b.BucketID}
		if b.PartitionID != nil {
			k.partitioned, k.partition = true, *b.PartitionID
		}
		prev := out[i].Buckets
		// A table's buckets are all of one kind, so a duplicate is only
		// looked for among buckets of the kind k is.
		if len(prev) > 0 && prev[0].Partitioned != k.partitioned {
			return out, bad("table %d mixes partitioned and non-partitioned buckets", t.TableID)
		}
		if seen == nil && len(prev) >= linearDupCheck {
			seen = newBucketSet(k.partitioned, prev)
			n.seen[t.TableID] = seen
		}
		if seen.has(prev, k) {
			if k.partitioned {
				return out, bad("table %d partition %d bucket %d appears more than once", t.TableID, k.partition, k.bucket)
			}
			return out, bad("table %d bucket %d appears more than once", t.TableID, k.bucket)
		}
		seen.add(k)
		// Appended in place (not from prev) so that the compiler updates
		// only the length, without a write barrier for the pointer.
		out[i].Buckets = append(out[i].Buckets, offsets.BucketOffset{
			Partitioned: k.partitioned, PartitionID: k.partition, BucketID: k.bucket, LogEndOffset: *b.LogEndOffset,
		})
	}
	return out, nil
}

// listTable returns the place in out of a table held as a list: a new one
// with room for sizeHint buckets, or one an earlier entry gave as an array,
// now turned into a list since this entry is not of that form.
func (n *normalizer) listTable(out []offsets.TableOffsets, tableID int64, sizeHint int) ([]offsets.TableOffsets, int) {
	i, ok := n.index[tableID]
	if !ok {
		i = len(out)
		n.index[tableID] = i
		out = append(out, offsets.TableOffsets{TableID: tableID, Buckets: make([]offsets.BucketOffset, 0, sizeHint)})
	}
	if out[i].ByBucket != nil {
		out[i] = out[i].InFileOrder()
		delete(n.adopted, tableID)
	}
	return out, i
}

// addArray checks the buckets of an entry given ByBucket, in the order
// they were sent, and keeps them as an array when the table is one: the
// entry's own array for a table's first entry, a copy once another
// entry's buckets are merged into it.
func (n *normalizer) addArray(out []offsets.TableOffsets, t TableInput) ([]offsets.TableOffsets, *apierr.Error) {
	i, ok := n.index[t.TableID]
	if ok && out[i].ByBucket == nil {
		// The table is a list already: the entry's buckets join it one by
		// one.
		var err *apierr.Error
		for b := range t.buckets() {
			if out, err = n.addList(out, TableInput{TableID: t.TableID, Buckets: []BucketInput{b}}); err != nil {
				return out, err
			}
		}
		return out, nil
	}
	var dst []int64
	if ok {
		dst = out[i].ByBucket
	}
	last, err := checkArray(t, dst)
	switch {
	case err != nil:
		return out, err
	case last < 0: // no buckets: the entry adds nothing, as in Fluss
	case !ok:
		n.index[t.TableID] = len(out)
		out = append(out, offsets.TableOffsets{TableID: t.TableID, ByBucket: t.ByBucket[:last+1]})
		n.adopted[t.TableID] = true
	default:
		if n.adopted[t.TableID] || last >= len(dst) {
			dst = grown(dst, last+1)
			delete(n.adopted, t.TableID)
		}
		for id, v := range t.ByBucket[:last+1] {
			if v != -1 {
				dst[id] = v
			}
		}
		out[i].ByBucket = dst
	}
	return out, nil
}

// checkArray checks each bucket of an entry given ByBucket, and that dst,
// the table's array so far, does not hold it already. It returns the
// highest id of the entry's buckets, -1 when it has none.
func checkArray(t TableInput, dst []int64) (last int, err *apierr.Error) {
	last = -1
	for id, v := range t.ByBucket {
		if v == -1 {
			continue
		}
		off := v
		if b := (BucketInput{BucketID: int32(min(id, math.MaxInt32)), LogEndOffset: &off}); !valid(b) {
			return 0, refusal(t.TableID, b)
		}
		if id < len(dst) && dst[id] != -1 {
			return 0, bad("table %d bucket %d appears more than once", t.TableID, id)
		}
		last = id
	}
	return last, nil
}

// grown is a copy of arr at least size ids long, -1 at the ids it adds.
func grown(arr []int64, size int) []int64 {
	out := make([]int64, max(len(arr), size))
	copy(out, arr)
	for id := len(arr); id < len(out); id++ {
		out[id] = -1
	}
	return out
}

// linearDupCheck is the bucket count up to which normalize finds a
// table's duplicate buckets by scanning its list rather than a bucketSet.
const linearDupCheck = 32

// bucketKey names a bucket within its table.
type bucketKey struct {
	partitioned bool
	partition   int64
	bucket      int32
}

// bucketSet indexes the buckets of a table once it has linearDupCheck of
// them, for the duplicate check: a bit per bucket id (16 KiB)
// when they are plain, a map when they are partitioned. A map for every
// table would cost ~50 bytes a bucket in a million-bucket request, and
// most tables of a register have a few buckets, found by a scan.
type bucketSet struct {
	plain []uint64
	parts map[bucketKey]bool
}

// newBucketSet indexes list, whose buckets are all partitioned or all
// plain as partitioned says.
func newBucketSet(partitioned bool, list []offsets.BucketOffset) *bucketSet {
	s := &bucketSet{}
	if partitioned {
		s.parts = make(map[bucketKey]bool, 2*len(list))
	} else {
		s.plain = make([]uint64, (MaxBucketID+64)/64)
	}
	for _, p := range list {
		s.add(bucketKey{partitioned: p.Partitioned, partition: p.PartitionID, bucket: p.BucketID})
	}
	return s
}

// add notes k in s; a nil s notes nothing.
func (s *bucketSet) add(k bucketKey) {
	switch {
	case s == nil:
	case k.partitioned:
		s.parts[k] = true
	default:
		s.plain[k.bucket/64] |= 1 << (k.bucket % 64)
	}
}

// has reports whether k is among list, a table's buckets so far, as s
// indexes them; a nil s (the table has fewer than linearDupCheck buckets)
// has them scanned.
func (s *bucketSet) has(list []offsets.BucketOffset, k bucketKey) bool {
	switch {
	case s == nil:
		for _, p := range list {
			if p.BucketID == k.bucket && p.Partitioned == k.partitioned && p.PartitionID == k.partition {
				return true
			}
		}
		return false
	case k.partitioned:
		return s.parts[k]
	}
	return s.plain[k.bucket/64]&(1<<(k.bucket%64)) != 0
}
