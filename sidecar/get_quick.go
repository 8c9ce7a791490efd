package sidecar

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Field numbers of the GET messages in fluss.proto.
const (
	getReqProducerID = 1

	getRespProducerID     = 1
	getRespExpirationTime = 2
	getRespTableOffsets   = 3

	tableOffsetsTableID = 1
	tableOffsetsBuckets = 2

	bucketPartitionID  = 1
	bucketBucketID     = 2
	bucketLogEndOffset = 4
)

// quickGet is GET_PRODUCER_OFFSETS's wire.Quick.Answer: the answer of a
// recovery GET storm, whose snapshot is in the cache, built on the
// connection's reader goroutine straight into the response frame, without
// a goroutine, a context, or the generated messages. It declines whatever
// it does not answer exactly as the handler would: a body other than one
// well-formed producer_id, an invalid id, a snapshot or file not cached.
//
// The answer is the same for every GET while the cached state is, but for
// authorization's filter: s.memo keeps it, as bytes to copy or as tables
// in the coordinator's order to encode (get_memo.go).
func (s *Sidecar) quickGet(sess *wire.Session, version int16, body, dst []byte) ([]byte, string, bool) {
	start := len(dst)
	out, id, ok := s.quickGetAnswer(sess, version, body, dst)
	if o := s.cfg.Audit.Observer; ok && o != nil {
		// Counted as the handler counts it (audit.go); the quick path runs
		// only while GETs are not logged.
		client, _ := sess.ClientSoftware()
		outcome := OutcomeNotFound
		if len(out) > start {
			outcome = OutcomeFound
		}
		o.RegistryRequest("get", client, outcome)
	}
	return out, id, ok
}

// quickGetAnswer is quickGet's answer, uncounted.
func (s *Sidecar) quickGetAnswer(sess *wire.Session, _ int16, body, dst []byte) ([]byte, string, bool) {
	idBytes, ok := getRequestID(body)
	if !ok {
		return nil, "", false
	}
	id := s.memo.idOf(idBytes)
	reg := s.cfg.Registry
	var keep func(tableID int64) bool
	if s.authorizing() {
		keep = func(tableID int64) bool { return s.checkTable(sess, authz.OpRead, tableID) == nil }
	}
	token, found, ok := reg.CachedToken(id)
	if !ok {
		return nil, "", false
	}
	if !found {
		return dst, id, true // an empty body: not found
	}
	if a, ok := s.memo.lookup(id, token); ok {
		if keep == nil && a.body != nil {
			return append(dst, a.body...), id, true
		}
		if a.ordered {
			return appendGetResponse(dst, a.answer, keep), id, true
		}
	}
	var buf [4]offsets.TableOffsets
	snap, token, found, ok := reg.GetCached(id, buf[:0])
	if !ok {
		return nil, "", false
	}
	if !found {
		return dst, id, true
	}
	snap.Tables = coordinatorAnswer(snap.Tables)
	start := len(dst)
	dst = appendGetResponse(dst, snap, keep)
	var all []byte // the answer listing every table
	if keep == nil {
		all = dst[start:]
	}
	s.memo.store(id, token, snap, all)
	return dst, id, true
}

// getRequestID returns the producer_id of a GetProducerOffsetsRequest body
// that holds that field alone, once, as Fluss's clients send it; ok is
// false for anything else, which the handler then decodes in full.
func getRequestID(body []byte) (id []byte, ok bool) {
	num, typ, n := protowire.ConsumeTag(body)
	if n < 0 || num != getReqProducerID || typ != protowire.BytesType {
		return nil, false
	}
	id, m := protowire.ConsumeBytes(body[n:])
	if m < 0 || n+m != len(body) {
		return nil, false
	}
	return id, true
}

// appendGetResponse appends the encoding of the GetProducerOffsetsResponse
// for snap to dst, listing snap's tables in their order, those keptTables
// keeps. It is byte for byte what proto.Marshal makes of the message the
// handler builds (fields in number order, every bucket with its log end
// offset), which get_quick_test.go checks.
func appendGetResponse(dst []byte, snap producer.Snapshot, keep func(tableID int64) bool) []byte {
	dst = protowire.AppendTag(dst, getRespProducerID, protowire.BytesType)
	dst = protowire.AppendString(dst, snap.ProducerID)
	dst = protowire.AppendTag(dst, getRespExpirationTime, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(snap.ExpirationTime))
	for _, t := range snap.Tables {
		if !answered(t, keep) {
			continue
		}
		dst = protowire.AppendTag(dst, getRespTableOffsets, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(tableSize(t)))
		dst = protowire.AppendTag(dst, tableOffsetsTableID, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(t.TableID))
		for _, b := range t.Buckets {
			dst = protowire.AppendTag(dst, tableOffsetsBuckets, protowire.BytesType)
			dst = protowire.AppendVarint(dst, uint64(bucketSize(b)))
			if b.Partitioned {
				dst = protowire.AppendTag(dst, bucketPartitionID, protowire.VarintType)
				dst = protowire.AppendVarint(dst, uint64(b.PartitionID))
			}
			dst = protowire.AppendTag(dst, bucketBucketID, protowire.VarintType)
			dst = protowire.AppendVarint(dst, uint64(int64(b.BucketID))) // int32: sign-extended
			dst = protowire.AppendTag(dst, bucketLogEndOffset, protowire.VarintType)
			dst = protowire.AppendVarint(dst, uint64(b.LogEndOffset))
		}
	}
	return dst
}

// One-byte tags: every field number here is below 16.
const tagSize = 1

func tableSize(t offsets.TableOffsets) int {
	n := tagSize + protowire.SizeVarint(uint64(t.TableID))
	for _, b := range t.Buckets {
		bs := bucketSize(b)
		n += tagSize + protowire.SizeVarint(uint64(bs)) + bs
	}
	return n
}

func bucketSize(b offsets.BucketOffset) int {
	n := tagSize + protowire.SizeVarint(uint64(int64(b.BucketID))) +
		tagSize + protowire.SizeVarint(uint64(b.LogEndOffset))
	if b.Partitioned {
		n += tagSize + protowire.SizeVarint(uint64(b.PartitionID))
	}
	return n
}
