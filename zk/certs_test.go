package zk

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testPKI is a throwaway certificate authority with a server certificate
// for 127.0.0.1 and a client certificate, written as ZooKeeper's PEM key
// and trust stores.
type testPKI struct {
	roots      *x509.CertPool // the CA, for clients
	client     tls.Certificate
	keyStore   string // server key (RSA PKCS#8, what ZooKeeper 3.8 reads) + chain
	trustStore string // the CA, for the server to check client certificates
}

type issuer struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// newCA makes a self-signed CA.
func newCA(t *testing.T, name string) issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := certTemplate(name)
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return issuer{cert, key}
}

func certTemplate(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
	}
}

// issue signs a leaf certificate for key with the given usage; server
// certificates name 127.0.0.1 and localhost.
func (ca issuer) issue(t *testing.T, cn string, key crypto.Signer, usage x509.ExtKeyUsage) []byte {
	t.Helper()
	tmpl := certTemplate(cn)
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// newTestPKI writes the stores into dir.
func newTestPKI(t *testing.T, dir string) *testPKI {
	t.Helper()
	ca := newCA(t, "zk test CA")
	p := &testPKI{roots: x509.NewCertPool()}
	p.roots.AddCert(ca.cert)

	serverKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	serverDER := ca.issue(t, "zk server", serverKey, x509.ExtKeyUsageServerAuth)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(serverKey)
	if err != nil {
		t.Fatal(err)
	}
	p.keyStore = filepath.Join(dir, "server.pem")
	writePEM(t, p.keyStore, pemBlock("PRIVATE KEY", pkcs8), pemBlock("CERTIFICATE", serverDER),
		pemBlock("CERTIFICATE", ca.cert.Raw))
	p.trustStore = filepath.Join(dir, "ca.pem")
	writePEM(t, p.trustStore, pemBlock("CERTIFICATE", ca.cert.Raw))

	clientKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	clientDER := ca.issue(t, "sidecar", clientKey, x509.ExtKeyUsageClientAuth)
	p.client = tls.Certificate{Certificate: [][]byte{clientDER}, PrivateKey: clientKey}
	return p
}

// clientTLS returns the configuration of a client that trusts the CA and
// presents its client certificate.
func (p *testPKI) clientTLS() *tls.Config {
	return &tls.Config{RootCAs: p.roots, Certificates: []tls.Certificate{p.client}}
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func writePEM(t *testing.T, path string, blocks ...[]byte) {
	t.Helper()
	var all []byte
	for _, b := range blocks {
		all = append(all, b...)
	}
	if err := os.WriteFile(path, all, 0o600); err != nil {
		t.Fatal(err)
	}
}
