package zktls_test

import (
	"crypto/tls"
	"strings"
	"testing"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/tlstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/zk/zktls"
)

// stores is the kit's client key store and a trust store in format f.
func stores(k *tlstest.Kit, f string, trust *tlstest.Authority) zktls.Settings {
	s := zktls.Settings{
		KeyStore:             zktls.Store{Location: k.Client.Stores[f], PasswordPath: k.PasswordFile},
		TrustStore:           zktls.Store{Location: trust.Trust[f], PasswordPath: k.PasswordFile},
		HostnameVerification: true,
	}
	return s
}

// roundTrip connects to the TLS port of s with cfg, then creates a znode
// and reads it back.
func roundTrip(t *testing.T, s *zktest.Server, cfg *tls.Config) error {
	t.Helper()
	conn, err := tlstest.Session(t.Context(), s.SecureAddr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	path := zktest.UniqueRoot()
	if _, err := conn.Create(path, []byte("tls"), 0, gozk.WorldACL(gozk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	data, _, err := conn.Get(path)
	if err != nil || string(data) != "tls" {
		t.Fatalf("get %s: %q, %v", path, data, err)
	}
	return nil
}

func build(t *testing.T, s zktls.Settings) *tls.Config {
	t.Helper()
	cfg, err := zktls.Build(s)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestZooKeeperClientStores: against a real TLS-only ZooKeeper 3.8 that
// needs a client certificate (its stores PKCS12), a client whose key store
// and trust store come through Build in each format gets a session and
// writes and reads a znode; without a key store, or trusting only the
// other CA, it gets none.
func TestZooKeeperClientStores(t *testing.T) {
	k := tlstest.New(t)
	server := tlstest.StartZooKeeper(t, k, "need")
	for _, f := range tlstest.Formats() {
		t.Run(f, func(t *testing.T) {
			if err := roundTrip(t, server, build(t, stores(k, f, k.CA))); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("no key store", func(t *testing.T) {
		s := stores(k, tlstest.PKCS12, k.CA)
		s.KeyStore = zktls.Store{}
		err := roundTrip(t, server, build(t, s))
		if err == nil || !(strings.Contains(err.Error(), "bad certificate") || strings.Contains(err.Error(), "certificate required")) {
			t.Fatalf("a client without a certificate: %v, want the server's certificate alert", err)
		}
	})
	t.Run("trusting the other CA", func(t *testing.T) {
		err := roundTrip(t, server, build(t, stores(k, tlstest.PKCS12, k.OtherCA)))
		if err == nil || !strings.Contains(err.Error(), "unknown authority") {
			t.Fatalf("a client that trusts only the other CA: %v, want an unknown authority error", err)
		}
	})
}

// TestZooKeeperServerStores: ZooKeeper reading its own stores as JKS and as
// PEM (an encrypted PKCS#8 key) agrees with Build reading the client's in
// every format.
func TestZooKeeperServerStores(t *testing.T) {
	k := tlstest.New(t)
	for _, sf := range []string{tlstest.JKS, tlstest.PEM} {
		t.Run("server "+sf, func(t *testing.T) {
			server := tlstest.StartZooKeeperWith(t, k, tlstest.ServerOptions{ClientAuth: "need", Format: sf})
			for _, f := range tlstest.Formats() {
				t.Run("client "+f, func(t *testing.T) {
					if err := roundTrip(t, server, build(t, stores(k, f, k.CA))); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}

// TestZooKeeperHostnameVerification: a ZooKeeper whose certificate names
// another host is refused with hostname verification on and accepted
// with it off (the chain still checked).
func TestZooKeeperHostnameVerification(t *testing.T) {
	k := tlstest.New(t)
	server := tlstest.StartZooKeeperWith(t, k, tlstest.ServerOptions{ClientAuth: "need", Identity: k.WrongNameServer})
	for _, verify := range []bool{true, false} {
		s := stores(k, tlstest.PKCS12, k.CA)
		s.HostnameVerification = verify
		err := roundTrip(t, server, build(t, s))
		if verify && (err == nil || !strings.Contains(err.Error(), "for 127.0.0.1")) {
			t.Errorf("hostname verification on: %v, want the certificate refused for its name", err)
		}
		if !verify && err != nil {
			t.Errorf("hostname verification off: %v", err)
		}
	}
}

// TestZooKeeperTLS13: with ZooKeeper set to TLSv1.3 and a TLS 1.3 suite,
// a client built with the same settings gets a session, and one without a
// key store is refused (under TLS 1.3 only after its side of the
// handshake, when the server reads its empty certificate).
func TestZooKeeperTLS13(t *testing.T) {
	k := tlstest.New(t)
	server := tlstest.StartZooKeeperWith(t, k, tlstest.ServerOptions{ClientAuth: "need", ExtraConfig: []string{
		"ssl.protocol=TLSv1.3", "ssl.ciphersuites=TLS_AES_128_GCM_SHA256",
	}})
	s := stores(k, tlstest.PEM, k.CA)
	s.Protocol, s.CipherSuites = "TLSv1.3", []string{"TLS_AES_128_GCM_SHA256"}
	cfg := build(t, s)
	if cfg.MinVersion != tls.VersionTLS13 {
		t.Fatalf("MinVersion %s, want TLS 1.3", tls.VersionName(cfg.MinVersion))
	}
	if err := roundTrip(t, server, cfg); err != nil {
		t.Fatal(err)
	}
	s.KeyStore = zktls.Store{}
	if err := roundTrip(t, server, build(t, s)); err == nil {
		t.Fatal("a client without a certificate got a session over TLS 1.3")
	}
}
