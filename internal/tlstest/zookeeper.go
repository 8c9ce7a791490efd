package tlstest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// ServerOptions choose how StartZooKeeperWith sets up the server's TLS.
type ServerOptions struct {
	// ClientAuth is ssl.clientAuth: "need", "want" or "none"; "" leaves
	// ZooKeeper's default (need).
	ClientAuth string
	// Format is the format of the server's key store and trust store
	// (PKCS12, JKS or PEM); "" means PKCS12. A PEM key store is the
	// identity's PlainPEM (see StartZooKeeperWith).
	Format string
	// Identity is the server's key and certificate; nil means kit.Server.
	Identity *Identity
	// ExtraConfig lines are added to zoo.cfg, for example
	// "ssl.protocol=TLSv1.3".
	ExtraConfig []string
	// JVMFlags are added to the server's java command line, for example
	// the JAAS file of a server that also requires SASL.
	JVMFlags []string
	// Probe replaces the readiness check, an anonymous TLS session that
	// reads "/" (which a server requiring SASL refuses).
	Probe func(ctx context.Context, s *zktest.Server) error
}

// StartZooKeeper starts a TLS-only ZooKeeper (no plain port) whose key
// store is the kit's Server and whose trust store is the kit's CA, both
// PKCS12, with ssl.clientAuth set to clientAuth. Clients connect to
// SecureAddr. The server stops when the test ends.
func StartZooKeeper(tb testing.TB, kit *Kit, clientAuth string) *zktest.Server {
	tb.Helper()
	return StartZooKeeperWith(tb, kit, ServerOptions{ClientAuth: clientAuth})
}

// StartZooKeeperWith is StartZooKeeper with a choice of store format and
// server identity.
func StartZooKeeperWith(tb testing.TB, kit *Kit, opts ServerOptions) *zktest.Server {
	tb.Helper()
	zktest.SkipIfShort(tb)
	if opts.Format == "" {
		opts.Format = PKCS12
	}
	if opts.Identity == nil {
		opts.Identity = kit.Server
	}
	keyStore := []string{
		"ssl.keyStore.location=" + opts.Identity.Stores[opts.Format],
		"ssl.keyStore.password=" + kit.Password,
	}
	if opts.Format == PEM {
		// ZooKeeper on Java 17 cannot decrypt a PBES2-encrypted PEM key
		// ("PBES2 SecretKeyFactory not available"), the only kind Go's
		// PKCS#8 library writes, so the server gets the key unencrypted.
		keyStore = []string{"ssl.keyStore.location=" + opts.Identity.PlainPEM}
	}
	extra := append(keyStore,
		"ssl.keyStore.type="+opts.Format,
		"ssl.trustStore.location="+kit.CA.Trust[opts.Format],
		"ssl.trustStore.password="+kit.Password,
		"ssl.trustStore.type="+opts.Format,
	)
	if opts.ClientAuth != "" {
		extra = append(extra, "ssl.clientAuth="+opts.ClientAuth)
	}
	extra = append(extra, opts.ExtraConfig...)
	// The probe checks the server's own name, whatever it is.
	probeTLS := kit.ClientTLS(serverName(opts.Identity))
	cfg := zktest.ServerConfig{
		Dir:         tb.TempDir(),
		Secure:      true,
		NoPlainPort: true,
		ExtraConfig: extra,
		JVMFlags:    opts.JVMFlags,
		Probe:       opts.Probe,
	}
	if cfg.Probe == nil {
		cfg.Probe = func(ctx context.Context, s *zktest.Server) error {
			conn, err := Session(ctx, s.SecureAddr, probeTLS)
			if err != nil {
				return err
			}
			defer conn.Close()
			_, _, err = conn.Get("/")
			return err
		}
	}
	s, err := zktest.StartConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("tlstest: starting a TLS ZooKeeper: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// serverName is a name the identity's certificate is valid for.
func serverName(id *Identity) string {
	if len(id.Cert.DNSNames) > 0 {
		return id.Cert.DNSNames[0]
	}
	if len(id.Cert.IPAddresses) > 0 {
		return id.Cert.IPAddresses[0].String()
	}
	return id.Cert.Subject.CommonName
}

// Session connects a go-zookeeper client to addr over TLS with a clone of
// cfg (ServerName set to addr's host unless set) and waits until the
// client has a session, or its first connection fails (the TLS handshake,
// or the server closing it before a session), or ctx ends. On success the
// caller closes the connection.
func Session(ctx context.Context, addr string, cfg *tls.Config) (*gozk.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	c := cfg.Clone()
	if c.ServerName == "" {
		c.ServerName = host
	}
	failed := make(chan error, 1)
	dial := func(network, address string, timeout time.Duration) (net.Conn, error) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, c)
		if err != nil {
			select {
			case failed <- err:
			default:
			}
		}
		return conn, err
	}
	conn, events, err := gozk.Connect([]string{addr}, 10*time.Second,
		gozk.WithDialer(dial), gozk.WithLogger(nopLogger{}), gozk.WithLogInfo(false))
	if err != nil {
		return nil, err
	}
	connected := false
	for {
		select {
		case ev := <-events:
			switch ev.State {
			case gozk.StateHasSession:
				return conn, nil
			case gozk.StateConnected:
				connected = true
			case gozk.StateDisconnected, gozk.StateAuthFailed, gozk.StateExpired:
				if connected {
					conn.Close()
					return nil, fmt.Errorf("tlstest: %s closed the connection before a session (%v)", addr, ev.State)
				}
			}
		case err := <-failed:
			conn.Close()
			return nil, fmt.Errorf("tlstest: TLS to %s: %w", addr, err)
		case <-ctx.Done():
			conn.Close()
			return nil, errors.Join(fmt.Errorf("tlstest: no session from %s", addr), ctx.Err())
		}
	}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
