package zktls_test

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/tlstest"
)

// handshake runs a TLS handshake over an in-memory pipe between a client
// with cfg (ServerName 127.0.0.1 unless set, as the transport sets it) and
// a Go server presenting server and requiring a client certificate from
// the kit's CA. It returns the client's error, or else the server's.
func handshake(t *testing.T, k *tlstest.Kit, server *tlstest.Identity, cfg *tls.Config) error {
	t.Helper()
	clientConn, serverConn := net.Pipe()
	defer clientConn.Close()
	cas := x509.NewCertPool()
	cas.AddCert(k.CA.Cert)
	srv := tls.Server(serverConn, &tls.Config{
		Certificates:           []tls.Certificate{server.TLSCertificate()},
		ClientAuth:             tls.RequireAndVerifyClientCert,
		ClientCAs:              cas,
		SessionTicketsDisabled: true, // nothing is written after the handshake
	})
	done := make(chan error, 1)
	go func() {
		err := srv.Handshake()
		serverConn.Close()
		done <- err
	}()
	c := cfg.Clone()
	if c.ServerName == "" {
		c.ServerName = "127.0.0.1"
	}
	err := tls.Client(clientConn, c).Handshake()
	if err != nil {
		clientConn.Close()
		<-done
		return err
	}
	if err := <-done; err != nil {
		return errors.New("server: " + err.Error())
	}
	return nil
}

func mustEC(t *testing.T, id *tlstest.Identity) *ecdsa.PrivateKey {
	t.Helper()
	k, ok := id.Key.(*ecdsa.PrivateKey)
	if !ok {
		t.Fatalf("kit key is %T, not ECDSA", id.Key)
	}
	return k
}
