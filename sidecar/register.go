package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// registerProducerOffsets answers REGISTER_PRODUCER_OFFSETS (1053, v0):
// store the snapshot unless a live one exists. result is always set, 0
// CREATED or 1 ALREADY_EXISTS (an absent result means CREATED to Java but
// "unknown" to Rust).
func (s *Sidecar) registerProducerOffsets() wire.API {
	return wire.API{
		Key: KeyRegisterProducerOffsets, Name: "REGISTER_PRODUCER_OFFSETS", MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.RegisterProducerOffsetsRequest{} },
		Handle: func(ctx context.Context, _ *wire.Session, m proto.Message) (proto.Message, error) {
			req := m.(*messages.RegisterProducerOffsetsRequest)
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
