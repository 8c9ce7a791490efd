package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// authenticate answers AUTHENTICATE (1038, v0) on a PLAINTEXT listener the
// way a Fluss server does: a client that asks for another protocol is told
// the protocols do not match (code 46). A Java PLAINTEXT client never sends
// it.
func (s *Sidecar) authenticate() wire.API {
	return wire.API{
		Key: KeyAuthenticate, Name: "AUTHENTICATE", MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.AuthenticateRequest{} },
		Handle: func(ctx context.Context, _ *wire.Session, req proto.Message) (proto.Message, error) {
			p := req.(*messages.AuthenticateRequest).GetProtocol()
			if p != "PLAINTEXT" {
				return nil, flusserr.New(flusserr.AuthenticateException,
					"Authenticate protocol not match: protocol of server is 'PLAINTEXT' while protocol of client is '"+p+"'")
			}
			return &messages.AuthenticateResponse{}, nil
		},
	}
}
