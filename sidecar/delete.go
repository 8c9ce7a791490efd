package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// deleteProducerOffsets answers DELETE_PRODUCER_OFFSETS (1055, v0): remove
// the snapshot's znode, then its files. Deleting a missing snapshot succeeds.
func (s *Sidecar) deleteProducerOffsets() wire.API {
	return wire.API{
		Key: KeyDeleteProducerOffsets, Name: "DELETE_PRODUCER_OFFSETS", MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.DeleteProducerOffsetsRequest{} },
		Handle: func(ctx context.Context, _ *wire.Session, m proto.Message) (proto.Message, error) {
			req := m.(*messages.DeleteProducerOffsetsRequest)
			ctx, cancel := s.opContext(ctx)
			defer cancel()
			if err := s.cfg.Registry.Delete(ctx, req.ProducerId, nil); err != nil {
				return nil, s.apiError("delete", req.GetProducerId(), err)
			}
			return &messages.DeleteProducerOffsetsResponse{}, nil
		},
	}
}
