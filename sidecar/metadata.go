package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// getMetadata answers GET_METADATA (1012, v0) so that an unchanged Fluss
// client bootstraps against the sidecar: the coordinator is the
// coordinator endpoint and the one alive tablet server the tablet endpoint
// of the listener the request came in on (or of the first listener when
// that one has no address), each at its advertised address. Both endpoints
// answer the same. It knows no tables, so table_metadata is empty and
// partition_metadata is never sent (a Java client fails on it at
// bootstrap). Without a tablet endpoint (Config.TabletAdvertised empty)
// tablet_servers is empty.
func (s *Sidecar) getMetadata() wire.API {
	return wire.API{
		Key: messages.KeyGetMetadata, Name: messages.KeyGetMetadata.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.MetadataRequest{} },
		Handle: func(ctx context.Context, sess *wire.Session, _ *wire.Request) (proto.Message, error) {
			// Like a coordinator, only node id, host and port: the
			// listeners field would tell a client the address of every
			// listener, including the internal one that skips
			// authorization.
			node := func(addr config.Listener) *messages.PbServerNode {
				return &messages.PbServerNode{
					NodeId: proto.Int32(s.cfg.NodeID),
					Host:   proto.String(addr.Host),
					Port:   proto.Int32(int32(addr.Port)),
				}
			}
			resp := &messages.MetadataResponse{CoordinatorServer: node(pick(s.cfg.Advertised, sess.ListenerName))}
			if len(s.cfg.TabletAdvertised) > 0 {
				resp.TabletServers = []*messages.PbServerNode{node(pick(s.cfg.TabletAdvertised, sess.ListenerName))}
			}
			return resp, nil
		},
	}
}

// pick returns the address of listener name, or the first one.
func pick(addrs []config.Listener, name string) config.Listener {
	for _, l := range addrs {
		if l.Name == name {
			return l
		}
	}
	return addrs[0]
}
