package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// apiVersions answers API_VERSIONS (1000, v0) with every key the endpoint
// serves, as listed by mux, and its server type, as every Fluss server
// does: a Java client closes a connection whose type differs from the node
// it meant to reach, and fluss-go refuses an answer with no type at all.
// The coordinator endpoint says COORDINATOR and the tablet endpoint
// TABLET_SERVER, each matching what GET_METADATA names at its address.
func apiVersions(serverType messages.ServerType, mux func() *wire.Mux) wire.API {
	return wire.API{
		Key: messages.KeyAPIVersions, Name: messages.KeyAPIVersions.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.ApiVersionsRequest{} },
		Handle: func(ctx context.Context, sess *wire.Session, r *wire.Request) (proto.Message, error) {
			// Kept for the audit lines of the connection's requests.
			req := r.Msg.(*messages.ApiVersionsRequest)
			sess.SetClientSoftware(req.GetClientSoftwareName(), req.GetClientSoftwareVersion())
			resp := &messages.ApiVersionsResponse{ServerType: serverType.Int32()}
			for _, api := range mux().Versions() {
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
