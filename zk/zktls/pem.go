package zktls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"strings"

	"github.com/youmark/pkcs8"
)

// pemBlocks splits a PEM file into its first private key block and its
// certificates, in file order. Other blocks are skipped, as ZooKeeper's
// reader skips them.
func pemBlocks(data []byte) (key *pem.Block, certs []*pem.Block) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return key, certs
		}
		switch {
		case strings.HasSuffix(b.Type, "PRIVATE KEY"):
			if key == nil {
				key = b
			}
		case strings.HasSuffix(b.Type, "CERTIFICATE"):
			certs = append(certs, b)
		}
	}
}

// parseCerts parses PEM certificate blocks.
func parseCerts(prop string, st Store, blocks []*pem.Block) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for i, b := range blocks {
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, storeError(prop, st, "certificate %d: %v", i+1, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// pemKeyStore reads a PEM key store: a PKCS#8 private key, encrypted with
// pass when pass is set, and the certificate chain.
func pemKeyStore(st Store, data []byte, pass string) (tls.Certificate, error) {
	block, certBlocks := pemBlocks(data)
	if block == nil {
		return tls.Certificate{}, errNoPEMKey(st)
	}
	var key any
	var err error
	switch {
	case block.Type == "RSA PRIVATE KEY" || block.Type == "EC PRIVATE KEY" || block.Type == "DSA PRIVATE KEY":
		return tls.Certificate{}, unsupportedPEMKey(st, block.Type)
	case pass == "" && block.Type == "ENCRYPTED PRIVATE KEY":
		return tls.Certificate{}, storeError(propKeyStore, st, "the private key is encrypted but no password is set (%s.password or %s.passwordPath)", propKeyStore, propKeyStore)
	case pass != "" && block.Type != "ENCRYPTED PRIVATE KEY":
		return tls.Certificate{}, storeError(propKeyStore, st, "a password is set but the private key is not encrypted; "+
			"ZooKeeper's client then expects an \"ENCRYPTED PRIVATE KEY\": encrypt the key or drop the password")
	case pass == "":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		if err := checkPKCS8Rounds(block.Bytes); err != nil {
			return tls.Certificate{}, storeError(propKeyStore, st, "cannot read the private key: %v", err)
		}
		key, err = decodeGuarded(func() (any, error) { return pkcs8.ParsePKCS8PrivateKey(block.Bytes, []byte(pass)) })
		if err != nil && strings.Contains(err.Error(), "only PBES2") {
			return tls.Certificate{}, storeError(propKeyStore, st, "the private key is encrypted with PBES1 (such as "+
				"PBE-SHA1-3DES), which is not read here; use a PKCS12 or JKS key store")
		}
		// A wrong password usually fails the padding check, but may yield
		// bytes that fail to parse instead: both are reported alike.
		if err != nil {
			return tls.Certificate{}, storeError(propKeyStore, st, "cannot decrypt the private key, wrong password? "+
				"(%s.password or %s.passwordPath; only PBES2 encryption is read): %v", propKeyStore, propKeyStore, err)
		}
	}
	if err != nil {
		return tls.Certificate{}, storeError(propKeyStore, st, "cannot read the private key: %v", err)
	}
	if len(certBlocks) == 0 {
		return tls.Certificate{}, storeError(propKeyStore, st, "no certificate found beside the private key")
	}
	chain, err := parseCerts(propKeyStore, st, certBlocks)
	if err != nil {
		return tls.Certificate{}, err
	}
	return keyPair(st, key, chain)
}
