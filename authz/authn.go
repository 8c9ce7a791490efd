package authz

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Security protocols of a listener (security.protocol.map values).
const (
	ProtocolPlaintext = "PLAINTEXT"
	ProtocolSASL      = "SASL"
)

// MechanismPlain is the only SASL mechanism the sidecar implements.
const MechanismPlain = "PLAIN"

// Fluss's messages for authentication failures (code 46).
const (
	MsgNotAuthenticated = "The connection has not completed authentication yet. This may be caused by a missing or incorrect configuration of 'client.security.protocol' on the client side."
	MsgBadCredentials   = "Authentication failed: Invalid username or password"
	MsgFailedBefore     = "Authentication failed earlier on this connection; open a new connection to retry"
)

// ListenerSecurity is how one listener authenticates its connections.
type ListenerSecurity struct {
	// Protocol is ProtocolPlaintext or ProtocolSASL.
	Protocol string
	// Mechanisms are the enabled SASL mechanisms, upper case, in
	// configuration order (security.sasl.enabled.mechanisms).
	Mechanisms []string
	// Users are the PLAIN users of the listener (SASL only).
	Users *Credentials
}

// AuthConfig configures an Authenticator.
type AuthConfig struct {
	// Listeners maps a listener name to its security; a listener not in the
	// map is PLAINTEXT.
	Listeners map[string]ListenerSecurity
	// Timeout closes a connection on a SASL listener that has not
	// authenticated this long after it was accepted. 0 disables it.
	Timeout time.Duration
	Logger  hclog.Logger
}

// Authenticator runs the per-connection authentication state machine:
// PLAINTEXT connections are ANONYMOUS from the start; SASL connections may
// send only API_VERSIONS and AUTHENTICATE until a PLAIN login succeeds.
type Authenticator struct {
	cfg AuthConfig
	log hclog.Logger
}

