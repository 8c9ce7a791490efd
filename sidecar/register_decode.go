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
// million-bucket request would take ~100 MB before any work starts. Here a
// bucket costs 32 bytes (40 when partitioned): its BucketInput and one slab
// slot per optional value, allocated once per table.
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
			vals += optionalValues(rest[:m])
		}
		rest = rest[m:]
	}
	t.Buckets = make([]producer.BucketInput, 0, n)
	slab := make([]int64, 0, vals)
	hasID := false
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		b = b[k:]
		switch {
		case num == tblTableID && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			t.TableID, hasID = int64(v), true
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

// decodeBucket reads one PbBucketOffset; its optional values live in slab,
// sized by optionalValues, so that appending never moves it.
func decodeBucket(b []byte, slab *[]int64) (bi producer.BucketInput, ok bool) {
	var part, off int64
	var hasPart, hasBucket, hasOff bool
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 || num > protowire.MaxValidNumber {
			return bi, false
		}
		b = b[k:]
		switch {
		case (num == bktPartitionID || num == bktBucketID || num == bktLogEndOffset) && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return bi, false
			}
			switch num {
			case bktPartitionID:
				part, hasPart = int64(v), true
			case bktBucketID:
				bi.BucketID, hasBucket = int32(v), true
			default:
				off, hasOff = int64(v), true
			}
			b = b[m:]
		case num == bktPartitionID || num == bktBucketID || num == bktLogEndOffset:
			return bi, false
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return bi, false
			}
			b = b[m:]
		}
	}
	if (hasPart && len(*slab) == cap(*slab)) || (hasOff && len(*slab)+btoi(hasPart) >= cap(*slab)) {
		return bi, false // cannot happen: optionalValues counted them
	}
	if hasPart {
		*slab = append(*slab, part)
		bi.PartitionID = &(*slab)[len(*slab)-1]
	}
	if hasOff {
		*slab = append(*slab, off)
		bi.LogEndOffset = &(*slab)[len(*slab)-1]
	}
	return bi, hasBucket
}

// optionalValues counts the partition_id and log_end_offset fields of one
// encoded PbBucketOffset (a length-prefixed field value), for sizing the
// slab: at most two, and one for a plain bucket.
func optionalValues(field []byte) int {
	v, n := protowire.ConsumeBytes(field)
	if n < 0 {
		return 0
	}
	hasPart, hasOff := false, false
	for len(v) > 0 {
		num, typ, k := protowire.ConsumeTag(v)
		if k < 0 || num > protowire.MaxValidNumber {
			break
		}
		v = v[k:]
		m := protowire.ConsumeFieldValue(num, typ, v)
		if m < 0 {
			break
		}
		if typ == protowire.VarintType {
			hasPart = hasPart || num == bktPartitionID
			hasOff = hasOff || num == bktLogEndOffset
		}
		v = v[m:]
	}
	return btoi(hasPart) + btoi(hasOff)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
