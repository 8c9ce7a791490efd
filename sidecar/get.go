package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// getProducerOffsets answers GET_PRODUCER_OFFSETS (1054, v0). A missing
// snapshot is an empty SUCCESS body (no producer_id), which clients read as
// "not found". Every bucket carries log_end_offset. With authorization on,
// tables the principal may not READ, and unknown table ids, are silently
// left out; producer_id and expiration_time are still returned.
func (s *Sidecar) getProducerOffsets() wire.API {
	return wire.API{
		Key: KeyGetProducerOffsets, Name: "GET_PRODUCER_OFFSETS", MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.GetProducerOffsetsRequest{} },
		Handle: func(ctx context.Context, sess *wire.Session, m proto.Message) (proto.Message, error) {
			req := m.(*messages.GetProducerOffsetsRequest)
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
			tables := snap.Tables
			if s.authorizing() {
				tables = tables[:0:0]
				for _, t := range snap.Tables {
					if s.checkTable(sess, authz.OpRead, t.TableID) == nil {
						tables = append(tables, t)
					}
				}
			}
			resp.TableOffsets = tableOffsetsToProto(tables)
			return resp, nil
		},
	}
}

func tableOffsetsToProto(tables []offsets.TableOffsets) []*messages.PbProducerTableOffsets {
	out := make([]*messages.PbProducerTableOffsets, 0, len(tables))
	for _, t := range tables {
		pt := &messages.PbProducerTableOffsets{TableId: proto.Int64(t.TableID)}
		for _, b := range t.Buckets {
			pb := &messages.PbBucketOffset{BucketId: proto.Int32(b.BucketID), LogEndOffset: proto.Int64(b.LogEndOffset)}
			if b.Partitioned {
				pb.PartitionId = proto.Int64(b.PartitionID)
			}
			pt.BucketOffsets = append(pt.BucketOffsets, pb)
		}
		out = append(out, pt)
	}
	return out
}