// NewAuthenticator checks cfg and returns an Authenticator.
func NewAuthenticator(cfg AuthConfig) (*Authenticator, error) {
	for name, l := range cfg.Listeners {
		switch l.Protocol {
		case ProtocolPlaintext:
		case ProtocolSASL:
			if len(l.Mechanisms) == 0 {
				return nil, fmt.Errorf("listener %s: SASL needs at least one enabled mechanism", name)
			}
			for _, m := range l.Mechanisms {
				if m != MechanismPlain {
					return nil, fmt.Errorf("listener %s: SASL mechanism %s is not supported (only PLAIN)", name, m)
				}
			}
			if l.Users.Len() == 0 {
				return nil, fmt.Errorf("listener %s: SASL/PLAIN has no users: set security.sasl.plain.jaas.config or security.sasl.plain.credentials", name)
			}
		default:
			return nil, fmt.Errorf("listener %s: unknown security protocol %q", name, l.Protocol)
		}
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("authentication timeout %v is negative", cfg.Timeout)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Authenticator{cfg: cfg, log: cfg.Logger.Named("authz")}, nil
}

func (a *Authenticator) listener(name string) ListenerSecurity {
	if l, ok := a.cfg.Listeners[name]; ok {
		return l
	}
	return ListenerSecurity{Protocol: ProtocolPlaintext}
}

// Protocol returns the security protocol of a listener.
func (a *Authenticator) Protocol(listener string) string { return a.listener(listener).Protocol }

// PlainCredentialsKey is the wire.Session.Attrs key under which a
// successful SASL/PLAIN login stores its PlainCredentials, so that a proxy
// can log in upstream as the same user.
type PlainCredentialsKey struct{}

// PlainCredentials is what a client logged in with.
type PlainCredentials struct {
	User     string
	Password string
}

// PlainCredentialsOf returns the credentials a session logged in with.
func PlainCredentialsOf(s *wire.Session) (PlainCredentials, bool) {
	v, ok := s.Attrs.Load(PlainCredentialsKey{})
	if !ok {
		return PlainCredentials{}, false
	}
	c, ok := v.(PlainCredentials)
	return c, ok
}

// connState is the SASL state of one connection.
type connState struct {
	mu     sync.Mutex
	failed bool
}

type connStateKey struct{}

func stateOf(s *wire.Session) *connState {
	v, _ := s.Attrs.LoadOrStore(connStateKey{}, &connState{})
	return v.(*connState)
}

// OnConnect is a wire.ConnectFunc: on a SASL listener it closes the
// connection if it has not authenticated within the timeout.
func (a *Authenticator) OnConnect(ctx context.Context, s *wire.Session) {
	if a.listener(s.ListenerName).Protocol != ProtocolSASL || a.cfg.Timeout <= 0 {
		return
	}
	t := time.AfterFunc(a.cfg.Timeout, func() {
		if !s.Authenticated() {
			a.log.Info("closing connection that did not authenticate in time",
				"conn", s.ConnID, "remote", addrString(s), "timeout", a.cfg.Timeout)
			s.Close()
		}
	})
	context.AfterFunc(ctx, func() { t.Stop() })
}

// Gate is a wire.GateFunc: it admits every request on a PLAINTEXT listener
// (as ANONYMOUS) and, on a SASL listener, only API_VERSIONS and
// AUTHENTICATE until the connection has authenticated; other requests get
// code 46.
func (a *Authenticator) Gate(_ context.Context, s *wire.Session, h wire.RequestHeader) error {
	if s.Authenticated() {
		// Every request after a connection's first on a plaintext
		// listener, and after the login on a SASL one.
		return nil
	}
	if a.listener(s.ListenerName).Protocol == ProtocolPlaintext {
		if _, ok := s.Identity(); !ok {
			s.SetIdentity(AnonymousName, true)
		}
		return nil
	}
	if h.APIKey == messages.KeyAPIVersions || h.APIKey == messages.KeyAuthenticate {
		return nil
	}
	return refused(MsgNotAuthenticated)
}

// refused is apierr's answer to ErrNotAuthenticated with Fluss's text for
// the case.
func refused(text string) *flusserr.Error {
	return (&apierr.Error{Class: apierr.ErrNotAuthenticated, Detail: text}).Fluss()
}

// Authenticate serves one AUTHENTICATE request. It returns the challenge to
// send: nil means the response carries no challenge; a non-nil empty slice
// is the empty challenge that completes a PLAIN login. Errors are
// *flusserr.Error with code 46.
func (a *Authenticator) Authenticate(s *wire.Session, protocol string, token []byte) ([]byte, error) {
	l := a.listener(s.ListenerName)
	if l.Protocol == ProtocolPlaintext {
		if protocol != ProtocolPlaintext {
			return nil, (&apierr.Error{Class: apierr.ErrProtocolMismatch, ServerProtocol: ProtocolPlaintext, ClientProtocol: protocol}).Fluss()
		}
		if _, ok := s.Identity(); !ok {
			s.SetIdentity(AnonymousName, true)
		}
		return nil, nil
	}
	if !containsFold(l.Mechanisms, protocol) {
		return nil, refused("SASL server enables [" + strings.Join(l.Mechanisms, ", ") + "] while protocol of client is '" + protocol + "'")
	}
	st := stateOf(s)
	st.mu.Lock()
	defer st.mu.Unlock()
	if s.Authenticated() {
		// Complete already: the Rust client answers the empty challenge with
		// one more AUTHENTICATE, which gets an empty response.
		return nil, nil
	}
	if st.failed {
		return nil, refused(MsgFailedBefore)
	}
	tok, err := ParsePlainToken(token)
	if err != nil {
		st.failed = true
		a.log.Info("authentication failed", "conn", s.ConnID, "remote", addrString(s), "error", err)
		return nil, refused("Authentication failed: " + err.Error())
	}
	if !l.Users.Verify(tok.User, tok.Password) {
		st.failed = true
		a.log.Info("authentication failed", "conn", s.ConnID, "remote", addrString(s), "principal", tok.User)
		return nil, refused(MsgBadCredentials)
	}
	s.Attrs.Store(PlainCredentialsKey{}, PlainCredentials{User: tok.User, Password: tok.Password})
	s.SetIdentity(tok.User, true)
	a.log.Debug("authenticated", "conn", s.ConnID, "principal", tok.User)
	return []byte{}, nil
}

func containsFold(list []string, s string) bool {
	for _, m := range list {
		if strings.EqualFold(m, s) {
			return true
		}
	}
	return false
}

func addrString(s *wire.Session) string {
	if s.RemoteAddr == nil {
		return ""
	}
	return s.RemoteAddr.String()
}
