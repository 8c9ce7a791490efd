package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// getProducerOffsets answers GET_PRODUCER_OFFSETS (1054, v0). With
// linearizable reads (the default) a GET is answered only after a ZooKeeper
// sync sent after it arrived has returned, one sync shared by every GET
// that arrived meanwhile (readindex); the answer then comes from the cache
// when it holds the snapshot (quickGet), else from the registry. A missing
// snapshot is an empty SUCCESS body (no producer_id), which clients read as
// "not found". Every bucket carries log_end_offset; tables and buckets are
// listed in the order a coordinator's Java HashMaps give, a table without a
// bucket has no entry (coordinatorAnswer). With authorization on, tables
// the principal may not READ, and unknown table ids, are silently left
// out; producer_id and expiration_time are still returned.
//
// With sidecar.audit.reads each GET is served by its handler, which leaves
// its audit line; the quick path is off.
func (s *Sidecar) getProducerOffsets() wire.API {
	quick := wire.Quick{Answer: s.quickGet, Wait: s.quickGetWait}
	if s.cfg.Audit.Reads {
		quick = wire.Quick{}
	}
	return wire.API{
		Key: messages.KeyGetProducerOffsets, Name: messages.KeyGetProducerOffsets.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.GetProducerOffsetsRequest{} },
		Quick:      quick,
		Subject:    producerSubject(),
		Handle: func(ctx context.Context, sess *wire.Session, r *wire.Request) (proto.Message, error) {
			req := r.Msg.(*messages.GetProducerOffsetsRequest)
			resp, err := s.get(ctx, sess, req)
			rec := auditRecord{op: "get", producerID: req.GetProducerId(), err: err, outcome: OutcomeNotFound, buckets: -1}
			if resp != nil && resp.ProducerId != nil {
				rec.outcome, rec.buckets = OutcomeFound, 0
				for _, t := range resp.TableOffsets {
					rec.tables = append(rec.tables, t.GetTableId())
					rec.buckets += len(t.BucketOffsets)
				}
			}
			s.audit(ctx, sess, rec)
			if err != nil {
				return nil, err
			}
			return resp, nil
		},
	}
}

// get serves a decoded GET.
func (s *Sidecar) get(ctx context.Context, sess *wire.Session, req *messages.GetProducerOffsetsRequest) (*messages.GetProducerOffsetsResponse, error) {
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	snap, found, err := s.cfg.Registry.Get(ctx, req.ProducerId)
	if err != nil {
		return nil, s.apiError("get", req.GetProducerId(), err)
	}
	resp := &messages.GetProducerOffsetsResponse{}
	if !found {
		return resp, nil
	}
	resp.ProducerId = proto.String(snap.ProducerID)
	resp.ExpirationTime = proto.Int64(snap.ExpirationTime)
	var keep func(tableID int64) bool
	if s.authorizing() {
		keep = func(tableID int64) bool { return s.checkTable(sess, authz.OpRead, tableID) == nil }
	}
	resp.TableOffsets = tableOffsetsToProto(keptTables(coordinatorAnswer(snap.Tables), keep))
	return resp, nil
}

// tableOffsetsToProto builds the response's tables. The messages and the
// scalars their optional fields point to are allocated in a few blocks
// per response rather than three or four allocations per bucket.
func tableOffsetsToProto(tables []offsets.TableOffsets) []*messages.PbProducerTableOffsets {
	nb, np := 0, 0
	for _, t := range tables {
		nb += len(t.Buckets)
		for _, b := range t.Buckets {
			if b.Partitioned {
				np++
			}
		}
	}
	out := make([]*messages.PbProducerTableOffsets, len(tables))
	pts := make([]messages.PbProducerTableOffsets, len(tables))
	tableIDs := make([]int64, len(tables))
	pbs := make([]messages.PbBucketOffset, nb)
	ptrs := make([]*messages.PbBucketOffset, nb)
	i64 := make([]int64, nb+np) // log end offsets, then partition ids
	i32 := make([]int32, nb)    // bucket ids
	k, p := 0, nb
	for i, t := range tables {
		tableIDs[i] = t.TableID
		pt := &pts[i]
		pt.TableId = &tableIDs[i]
		start := k
		for _, b := range t.Buckets {
			pb := &pbs[k]
			i32[k], i64[k] = b.BucketID, b.LogEndOffset
			pb.BucketId, pb.LogEndOffset = &i32[k], &i64[k]
			if b.Partitioned {
				i64[p] = b.PartitionID
				pb.PartitionId = &i64[p]
				p++
			}
			ptrs[k] = pb
			k++
		}
		if k > start {
			pt.BucketOffsets = ptrs[start:k:k]
		}
		out[i] = pt
	}
	return out
}

// quickGetWait is GET's wire.Quick.Wait: what a GET arriving now waits
// for before quickGet may answer it (producer.Registry.ReadWait). A body
// quickGet would not read waits for nothing: the handler answers it.
func (s *Sidecar) quickGetWait(_ *wire.Session, _ int16, body []byte) wire.Waiter {
	id, ok := getRequestID(body)
	if !ok {
		return nil
	}
	if r := s.cfg.Registry.ReadWait(s.memo.idOf(id)); r != nil {
		return r
	}
	return nil
}
