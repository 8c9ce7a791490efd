package zktls

import (
	"crypto/x509"
	"errors"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// loadTrustStore reads the trusted certificates of st into a pool.
func loadTrustStore(st Store) (*x509.CertPool, error) {
	data, typ, pass, err := readStore(propTrustStore, st)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	switch {
	case typ == typePEM:
		_, blocks := pemBlocks(data)
		certs, err = parseCerts(propTrustStore, st, blocks)
	case binaryFormat(typ, data) == typeJKS:
		certs, err = jksTrustStore(st, data, pass)
	default:
		certs, err = pkcs12TrustStore(st, data, pass)
	}
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, storeError(propTrustStore, st, "no trusted certificate found")
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// jksTrustStore reads the trusted-certificate entries of a JKS store; key
// entries are not trust anchors.
func jksTrustStore(st Store, data []byte, pass string) ([]*x509.Certificate, error) {
	ks, err := loadJKS(propTrustStore, st, data, pass)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(alias) {
			continue
		}
		e, err := ks.GetTrustedCertificateEntry(alias)
		if err != nil {
			return nil, storeError(propTrustStore, st, "entry %q: %v", alias, err)
		}
		c, err := x509.ParseCertificate(e.Certificate.Content)
		if err != nil {
			return nil, storeError(propTrustStore, st, "entry %q: %v", alias, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// pkcs12TrustStore reads a PKCS12 trust store as Java writes one: every
// certificate carries Java's trusted-certificate attribute.
func pkcs12TrustStore(st Store, data []byte, pass string) ([]*x509.Certificate, error) {
	if err := checkPKCS12Rounds(data); err != nil {
		return nil, storeError(propTrustStore, st, "not a readable PKCS12 trust store: %v", err)
	}
	certs, err := decodeGuarded(func() ([]*x509.Certificate, error) { return pkcs12.DecodeTrustStore(data, pass) })
	switch {
	case err == nil:
		return certs, nil
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		return nil, storeError(propTrustStore, st, "wrong password (%s.password or %s.passwordPath)", propTrustStore, propTrustStore)
	case strings.Contains(err.Error(), "not marked as trusted") || strings.Contains(err.Error(), "only certificate bags") ||
		strings.Contains(err.Error(), "items in the authenticated safe"): // a key store has a key part and a certificate part
		return nil, storeError(propTrustStore, st, "holds entries other than trusted certificates "+
			"(a key, or a certificate without Java's trust attribute); make it with `keytool -importcert`")
	default:
		return nil, storeError(propTrustStore, st, "not a readable PKCS12 trust store: %v", err)
	}
}
