package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// getMetadata answers GET_METADATA (1012, v0) so that an unchanged Fluss
// client bootstraps against the sidecar: the sidecar is named as the
// coordinator and as the one alive tablet server, at its advertised address.
// It knows no tables, so table_metadata is empty and partition_metadata is
// never sent (a Java client fails on it at bootstrap).
func (s *Sidecar) getMetadata() wire.API {
	return wire.API{
		Key: messages.KeyGetMetadata, Name: messages.KeyGetMetadata.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.MetadataRequest{} },
		Handle: func(ctx context.Context, sess *wire.Session, _ proto.Message) (proto.Message, error) {
			addr := s.cfg.Advertised[0]
			for _, l := range s.cfg.Advertised {
				if l.Name == sess.ListenerName {
					addr = l
				}
			}
			// Like a coordinator, only node id, host and port: the
			// listeners field would tell a client the address of every
			// listener, including the internal one that skips
			// authorization.
			node := func() *messages.PbServerNode {
				return &messages.PbServerNode{
					NodeId: proto.Int32(s.cfg.NodeID),
					Host:   proto.String(addr.Host),
					Port:   proto.Int32(int32(addr.Port)),
				}
			}
			return &messages.MetadataResponse{
				CoordinatorServer: node(),
				TabletServers:     []*messages.PbServerNode{node()},
			}, nil
		},
	}
}
