package tlstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Store formats, as ZooKeeper names them.
const (
	PKCS12 = "PKCS12"
	JKS    = "JKS"
	PEM    = "PEM"
)

// Formats lists the three store formats, for table-driven tests.
func Formats() []string { return []string{PKCS12, JKS, PEM} }

// Authority is a certificate authority and its trust stores.
type Authority struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// Trust holds the trust store files (the authority's certificate) by
	// format: PKCS12 (Java's trusted-certificate attribute), JKS (a trusted
	// certificate entry) and PEM.
	Trust map[string]string
}

// Identity is a key with its certificate chain (leaf first) and its key
// store files.
type Identity struct {
	Cert  *x509.Certificate
	Key   crypto.Signer
	Chain []*x509.Certificate
	// Stores holds the key store files by format: PKCS12, JKS and PEM (an
	// encrypted PKCS#8 key and the chain). PlainPEM is the same PEM store
	// with the key not encrypted.
	Stores   map[string]string
	PlainPEM string
}

// TLSCertificate is the identity as a tls.Certificate.
func (id *Identity) TLSCertificate() tls.Certificate {
	c := tls.Certificate{PrivateKey: id.Key, Leaf: id.Cert}
	for _, cert := range id.Chain {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	return c
}

// Kit is the set of authorities, identities and store files of one test.
type Kit struct {
	// Dir holds every file of the kit.
	Dir string
	// Password opens every store and encrypts every key.
	Password string
	// PasswordFile holds Password followed by a newline, as a
	// *.passwordPath file usually does.
	PasswordFile string

	// CA signs Server, Client and WrongNameServer; OtherCA signs nothing
	// here, for "untrusted" cases.
	CA, OtherCA *Authority
	// Server is valid for 127.0.0.1 and localhost (server authentication).
	Server *Identity
	// Client is for client authentication, named "fluss-sidecar".
	Client *Identity
	// WrongNameServer is a server certificate from CA for
	// wrong.example.invalid only, for hostname verification cases.
	WrongNameServer *Identity
}

// New makes a kit in a fresh temporary directory of tb. It fails the test
// on any error.
func New(tb testing.TB) *Kit {
	tb.Helper()
	k, err := newKit(tb.TempDir())
	if err != nil {
		tb.Fatalf("tlstest: %v", err)
	}
	return k
}

func newKit(dir string) (*Kit, error) {
	k := &Kit{Dir: dir, Password: "kit-secret-1", PasswordFile: filepath.Join(dir, "password.txt")}
	if err := os.WriteFile(k.PasswordFile, []byte(k.Password+"\n"), 0o600); err != nil {
		return nil, err
	}
	var err error
	if k.CA, err = k.authority("ca", "tlstest CA"); err != nil {
		return nil, err
	}
	if k.OtherCA, err = k.authority("other-ca", "tlstest other CA"); err != nil {
		return nil, err
	}
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "zookeeper"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if k.Server, err = k.identity("server", server, k.CA); err != nil {
		return nil, err
	}
	client := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "fluss-sidecar"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if k.Client, err = k.identity("client", client, k.CA); err != nil {
		return nil, err
	}
	wrong := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "wrong.example.invalid"},
		DNSNames:    []string{"wrong.example.invalid"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if k.WrongNameServer, err = k.identity("wrong-name-server", wrong, k.CA); err != nil {
		return nil, err
	}
	return k, nil
}

// newKey makes an ECDSA P-256 key, which Java and Go both handle.
func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func serial() (*big.Int, error) { return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62)) }

func (k *Kit) authority(name, cn string) (*Authority, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	a := &Authority{Cert: cert, Key: key}
	a.Trust, err = k.writeTrustStores(name+"-trust", cert)
	return a, err
}

func (k *Kit) identity(name string, tmpl *x509.Certificate, ca *Authority) (*Identity, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	if tmpl.SerialNumber, err = serial(); err != nil {
		return nil, err
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	id := &Identity{Cert: cert, Key: key, Chain: []*x509.Certificate{cert, ca.Cert}}
	if err := k.writeKeyStores(name, id); err != nil {
		return nil, err
	}
	return id, nil
}

// ClientTLS is a client config made straight from the kit (not through
// any store file): the client certificate, CA as the only root, and
// serverName to check.
func (k *Kit) ClientTLS(serverName string) *tls.Config {
	roots := x509.NewCertPool()
	roots.AddCert(k.CA.Cert)
	return &tls.Config{
		Certificates: []tls.Certificate{k.Client.TLSCertificate()},
		RootCAs:      roots,
		ServerName:   serverName,
		MinVersion:   tls.VersionTLS12,
	}
}
