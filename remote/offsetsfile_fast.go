package remote

import (
	"strconv"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// decodeCanonicalOffsets decodes, without the generic JSON machinery, an
// offsets file written exactly as EncodeTableOffsets and Fluss write it:
// compact, keys in order, integers without fraction or exponent, offsets of
// at least -1, partitions in strictly ascending order. ok is false for
// anything else, which DecodeTableOffsets then decodes the general way;
// when ok is true the result is the one the general way gives
// (FuzzDecodeTableOffsetsCanonical checks it).
func decodeCanonicalOffsets(b []byte) (t offsets.TableOffsets, ok bool) {
	p := canonical{b: b}
	if !p.lit(`{"version":1,"table_id":`) {
		return t, false
	}
	if t.TableID, ok = p.int(); !ok {
		return t, false
	}
	switch {
	case p.lit("}"):
		return t, p.end()
	case p.lit(`,"bucket_offsets":`):
		if t.Buckets, ok = p.buckets(t.Buckets, false, 0); !ok || !p.lit("}") {
			return t, false
		}
		return t, p.end()
	case p.lit(`,"partition_offsets":[`):
		if p.lit("]}") {
			return t, p.end()
		}
		first, prev := true, int64(0)
		for {
			if !p.lit(`{"partition_id":`) {
				return t, false
			}
			pid, ok := p.int()
			if !ok || (!first && pid <= prev) || !p.lit(`,"bucket_offsets":`) {
				return t, false
			}
			first, prev = false, pid
			if t.Buckets, ok = p.buckets(t.Buckets, true, pid); !ok || !p.lit("}") {
				return t, false
			}
			if p.lit(",") {
				continue
			}
			if p.lit("]}") {
				return t, p.end()
			}
			return t, false
		}
	}
	return t, false
}

// buckets reads an array indexed by bucket id and appends its entries other
// than -1.
func (p *canonical) buckets(dst []offsets.BucketOffset, partitioned bool, pid int64) ([]offsets.BucketOffset, bool) {
	if !p.lit("[") {
		return dst, false
	}
	if p.lit("]") {
		return dst, true
	}
	for id := 0; ; id++ {
		if id > MaxBucketID {
			return dst, false
		}
		v, ok := p.int()
		if !ok || v < -1 {
			return dst, false
		}
		if v != -1 {
			b := offsets.BucketOffset{BucketID: int32(id), LogEndOffset: v}
			if partitioned {
				b.Partitioned, b.PartitionID = true, pid
			}
			dst = append(dst, b)
		}
		if p.lit(",") {
			continue
		}
		return dst, p.lit("]")
	}
}

// canonical reads canonical JSON tokens from b.
type canonical struct {
	b []byte
	i int
}

func (p *canonical) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

func (p *canonical) end() bool { return p.i == len(p.b) }

// int reads -?(0|[1-9][0-9]*) that fits an int64.
func (p *canonical) int() (int64, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	return v, err == nil
}
