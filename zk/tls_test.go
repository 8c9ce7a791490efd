package zk

import (
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// startTLSServer starts a private server with only a TLS client port that
// requires client certificates, speaking the given TLS protocol
// ("TLSv1.2", ZooKeeper 3.8's default, or "TLSv1.3"); extra adds zoo.cfg
// lines and JVM flags of another configuration (SASL).
func startTLSServer(t *testing.T, protocol string, extra *zktest.ServerConfig) (*zktest.Server, *testPKI) {
	t.Helper()
	dir := t.TempDir()
	pki := newTestPKI(t, dir)
	cfg, err := zktest.TLSServerConfig(dir, pki.keyStore, pki.trustStore, pki.clientTLS())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ExtraConfig = append(cfg.ExtraConfig, "ssl.protocol="+protocol, "ssl.enabledProtocols="+protocol)
	if protocol == "TLSv1.3" {
		// ZooKeeper 3.8's default cipher suites are TLS 1.2 ones only.
		cfg.ExtraConfig = append(cfg.ExtraConfig,
			"ssl.ciphersuites=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256")
	}
	if extra != nil {
		cfg.ExtraConfig = append(cfg.ExtraConfig, extra.ExtraConfig...)
		cfg.JVMFlags = append(cfg.JVMFlags, extra.JVMFlags...)
	}
	s, err := zktest.StartConfig(zktest.Context(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, pki
}

// TestTLS runs over a TLS-only server with clientAuth=need, in both TLS
// versions (1.3 reports a refused client certificate only at the first
// read): a client with a trusted certificate works; a client without a
// certificate, one that does not trust the server's CA, and one that
// expects another host name fail at once, each with an error naming the
// cause.
func TestTLS(t *testing.T) {
	for _, protocol := range []string{"TLSv1.2", "TLSv1.3"} {
		t.Run(protocol, func(t *testing.T) {
			srv, pki := startTLSServer(t, protocol, nil)

			t.Run("create and get", func(t *testing.T) {
				c := connect(t, srv.SecureAddr, zktest.UniqueRoot(), func(c *Config) { c.TLS = pki.clientTLS() })
				registerLikeWork(t, c)
				ctx := zktest.Context(t)
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
					return &tls.Config{RootCAs: pki.roots}
				}},
				{"untrusted server certificate", "not signed by a trusted authority", func() *tls.Config {
					other := x509.NewCertPool()
					other.AddCert(newCA(t, "another CA").cert)
					cfg := pki.clientTLS()
					cfg.RootCAs = other
					return cfg
				}},
				{"host name mismatch", "does not match the host name", func() *tls.Config {
					cfg := pki.clientTLS()
					cfg.ServerName = "zk.example.com"
					return cfg
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
	sasl, err := zktest.SASLServerConfig(t.TempDir(), testUsers(), zktest.SASLEnforced)
	if err != nil {
		t.Fatal(err)
	}
	srv, pki := startTLSServer(t, "TLSv1.2", &sasl)
	c := connect(t, srv.SecureAddr, zktest.UniqueRoot(), withSASL("bob", "bobsecret"),
		func(c *Config) { c.TLS = pki.clientTLS() })
	registerLikeWork(t, c)
	ae := connectRefused(t, srv.SecureAddr, withSASL("bob", "wrong"), func(c *Config) { c.TLS = pki.clientTLS() })
	if !strings.Contains(ae.Error(), "ZooKeeper SASL authentication as user bob failed") {
		t.Fatalf("error %q does not name the SASL failure", ae)
	}
}
