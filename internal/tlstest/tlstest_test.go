package tlstest_test

import (
	"crypto/x509"
	"os"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/tlstest"
)

// TestKitCertificates: the kit's chains verify the way the tests rely on:
// Server for 127.0.0.1 and localhost under CA, Client for client
// authentication, WrongNameServer not for 127.0.0.1, nothing under OtherCA.
func TestKitCertificates(t *testing.T) {
	k := tlstest.New(t)
	roots, other := x509.NewCertPool(), x509.NewCertPool()
	roots.AddCert(k.CA.Cert)
	other.AddCert(k.OtherCA.Cert)
	cases := []struct {
		name    string
		cert    *x509.Certificate
		roots   *x509.CertPool
		host    string
		usage   x509.ExtKeyUsage
		wantErr bool
	}{
		{"server by IP", k.Server.Cert, roots, "127.0.0.1", x509.ExtKeyUsageServerAuth, false},
		{"server by name", k.Server.Cert, roots, "localhost", x509.ExtKeyUsageServerAuth, false},
		{"client", k.Client.Cert, roots, "", x509.ExtKeyUsageClientAuth, false},
		{"wrong name", k.WrongNameServer.Cert, roots, "127.0.0.1", x509.ExtKeyUsageServerAuth, true},
		{"wrong name, own name", k.WrongNameServer.Cert, roots, "wrong.example.invalid", x509.ExtKeyUsageServerAuth, false},
		{"other CA", k.Server.Cert, other, "", x509.ExtKeyUsageServerAuth, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cert.Verify(x509.VerifyOptions{Roots: c.roots, DNSName: c.host, KeyUsages: []x509.ExtKeyUsage{c.usage}})
			if (err != nil) != c.wantErr {
				t.Fatalf("verify: %v, want error %v", err, c.wantErr)
			}
		})
	}
}

// TestKitFiles: every store file exists, and the password file ends with
// the newline ZooKeeper drops.
func TestKitFiles(t *testing.T) {
	k := tlstest.New(t)
	for _, f := range tlstest.Formats() {
		for _, p := range []string{k.Server.Stores[f], k.Client.Stores[f], k.WrongNameServer.Stores[f], k.CA.Trust[f], k.OtherCA.Trust[f]} {
			if st, err := os.Stat(p); err != nil || st.Size() == 0 {
				t.Errorf("%s store %s: %v", f, p, err)
			}
		}
	}
	b, err := os.ReadFile(k.PasswordFile)
	if err != nil || string(b) != k.Password+"\n" {
		t.Fatalf("password file: %q, %v", b, err)
	}
}

// TestKeytool: Java's keytool reads the kit's PKCS12 store and writes the
// Java stores the zktls tests read.
func TestKeytool(t *testing.T) {
	k := tlstest.New(t)
	js := k.Keytool(t)
	for _, p := range []string{js.ClientJKS, js.ClientPKCS12, js.TrustJKS, js.TrustPKCS12, js.SelfPKCS12} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestStartZooKeeper: a TLS-only ZooKeeper starts from the kit's stores in
// each format (its probe is a TLS session with the client certificate)
// and has no plain port.
func TestStartZooKeeper(t *testing.T) {
	k := tlstest.New(t)
	for _, f := range []string{tlstest.PKCS12, tlstest.JKS} {
		t.Run(f, func(t *testing.T) {
			s := tlstest.StartZooKeeperWith(t, k, tlstest.ServerOptions{ClientAuth: "need", Format: f})
			if s.SecureAddr == "" || !strings.HasPrefix(s.SecureAddr, "127.0.0.1:") {
				t.Fatalf("SecureAddr %q", s.SecureAddr)
			}
			conn, err := tlstest.Session(t.Context(), s.SecureAddr, k.ClientTLS(""))
			if err != nil {
				t.Fatal(err)
			}
			conn.Close()
		})
	}
}
