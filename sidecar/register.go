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
//
// The body is decoded by decodeRegister, which keeps a million-bucket
// request as Fluss clients send it to 8 bytes a bucket (any other shape to
// about 40); what it does not read goes through
// the generated message and its error texts.
func (s *Sidecar) registerProducerOffsets() wire.API {
	api := wire.API{
		Key: messages.KeyRegisterProducerOffsets, Name: messages.KeyRegisterProducerOffsets.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.RegisterProducerOffsetsRequest{} },
		RawBody:    true,
		Subject:    producerSubject(),
	}
	api.Handle = func(ctx context.Context, sess *wire.Session, r *wire.Request) (proto.Message, error) {
		if in, ok := decodeRegister(r.Body); ok {
			return s.register(ctx, sess, in)
		}
		req := &messages.RegisterProducerOffsetsRequest{}
		if err := wire.DecodeBody(api, r.Version, r.Body, req); err != nil {
			s.audit(ctx, sess, auditRecord{op: "register", producerID: producerIDOfBody(r.Body), err: err})
			return nil, err
		}
		return s.register(ctx, sess, registerInput(req))
	}
	return api
}

// register serves a decoded REGISTER and leaves its audit line.
func (s *Sidecar) register(ctx context.Context, sess *wire.Session, in producer.RegisterInput) (proto.Message, error) {
	res, err := s.registerInput(ctx, sess, in)
	s.audit(ctx, sess, registerAudit(in, res, err))
	if err != nil {
		return nil, err
	}
	return &messages.RegisterProducerOffsetsResponse{Result: proto.Int32(int32(res))}, nil
}

func (s *Sidecar) registerInput(ctx context.Context, sess *wire.Session, in producer.RegisterInput) (producer.Result, error) {
	if s.authorizing() {
		for _, t := range in.Tables {
			if err := s.checkTable(sess, authz.OpWrite, t.TableID); err != nil {
				return 0, err
			}
		}
		if len(in.Tables) == 0 {
			if err := s.checkEmpty(sess); err != nil {
				return 0, err
			}
		}
	}
	var producerID string
	if in.ProducerID != nil {
		producerID = *in.ProducerID
	}
	ctx, cancel := s.opContext(ctx)
	defer cancel()
	res, err := s.cfg.Registry.Register(ctx, in)
	if err != nil {
		return 0, s.apiError("register", producerID, err)
	}
	return res, nil
}

// registerInput converts a decoded request for the registry, allocating
// each table's buckets once.
func registerInput(req *messages.RegisterProducerOffsetsRequest) producer.RegisterInput {
	in := producer.RegisterInput{ProducerID: req.ProducerId, TTLMillis: req.TtlMs,
		Tables: make([]producer.TableInput, 0, len(req.GetTableOffsets()))}
	for _, t := range req.GetTableOffsets() {
		ti := producer.TableInput{TableID: t.GetTableId(), Buckets: make([]producer.BucketInput, 0, len(t.GetBucketOffsets()))}
		for _, b := range t.GetBucketOffsets() {
			ti.Buckets = append(ti.Buckets, producer.BucketInput{
				PartitionID: b.PartitionId, BucketID: b.GetBucketId(), LogEndOffset: b.LogEndOffset,
			})
		}
		in.Tables = append(in.Tables, ti)
	}
	return in
}
