package sidecar

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/fluss-sidecar/fluss-sidecar/producer"
)

// Field numbers of the register request (docs/protocol.md §6).
const (
	regProducerID   = 1
	regTableOffsets = 2
	regTTLMs        = 3
	tblTableID      = 1
	tblBuckets      = 2
	bktPartitionID  = 1
	bktBucketID     = 2
	bktLogEndOffset = 4
)

// decodeRegister decodes a RegisterProducerOffsetsRequest body straight
// into the registry's input, without the generated message: a message per
// bucket costs about 90 bytes, ten times a bucket's bytes on the wire, so a
// million-bucket request would take ~100 MB before any work starts. A table
// entry whose buckets are plain, in ascending id order and all with an
// offset (how Fluss clients send one) becomes an array of offsets by bucket
// id, 8 bytes a bucket id, which the registry and the snapshot cache keep
// as it is (producer.TableInput.ByBucket); any other costs 32 bytes a
// bucket (40 when partitioned): its BucketInput and one slab slot per
// optional value, allocated once per table.
//
// It reads only well-formed requests with the shape Fluss clients send; for
// anything else (malformed bytes, a missing required field, a known field
// with another wire type) it returns ok=false and the caller decodes with
// the generated message, whose rules and error texts then apply. On the
// requests it reads it gives what proto decoding would: the last value of a
// repeated scalar field wins, unknown fields are skipped, int32 fields keep
// the low 32 bits of the varint.
func decodeRegister(b []byte) (in producer.RegisterInput, ok bool) {
	nTables := 0
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 || num > protowire.MaxValidNumber {
			return in, false
		}
		rest = rest[n:]
		m := protowire.ConsumeFieldValue(num, typ, rest)
		if m < 0 {
			return in, false
		}
		if num == regTableOffsets {
			nTables++
		}
		rest = rest[m:]
	}
	in.Tables = make([]producer.TableInput, 0, nTables)
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		b = b[n:]
		switch {
		case num == regProducerID && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			id := string(v)
			in.ProducerID = &id
			b = b[m:]
		case num == regTableOffsets && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			t, good := decodeTable(v)
			if !good {
				return in, false
			}
			in.Tables = append(in.Tables, t)
			b = b[m:]
		case num == regTTLMs && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			ttl := int64(v)
			in.TTLMillis = &ttl
			b = b[m:]
		case num == regProducerID || num == regTableOffsets || num == regTTLMs:
			return in, false // a known field with another wire type
		default:
			b = b[protowire.ConsumeFieldValue(num, typ, b):]
		}
	}
	return in, in.ProducerID != nil
}

func decodeTable(b []byte) (t producer.TableInput, ok bool) {
	n, vals := 0, 0
	// Whether the buckets can be held as an array by bucket id
	// (producer.TableInput.ByBucket): plain, ascending, with offsets.
	asArray, lastID := true, int64(-1)
	for rest := b; len(rest) > 0; {
		num, typ, k := protowire.ConsumeTag(rest)
		if k < 0 || num > protowire.MaxValidNumber {
			return t, false
		}
		rest = rest[k:]
		m := protowire.ConsumeFieldValue(num, typ, rest)
		if m < 0 {
			return t, false
		}
		if num == tblBuckets && typ == protowire.BytesType {
			n++
			v, _ := protowire.ConsumeBytes(rest[:m])
			f, good := bucketFields(v)
			vals += btoi(f.hasPart) + btoi(f.hasOff)
			id := int64(int32(f.bucket))
			asArray = asArray && good && f.hasBucket && f.hasOff && !f.hasPart &&
				int64(f.off) >= 0 && id > lastID && id <= producer.MaxBucketID
			lastID = id
		}
		rest = rest[m:]
	}
	// An array costs 8 bytes a bucket id, a list 32 bytes a bucket: the
	// array is taken unless the ids are sparse.
	array := asArray && n > 0 && lastID < 4*int64(n)
	var slab []int64
	if array {
		t.ByBucket = make([]int64, lastID+1)
		for i := range t.ByBucket {
			t.ByBucket[i] = -1
		}
	} else {
		t.Buckets = make([]producer.BucketInput, 0, n)
		slab = make([]int64, 0, vals)
	}
	hasID := false
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		b = b[k:]
		switch {
		case num == tblTableID && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			t.TableID, hasID = int64(v), true
			b = b[m:]
		case num == tblBuckets && typ == protowire.BytesType && array:
			v, m := protowire.ConsumeBytes(b)
			f, _ := bucketFields(v) // checked by the first pass
			t.ByBucket[int32(f.bucket)] = int64(f.off)
			b = b[m:]
		case num == tblBuckets && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			bi, good := decodeBucket(v, &slab)
			if !good {
				return t, false
			}
			t.Buckets = append(t.Buckets, bi)
			b = b[m:]
		case num == tblTableID || num == tblBuckets:
			return t, false
		default:
			b = b[protowire.ConsumeFieldValue(num, typ, b):]
		}
	}
	return t, hasID
}

// fields are the values of one PbBucketOffset as sent; the last of a
// repeated field wins, as in proto decoding.
type fields struct {
	part, bucket, off          uint64
	hasPart, hasBucket, hasOff bool
}

// bucketFields reads one PbBucketOffset; ok is false when it is malformed
// or a known field has another wire type.
func bucketFields(b []byte) (f fields, ok bool) {
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 || num > protowire.MaxValidNumber {
			return f, false
		}
		b = b[k:]
		switch {
		case (num == bktPartitionID || num == bktBucketID || num == bktLogEndOffset) && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return f, false
			}
			switch num {
			case bktPartitionID:
				f.part, f.hasPart = v, true
			case bktBucketID:
				f.bucket, f.hasBucket = v, true
			default:
				f.off, f.hasOff = v, true
			}
			b = b[m:]
		case num == bktPartitionID || num == bktBucketID || num == bktLogEndOffset:
			return f, false
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return f, false
			}
			b = b[m:]
		}
	}
	return f, true
}

// decodeBucket reads one PbBucketOffset; its optional values live in slab,
// sized by decodeTable, so that appending never moves it.
func decodeBucket(b []byte, slab *[]int64) (bi producer.BucketInput, ok bool) {
	f, ok := bucketFields(b)
	if !ok {
		return bi, false
	}
	if (f.hasPart && len(*slab) == cap(*slab)) || (f.hasOff && len(*slab)+btoi(f.hasPart) >= cap(*slab)) {
		return bi, false // cannot happen: decodeTable counted them
	}
	bi.BucketID = int32(f.bucket)
	if f.hasPart {
		*slab = append(*slab, int64(f.part))
		bi.PartitionID = &(*slab)[len(*slab)-1]
	}
	if f.hasOff {
		*slab = append(*slab, int64(f.off))
		bi.LogEndOffset = &(*slab)[len(*slab)-1]
	}
	return bi, f.hasBucket
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
