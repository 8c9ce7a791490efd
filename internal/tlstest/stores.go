package tlstest

import (
	"bytes"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"time"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// writeKeyStores writes id as name.p12, name.jks, name.pem (encrypted key)
// and name-plain.pem (key not encrypted).
func (k *Kit) writeKeyStores(name string, id *Identity) error {
	id.Stores = map[string]string{
		PKCS12: filepath.Join(k.Dir, name+".p12"),
		JKS:    filepath.Join(k.Dir, name+".jks"),
		PEM:    filepath.Join(k.Dir, name+".pem"),
	}
	id.PlainPEM = filepath.Join(k.Dir, name+"-plain.pem")

	p12, err := pkcs12.Modern.WithRand(rand.Reader).Encode(id.Key, id.Cert, id.Chain[1:], k.Password)
	if err != nil {
		return err
	}
	if err := os.WriteFile(id.Stores[PKCS12], p12, 0o600); err != nil {
		return err
	}

	plain, err := x509.MarshalPKCS8PrivateKey(id.Key)
	if err != nil {
		return err
	}
	ks := keystore.New()
	entry := keystore.PrivateKeyEntry{CreationTime: time.Now(), PrivateKey: plain}
	for _, c := range id.Chain {
		entry.CertificateChain = append(entry.CertificateChain, keystore.Certificate{Type: "X.509", Content: c.Raw})
	}
	if err := ks.SetPrivateKeyEntry(name, entry, []byte(k.Password)); err != nil {
		return err
	}
	if err := writeJKS(id.Stores[JKS], ks, k.Password); err != nil {
		return err
	}

	enc, err := pkcs8.MarshalPrivateKey(id.Key, []byte(k.Password), nil)
	if err != nil {
		return err
	}
	chain := certsPEM(id.Chain)
	encPEM := append(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: enc}), chain...)
	if err := os.WriteFile(id.Stores[PEM], encPEM, 0o600); err != nil {
		return err
	}
	plainPEM := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: plain}), chain...)
	return os.WriteFile(id.PlainPEM, plainPEM, 0o600)
}

// writeTrustStores writes cert as the only trusted certificate of
// name.p12, name.jks and name.pem.
func (k *Kit) writeTrustStores(name string, cert *x509.Certificate) (map[string]string, error) {
	files := map[string]string{
		PKCS12: filepath.Join(k.Dir, name+".p12"),
		JKS:    filepath.Join(k.Dir, name+".jks"),
		PEM:    filepath.Join(k.Dir, name+".pem"),
	}
	p12, err := pkcs12.Modern.WithRand(rand.Reader).EncodeTrustStore([]*x509.Certificate{cert}, k.Password)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(files[PKCS12], p12, 0o600); err != nil {
		return nil, err
	}
	ks := keystore.New()
	err = ks.SetTrustedCertificateEntry(name, keystore.TrustedCertificateEntry{
		CreationTime: time.Now(),
		Certificate:  keystore.Certificate{Type: "X.509", Content: cert.Raw},
	})
	if err != nil {
		return nil, err
	}
	if err := writeJKS(files[JKS], ks, k.Password); err != nil {
		return nil, err
	}
	if err := os.WriteFile(files[PEM], certsPEM([]*x509.Certificate{cert}), 0o600); err != nil {
		return nil, err
	}
	return files, nil
}

func writeJKS(path string, ks keystore.KeyStore, password string) error {
	var b bytes.Buffer
	if err := ks.Store(&b, []byte(password)); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o600)
}

func certsPEM(certs []*x509.Certificate) []byte {
	var b []byte
	for _, c := range certs {
		b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
	}
	return b
}
