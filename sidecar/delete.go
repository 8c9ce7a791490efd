package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// deleteProducerOffsets answers DELETE_PRODUCER_OFFSETS (1055, v0): remove
// the snapshot's znode, then its files. Deleting a missing snapshot succeeds.
// With authorization on, WRITE is needed on every table of the stored
// snapshot, taken from the znode's table ids (no remote file is read, W6);
// the znode is deleted only if it is still the one checked. A snapshot
// without tables needs WRITE on the cluster with
// sidecar.authorization.require-table-for-empty.
func (s *Sidecar) deleteProducerOffsets() wire.API {
	return wire.API{
		Key: messages.KeyDeleteProducerOffsets, Name: messages.KeyDeleteProducerOffsets.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.DeleteProducerOffsetsRequest{} },
		Subject:    producerSubject(),
		Handle: func(ctx context.Context, sess *wire.Session, r *wire.Request) (proto.Message, error) {
			req := r.Msg.(*messages.DeleteProducerOffsetsRequest)
			ctx, cancel := s.opContext(ctx)
			defer cancel()
			var check producer.DeleteCheck
			if s.authorizing() {
				check = func(ids []int64) error {
					for _, id := range ids {
						if err := s.checkTable(sess, authz.OpWrite, id); err != nil {
							return err
						}
					}
					if len(ids) == 0 {
						return s.checkEmpty(sess)
					}
					return nil
				}
			}
			deleted, err := s.cfg.Registry.DeleteSnapshot(ctx, req.ProducerId, check)
			rec := auditRecord{op: "delete", producerID: req.GetProducerId(), tables: deleted.TableIDs, buckets: -1, outcome: OutcomeNotFound}
			if deleted.Found {
				rec.outcome = OutcomeDeleted
			}
			if err != nil {
				err = s.apiError("delete", req.GetProducerId(), err)
				rec.err = err
			}
			s.audit(ctx, sess, rec)
			if err != nil {
				return nil, err
			}
			return &messages.DeleteProducerOffsetsResponse{}, nil
		},
	}
}
