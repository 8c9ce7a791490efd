package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// apiVersions answers API_VERSIONS (1000, v0) with every key the sidecar
// serves. server_type is left out on purpose: a Java client then skips its
// server type check, so this one port can be both the coordinator and the
// tablet server named in GET_METADATA (docs/protocol.md §7a).
func (s *Sidecar) apiVersions() wire.API {
	return wire.API{
		Key: messages.KeyAPIVersions, Name: messages.KeyAPIVersions.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.ApiVersionsRequest{} },
		Handle: func(ctx context.Context, _ *wire.Session, _ proto.Message) (proto.Message, error) {
			resp := &messages.ApiVersionsResponse{}
			for _, api := range s.mux.Versions() {
				resp.ApiVersions = append(resp.ApiVersions, &messages.PbApiVersion{
					ApiKey:     proto.Int32(int32(api.Key)),
					MinVersion: proto.Int32(int32(api.MinVersion)),
					MaxVersion: proto.Int32(int32(api.MaxVersion)),
				})
			}
			return resp, nil
		},
	}
}
