package zk

import (
	"errors"
	"fmt"
	"net"
)

// SASL configures SASL authentication of every connection, as ZooKeeper's
// Java client does from a JAAS "Client" section.
type SASL struct {
	// Mechanism names the mechanism in messages, e.g. "DIGEST-MD5".
	Mechanism string
	// User names the authenticating user in messages (never the password).
	User string
	// New returns a fresh exchange for one connection.
	New func() SASLExchange
}

// SASLExchange is one client side of a SASL exchange. Next gets the
// server's last token (nil before the first message) and returns the
// client's next token; done reports that the client needs to send nothing
// more (the server's final token, if any, has been verified).
type SASLExchange interface {
	Next(challenge []byte) (response []byte, done bool, err error)
}

// maxSASLSteps bounds the round trips of one exchange (DIGEST-MD5 takes
// two), so a confused server cannot keep a connection in the handshake.
const maxSASLSteps = 10

// ZooKeeper error codes a SASL reply may carry (KeeperException.Code).
const (
	codeAuthFailed        = -115 // AUTHFAILED
	codeSessionClosedSASL = -124 // SESSIONCLOSEDREQUIRESASLAUTH
)

// AuthError is a definitive refusal: ZooKeeper rejected the client's SASL
// credentials or the TLS handshake failed on a certificate. Retrying with
// the same configuration cannot succeed. Its message names the cause and
// never a secret.
type AuthError struct {
	Server string // "host:port" of the server that refused
	Err    error
}

func (e *AuthError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *AuthError) Unwrap() error { return e.Err }

// saslFailed builds the AuthError for a failed exchange with server.
func saslFailed(s *SASL, server string, cause error) *AuthError {
	return &AuthError{Server: server, Err: fmt.Errorf(
		"ZooKeeper SASL authentication as user %s failed: server %s: %w", s.User, server, cause)}
}

// mechanism names s's mechanism in messages.
func (s *SASL) mechanism() string {
	if s.Mechanism == "" {
		return "SASL"
	}
	return s.Mechanism
}

// errTransient marks a failure of the exchange that says nothing about the
// credentials (the connection broke, a deadline passed).
var errTransient = errors.New("SASL exchange interrupted")

// authenticate runs one SASL exchange on conn, right after the server
// granted a session and before anything else is sent. A refusal is an
// *AuthError; an I/O failure wraps errTransient.
func authenticate(conn net.Conn, s *SASL, server string, maxFrame int) error {
	ex := s.New()
	var challenge []byte
	for step := 1; ; step++ {
		token, done, err := ex.Next(challenge)
		if err != nil {
			return saslFailed(s, server, err)
		}
		if done {
			return nil
		}
		if step > maxSASLSteps {
			return saslFailed(s, server, fmt.Errorf("no result after %d round trips", maxSASLSteps))
		}
		if token == nil {
			token = []byte{}
		}
		xid := int32(step)
		if _, err := conn.Write(saslRequest(xid, token)); err != nil {
			return fmt.Errorf("%w: %w", errTransient, err)
		}
		p, err := readFrame(conn, maxFrame)
		if err != nil {
			return fmt.Errorf("%w: %w", errTransient, err)
		}
		r, err := parseSASLReply(p)
		if err != nil {
			return saslFailed(s, server, err)
		}
		if r.xid != xid {
			return saslFailed(s, server, fmt.Errorf("reply for xid %d while waiting for %d", r.xid, xid))
		}
		switch r.err {
		case 0:
		case codeAuthFailed:
			return saslFailed(s, server, fmt.Errorf("the server rejected the %s credentials (AUTHFAILED)",
				s.mechanism()))
		case codeSessionClosedSASL:
			return saslFailed(s, server, fmt.Errorf("the server rejected the %s credentials and requires "+
				"SASL authentication (SESSIONCLOSEDREQUIRESASLAUTH)", s.mechanism()))
		default:
			return saslFailed(s, server, fmt.Errorf("the server answered with error code %d", r.err))
		}
		challenge = r.token
		if challenge == nil {
			challenge = []byte{}
		}
	}
}
