package sidecar

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// authenticate answers AUTHENTICATE (1038, v0) as a Fluss server does. On a
// PLAINTEXT listener a client that asks for another protocol is told the
// protocols do not match (code 46); a Java PLAINTEXT client never sends
// it. On a SASL listener the configured Authenticator runs the PLAIN login:
// success answers the empty challenge, failure code 46; once complete, a
// further AUTHENTICATE (the Rust client sends one) gets an empty response.
func (s *Sidecar) authenticate() wire.API {
	return wire.API{
		Key: messages.KeyAuthenticate, Name: messages.KeyAuthenticate.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.AuthenticateRequest{} },
		Handle: func(ctx context.Context, sess *wire.Session, r *wire.Request) (proto.Message, error) {
			req := r.Msg.(*messages.AuthenticateRequest)
			p := req.GetProtocol()
			if s.cfg.Authenticator == nil {
				if p != "PLAINTEXT" {
					return nil, (&apierr.Error{Class: apierr.ErrProtocolMismatch, ServerProtocol: "PLAINTEXT", ClientProtocol: p}).Fluss()
				}
				return &messages.AuthenticateResponse{}, nil
			}
			challenge, err := s.cfg.Authenticator.Authenticate(sess, p, req.GetToken())
			if err != nil {
				return nil, err
			}
			// A nil challenge leaves the field absent; an empty non-nil one
			// is sent as present and empty (0A 00).
			return &messages.AuthenticateResponse{Challenge: challenge}, nil
		},
	}
}
