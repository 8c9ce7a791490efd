package zk

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/tlstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// tls13Suites are the TLS 1.3 cipher suites a TLSv1.3 server is given:
// ZooKeeper 3.8's default suites are TLS 1.2 ones only.
const tls13Suites = "ssl.ciphersuites=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256"

// tlsServerOptions are the options of a private TLS-only server (the
// kit's Server identity, clientAuth=need) speaking the given TLS protocol:
// "TLSv1.2", ZooKeeper 3.8's default, or "TLSv1.3".
func tlsServerOptions(protocol string) tlstest.ServerOptions {
	opts := tlstest.ServerOptions{
		ClientAuth:  "need",
		ExtraConfig: []string{"ssl.protocol=" + protocol, "ssl.enabledProtocols=" + protocol},
	}
	if protocol == "TLSv1.3" {
		opts.ExtraConfig = append(opts.ExtraConfig, tls13Suites)
	}
	return opts
}

// TestTLS runs over a TLS-only server with clientAuth=need, in both TLS
// versions (1.3 reports a refused client certificate only at the first
// read): a client with a trusted certificate works; a client without a
// certificate, one that does not trust the server's CA, and one that
// expects another host name fail at once, each with an error naming the
// cause.
func TestTLS(t *testing.T) {
	kit := tlstest.New(t)
	for _, protocol := range []string{"TLSv1.2", "TLSv1.3"} {
		t.Run(protocol, func(t *testing.T) {
			srv := tlstest.StartZooKeeperWith(t, kit, tlsServerOptions(protocol))
			wantVersion := map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}[protocol]
			conn, err := tls.Dial("tcp", srv.SecureAddr, kit.ClientTLS("127.0.0.1"))
			if err != nil {
				t.Fatal(err)
			}
			if v := conn.ConnectionState().Version; v != wantVersion {
				t.Fatalf("server negotiated %s, want %s", tls.VersionName(v), protocol)
			}
			conn.Close()

			t.Run("create and get", func(t *testing.T) {
				c := connect(t, srv.SecureAddr, zktest.UniqueRoot(), func(c *Config) { c.TLS = kit.ClientTLS("") })
				registerLikeWork(t, c)
				ctx := t.Context()
				if _, err := c.Create(ctx, "/x", []byte("over tls"), Persistent); err != nil {
					t.Fatal(err)
				}
				if data, _, err := c.Get(ctx, "/x"); err != nil || string(data) != "over tls" {
					t.Fatalf("Get = %q, %v", data, err)
				}
			})

			refusals := []struct {
				name, want string
				tls        func() *tls.Config
			}{
				{"no client certificate", "refused the TLS handshake", func() *tls.Config {
					cfg := kit.ClientTLS("")
					cfg.Certificates = nil
					return cfg
				}},
				{"untrusted server certificate", "not signed by a trusted authority", func() *tls.Config {
					other := x509.NewCertPool()
					other.AddCert(kit.OtherCA.Cert)
					cfg := kit.ClientTLS("")
					cfg.RootCAs = other
					return cfg
				}},
				{"host name mismatch", "does not match the host name", func() *tls.Config {
					// The kit's Server is valid for 127.0.0.1 and localhost
					// only; WrongNameServer's name, expected here, is not
					// among them.
					return kit.ClientTLS(kit.WrongNameServer.Cert.DNSNames[0])
				}},
			}
			for _, tt := range refusals {
				t.Run(tt.name, func(t *testing.T) {
					ae := connectRefused(t, srv.SecureAddr, func(c *Config) { c.TLS = tt.tls() })
					if !strings.Contains(ae.Error(), tt.want) || !strings.Contains(ae.Error(), "ZooKeeper TLS connection to "+srv.SecureAddr) {
						t.Fatalf("error %q does not say %q", ae, tt.want)
					}
				})
			}
		})
	}
}

// TestSASLOverTLS authenticates with SASL inside TLS, as a server with
// both secureClientPort and enforce.auth requires.
func TestSASLOverTLS(t *testing.T) {
	kit := tlstest.New(t)
	sasl, err := zktest.SASLServerConfig(t.TempDir(), testUsers(), zktest.SASLEnforced)
	if err != nil {
		t.Fatal(err)
	}
	opts := tlsServerOptions("TLSv1.2")
	opts.ExtraConfig = append(opts.ExtraConfig, sasl.ExtraConfig...)
	opts.JVMFlags = sasl.JVMFlags
	// The default probe reads "/" in an anonymous session, which the
	// server refuses; "srvr" needs no session.
	opts.Probe = zktest.SrvrProbe(kit.ClientTLS("127.0.0.1"))
	srv := tlstest.StartZooKeeperWith(t, kit, opts)

	c := connect(t, srv.SecureAddr, zktest.UniqueRoot(), withSASL("bob", "bobsecret"),
		func(c *Config) { c.TLS = kit.ClientTLS("") })
	registerLikeWork(t, c)
	ae := connectRefused(t, srv.SecureAddr, withSASL("bob", "wrong"), func(c *Config) { c.TLS = kit.ClientTLS("") })
	if !strings.Contains(ae.Error(), "ZooKeeper SASL authentication as user bob failed") {
		t.Fatalf("error %q does not name the SASL failure", ae)
	}
}
