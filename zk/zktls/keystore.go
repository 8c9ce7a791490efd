package zktls

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// loadKeyStore reads the client's keys and certificate chains from st.
func loadKeyStore(st Store) ([]tls.Certificate, error) {
	data, typ, pass, err := readStore(propKeyStore, st)
	if err != nil {
		return nil, err
	}
	var certs []tls.Certificate
	switch {
	case typ == typePEM:
		certs, err = one(pemKeyStore(st, data, pass))
	case binaryFormat(typ, data) == typeJKS:
		certs, err = jksKeyStore(st, data, pass)
	default:
		certs, err = one(pkcs12KeyStore(st, data, pass))
	}
	if err != nil {
		return nil, err
	}
	preferUsable(certs, time.Now())
	return certs, nil
}

// one lifts a single certificate's result to a list.
func one(c tls.Certificate, err error) ([]tls.Certificate, error) {
	if err != nil {
		return nil, err
	}
	return []tls.Certificate{c}, nil
}

// pkcs12KeyStore reads a PKCS12 key store holding one key.
func pkcs12KeyStore(st Store, data []byte, pass string) (tls.Certificate, error) {
	if err := checkPKCS12Rounds(data); err != nil {
		return tls.Certificate{}, storeError(propKeyStore, st, "not a readable PKCS12 key store: %v", err)
	}
	type decoded struct {
		key   any
		leaf  *x509.Certificate
		chain []*x509.Certificate
	}
	d, err := decodeGuarded(func() (decoded, error) {
		key, leaf, chain, err := pkcs12.DecodeChain(data, pass)
		return decoded{key, leaf, chain}, err
	})
	key, leaf, chain := d.key, d.leaf, d.chain
	switch {
	case errors.Is(err, pkcs12.ErrIncorrectPassword):
		return tls.Certificate{}, storeError(propKeyStore, st, "wrong password (%s.password or %s.passwordPath)", propKeyStore, propKeyStore)
	case err != nil && strings.Contains(err.Error(), "exactly one key bag"):
		return tls.Certificate{}, storeError(propKeyStore, st, "holds more than one private key; only one is supported in a PKCS12 key store")
	case err != nil && strings.Contains(err.Error(), "private key missing"):
		return tls.Certificate{}, storeError(propKeyStore, st, "no private key found")
	case err != nil:
		return tls.Certificate{}, storeError(propKeyStore, st, "not a readable PKCS12 key store: %v", err)
	}
	return keyPair(st, key, append([]*x509.Certificate{leaf}, chain...))
}

// jksKeyStore reads every private key entry of a JKS store, in alias order.
// Each key is opened with the store password, as ZooKeeper does.
func jksKeyStore(st Store, data []byte, pass string) ([]tls.Certificate, error) {
	ks, err := loadJKS(propKeyStore, st, data, pass)
	if err != nil {
		return nil, err
	}
	pw, _ := jksPassword(propKeyStore, st, pass) // loadJKS checked it
	var out []tls.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		e, err := ks.GetPrivateKeyEntry(alias, pw)
		if err != nil {
			return nil, storeError(propKeyStore, st, "cannot open the key %q with the store password: %v", alias, err)
		}
		key, err := x509.ParsePKCS8PrivateKey(e.PrivateKey)
		if err != nil {
			return nil, storeError(propKeyStore, st, "key %q: %v", alias, err)
		}
		var chain []*x509.Certificate
		for _, c := range e.CertificateChain {
			cert, err := x509.ParseCertificate(c.Content)
			if err != nil {
				return nil, storeError(propKeyStore, st, "key %q: certificate: %v", alias, err)
			}
			chain = append(chain, cert)
		}
		c, err := keyPair(st, key, chain)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, storeError(propKeyStore, st, "no private key found")
	}
	return out, nil
}

// jksPassword is pass as keystore-go wants it: one byte per character,
// which it widens to the UTF-16 code units Java hashes. Characters past
// U+00FF do not fit in a byte and are refused.
func jksPassword(prop string, st Store, pass string) ([]byte, error) {
	out := make([]byte, 0, len(pass))
	for _, r := range pass {
		if r > 0xff {
			return nil, storeError(prop, st, "the password has a character beyond U+00FF (%q), which is not supported for JKS stores; use PKCS12", r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// loadJKS opens a JKS store, telling a wrong password from a bad file.
func loadJKS(prop string, st Store, data []byte, pass string) (keystore.KeyStore, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	pw, err := jksPassword(prop, st, pass)
	if err != nil {
		return ks, err
	}
	if err := checkJKSShape(data); err != nil {
		return ks, storeError(prop, st, "not a readable JKS store: %v", err)
	}
	_, err = decodeGuarded(func() (struct{}, error) { return struct{}{}, ks.Load(bytes.NewReader(data), pw) })
	switch {
	case err == nil:
		return ks, nil
	case strings.Contains(err.Error(), "invalid digest"):
		return ks, storeError(prop, st, "wrong password (%s.password or %s.passwordPath)", prop, prop)
	default:
		return ks, storeError(prop, st, "not a readable JKS store: %v", err)
	}
}

// keyPair makes a tls.Certificate of key and chain, putting the
// certificate of key first.
func keyPair(st Store, key any, chain []*x509.Certificate) (tls.Certificate, error) {
	signer, ok := key.(crypto.Signer)
	if !ok {
		return tls.Certificate{}, storeError(propKeyStore, st, "unsupported private key type %T", key)
	}
	if len(chain) == 0 {
		return tls.Certificate{}, storeError(propKeyStore, st, "no certificate for the private key")
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	i := slices.IndexFunc(chain, func(c *x509.Certificate) bool { return ok && pub.Equal(c.PublicKey) })
	if i < 0 {
		return tls.Certificate{}, storeError(propKeyStore, st, "the private key matches none of the certificates")
	}
	chain = append([]*x509.Certificate{chain[i]}, slices.Delete(slices.Clone(chain), i, i+1)...)
	c := tls.Certificate{PrivateKey: signer, Leaf: chain[0]}
	for _, cert := range chain {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	return c, nil
}

// preferUsable orders certs as Java's key manager ranks them: those valid
// at now and allowed for client authentication first, then expired ones,
// then those whose extended key usage forbids client authentication. The
// order within a rank is kept.
func preferUsable(certs []tls.Certificate, now time.Time) {
	rank := func(c tls.Certificate) int {
		leaf := c.Leaf
		usable := len(leaf.ExtKeyUsage) == 0 ||
			slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageClientAuth) ||
			slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageAny)
		switch {
		case !usable:
			return 2
		case now.Before(leaf.NotBefore) || now.After(leaf.NotAfter):
			return 1
		}
		return 0
	}
	slices.SortStableFunc(certs, func(a, b tls.Certificate) int { return rank(a) - rank(b) })
}

// errNoPEMKey says a PEM key store has no private key block.
func errNoPEMKey(st Store) error {
	return storeError(propKeyStore, st, "no private key found (a PEM key store needs a \"PRIVATE KEY\" block)")
}

// unsupportedPEMKey explains a PEM key block ZooKeeper's client cannot read.
func unsupportedPEMKey(st Store, blockType string) error {
	return storeError(propKeyStore, st, "%q keys are not read by ZooKeeper's client, which needs PKCS#8; "+
		"convert with `openssl pkcs8 -topk8` (add -nocrypt for no password)", blockType)
}
