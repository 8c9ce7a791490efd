package flussjson

import (
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// decodeCanonicalOffsets decodes, without the generic JSON machinery, an
// offsets file written exactly as EncodeTableOffsets and Fluss write it:
// compact, keys in order, integers without fraction or exponent, any
// offsets, partitions in strictly ascending order. ok is false for
// anything else, which DecodeTableOffsets then decodes the general way;
// when ok is true the result is the one the general way gives
// (FuzzDecodeTableOffsetsCanonical checks it).
func decodeCanonicalOffsets(b []byte) (t offsets.TableOffsets, ok bool) {
	p := scanner{B: b}
	if !p.Lit(`{"version":1,"table_id":`) {
		return t, false
	}
	if t.TableID, ok = p.Int(); !ok {
		return t, false
	}
	switch {
	case p.Lit("}"):
		return t, p.End()
	case p.Lit(`,"bucket_offsets":`):
		if t.Buckets, ok = buckets(&p, t.Buckets, false, 0); !ok || !p.Lit("}") {
			return t, false
		}
		return t, p.End()
	case p.Lit(`,"partition_offsets":[`):
		if p.Lit("]}") {
			return t, p.End()
		}
		first, prev := true, int64(0)
		for {
			if !p.Lit(`{"partition_id":`) {
				return t, false
			}
			pid, ok := p.Int()
			if !ok || (!first && pid <= prev) || !p.Lit(`,"bucket_offsets":`) {
				return t, false
			}
			first, prev = false, pid
			if t.Buckets, ok = buckets(&p, t.Buckets, true, pid); !ok || !p.Lit("}") {
				return t, false
			}
			if p.Lit(",") {
				continue
			}
			if p.Lit("]}") {
				return t, p.End()
			}
			return t, false
		}
	}
	return t, false
}

// buckets reads an array indexed by bucket id and appends its entries other
// than -1.
func buckets(p *scanner, dst []offsets.BucketOffset, partitioned bool, pid int64) ([]offsets.BucketOffset, bool) {
	if !p.Lit("[") {
		return dst, false
	}
	if p.Lit("]") {
		return dst, true
	}
	for id := int64(0); ; id++ {
		if id >= maxFileBuckets {
			return dst, false
		}
		v, ok := p.Int()
		if !ok {
			return dst, false
		}
		if v != unknownOffset {
			b := offsets.BucketOffset{BucketID: int32(id), LogEndOffset: v}
			if partitioned {
				b.Partitioned, b.PartitionID = true, pid
			}
			dst = append(dst, b)
		}
		if p.Lit(",") {
			continue
		}
		return dst, p.Lit("]")
	}
}
