package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// registerProducerOffsets answers REGISTER_PRODUCER_OFFSETS (1053, v0):
// store the snapshot unless a live one exists. result is always set, 0
// CREATED or 1 ALREADY_EXISTS (an absent result means CREATED to Java but
// "unknown" to Rust).
//
// With authorization on, WRITE is checked on every table id of the request,
// in order and before anything else is validated, as a Fluss coordinator
// does: an unknown id is code 21, a denial code 48. A request without
// tables needs nothing, or WRITE on the cluster with
// sidecar.authorization.require-table-for-empty.
func (s *Sidecar) registerProducerOffsets() wire.API {
	return wire.API{
		Key: KeyRegisterProducerOffsets, Name: "REGISTER_PRODUCER_OFFSETS", MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.RegisterProducerOffsetsRequest{} },
		Handle: func(ctx context.Context, sess *wire.Session, m proto.Message) (proto.Message, error) {
			req := m.(*messages.RegisterProducerOffsetsRequest)
			if s.authorizing() {
				for _, t := range req.GetTableOffsets() {
					if err := s.checkTable(sess, authz.OpWrite, t.GetTableId()); err != nil {
						return nil, err
					}
				}
				if len(req.GetTableOffsets()) == 0 {
					if err := s.checkEmpty(sess); err != nil {
						return nil, err
					}
				}
			}
			in := producer.RegisterInput{ProducerID: req.ProducerId, TTLMillis: req.TtlMs}
			for _, t := range req.GetTableOffsets() {
				ti := producer.TableInput{TableID: t.GetTableId()}
				for _, b := range t.GetBucketOffsets() {
					ti.Buckets = append(ti.Buckets, producer.BucketInput{
						PartitionID: b.PartitionId, BucketID: b.GetBucketId(), LogEndOffset: b.LogEndOffset,
					})
				}
				in.Tables = append(in.Tables, ti)
			}
			ctx, cancel := s.opContext(ctx)
			defer cancel()
			res, err := s.cfg.Registry.Register(ctx, in)
			if err != nil {
				return nil, s.apiError("register", req.GetProducerId(), err)
			}
			return &messages.RegisterProducerOffsetsResponse{Result: proto.Int32(int32(res))}, nil
		},
	}
}
