package zk

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// transport dials ZooKeeper servers for go-zookeeper when TLS or SASL is
// configured. It makes the TLS handshake inside the dial, and wraps the
// connection so that the SASL exchange runs between the server's
// ConnectResponse and go-zookeeper reading it: go-zookeeper sees a session
// only once it is authenticated, and sends nothing before.
type transport struct {
	ctx      context.Context // ended by Client.Close
	tls      *tls.Config
	sasl     *SASL
	timeout  time.Duration // bounds the TLS handshake, and the SASL handshake
	maxFrame int
	// refused is told about every definitive refusal (*AuthError).
	refused func(*AuthError)
	log     hclog.Logger
}

// dial is a go-zookeeper Dialer.
func (t *transport) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(t.ctx, max(timeout, time.Second))
	defer cancel()
	var d net.Dialer
	raw, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	conn := raw
	if t.tls != nil {
		tc := tls.Client(raw, tlsFor(t.tls, addr))
		hctx, hcancel := context.WithTimeout(t.ctx, t.timeout)
		err := tc.HandshakeContext(hctx)
		hcancel()
		if err != nil {
			raw.Close()
			return nil, t.tlsError(addr, err)
		}
		conn = tc
	}
	return &authConn{Conn: conn, t: t, server: addr}, nil
}

// tlsFor is cfg for a connection to addr: its server name defaults to
// addr's host.
func tlsFor(cfg *tls.Config, addr string) *tls.Config {
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg.ServerName = host
	}
	return cfg
}

// tlsError returns err, as an *AuthError reported to t.refused when it is
// a definitive refusal.
func (t *transport) tlsError(addr string, err error) error {
	why := tlsRefusal(err)
	if why == "" {
		return err
	}
	ae := &AuthError{Server: addr, Err: fmt.Errorf("ZooKeeper TLS connection to %s failed: %s: %w", addr, why, err)}
	t.refused(ae)
	return ae
}

// tlsRefusal names the cause of a TLS failure that retrying cannot fix, or
// returns "" for one that it might (timeouts, resets).
func tlsRefusal(err error) string {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		header   tls.RecordHeaderError
		op       *net.OpError
	)
	switch {
	case errors.As(err, &hostname):
		return "the server certificate does not match the host name"
	case errors.As(err, &unknown):
		return "the server certificate is not signed by a trusted authority"
	case errors.As(err, &invalid):
		return "the server certificate is not valid"
	case errors.As(err, &verify):
		return "the server certificate could not be verified"
	case errors.As(err, &header):
		return "the server does not speak TLS (is this its secureClientPort?)"
	case errors.As(err, &op) && op.Op == "remote error":
		return "the server refused the TLS handshake (client certificate missing, untrusted or " +
			"rejected, or no common protocol version)"
	}
	return ""
}

// authConn is a connection whose first Read completes the handshake: it
// reads the server's first packet (the ConnectResponse to the request
// go-zookeeper has just written), runs the SASL exchange if the server
// granted a session, and then hands the ConnectResponse to go-zookeeper.
type authConn struct {
	net.Conn
	t      *transport
	server string

	mu            sync.Mutex // guards the deadlines go-zookeeper asked for
	readDeadline  time.Time
	writeDeadline time.Time

	started bool   // the handshake ran (Read is not concurrent)
	pending []byte // the rest of the ConnectResponse for go-zookeeper
}

func (c *authConn) Read(p []byte) (int, error) {
	if !c.started {
		c.started = true
		resp, err := c.handshake()
		if err != nil {
			return 0, err
		}
		c.pending = resp
	}
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// handshake reads the ConnectResponse and authenticates, bounded by the
// transport's timeout and Client.Close, then restores go-zookeeper's
// deadlines. It returns the ConnectResponse packet.
func (c *authConn) handshake() ([]byte, error) {
	deadline := time.Now().Add(c.t.timeout)
	c.mu.Lock()
	if rd := c.readDeadline; !rd.IsZero() && rd.Before(deadline) {
		deadline = rd
	}
	c.mu.Unlock()
	if err := c.Conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(c.t.ctx, func() { c.Conn.SetDeadline(time.Now()) })
	defer func() {
		stop()
		c.mu.Lock()
		c.Conn.SetReadDeadline(c.readDeadline)
		c.Conn.SetWriteDeadline(c.writeDeadline)
		c.mu.Unlock()
	}()

	maxFrame := min(c.t.maxFrame, handshakeMaxFrame)
	p, err := readFrame(c.Conn, maxFrame)
	if err != nil {
		if c.t.tls != nil {
			// TLS 1.3 delivers the server's refusal of the client
			// certificate as an alert on the first read.
			return nil, c.t.tlsError(c.server, err)
		}
		return nil, err
	}
	if c.t.sasl == nil {
		return p, nil
	}
	cr, err := parseConnectResponse(p)
	if err != nil {
		return nil, err
	}
	if !cr.live() {
		// An expired session: go-zookeeper starts a new one on the next
		// connection, which is authenticated then.
		return p, nil
	}
	if err := authenticate(c.Conn, c.t.sasl, c.server, maxFrame); err != nil {
		var ae *AuthError
		if errors.As(err, &ae) {
			c.t.refused(ae)
		}
		return nil, err
	}
	c.t.log.Debug("SASL authentication succeeded", "server", c.server,
		"mechanism", c.t.sasl.Mechanism, "user", c.t.sasl.User)
	return p, nil
}

// Write passes through; before the handshake a TLS refusal is reported as
// on Read.
func (c *authConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil && !c.started && c.t.tls != nil {
		return n, c.t.tlsError(c.server, err)
	}
	return n, err
}

func (c *authConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline, c.writeDeadline = t, t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}

func (c *authConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.readDeadline = t
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *authConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.writeDeadline = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}
