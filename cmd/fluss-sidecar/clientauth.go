package main

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Fluss's client security keys, read by the client subcommands.
const (
	keyClientProtocol  = "client.security.protocol"
	keyClientMechanism = "client.security.sasl.mechanism"
	keyClientUsername  = "client.security.sasl.username"
	keyClientPassword  = "client.security.sasl.password"
	keyClientJAAS      = "client.security.sasl.jaas.config"
)

// clientLogin is how the client subcommands log in: nil for PLAINTEXT.
type clientLogin struct {
	username, password string
}

// clientLoginFrom reads Fluss's client security keys. The protocol is
// PLAINTEXT (default) or SASL; the only mechanism is PLAIN, with the user
// from client.security.sasl.username/password or, as Fluss also accepts,
// a PlainLoginModule entry in client.security.sasl.jaas.config.
func clientLoginFrom(c *config.Config) (*clientLogin, error) {
	switch p := strings.ToUpper(strings.TrimSpace(c.String(keyClientProtocol, "PLAINTEXT"))); p {
	case "PLAINTEXT":
		return nil, nil
	case "SASL":
	default:
		return nil, fmt.Errorf("%s: %q is neither PLAINTEXT nor SASL", keyClientProtocol, p)
	}
	if m := strings.ToUpper(strings.TrimSpace(c.String(keyClientMechanism, "PLAIN"))); m != "PLAIN" {
		return nil, fmt.Errorf("%s: %q is not supported (only PLAIN)", keyClientMechanism, m)
	}
	l := &clientLogin{username: c.String(keyClientUsername, ""), password: c.String(keyClientPassword, "")}
	if l.username == "" {
		if jaas := c.String(keyClientJAAS, ""); jaas != "" {
			entries, err := authz.ParseJAAS(jaas)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", keyClientJAAS, err)
			}
			for _, e := range entries {
				if e.LoginModule == authz.PlainLoginModule {
					l.username, l.password = e.Options["username"], e.Options["password"]
				}
			}
		}
	}
	if l.username == "" {
		return nil, fmt.Errorf("%s is SASL but no user is given: set %s and %s", keyClientProtocol, keyClientUsername, keyClientPassword)
	}
	return l, nil
}

// authenticate logs c in with SASL/PLAIN.
func (l *clientLogin) authenticate(ctx context.Context, c *wire.Client) error {
	if l == nil {
		return nil
	}
	token := authz.PlainToken{User: l.username, Password: l.password}.Bytes()
	return c.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{
		Protocol: proto.String("PLAIN"), Token: token,
	}, &messages.AuthenticateResponse{})
}
