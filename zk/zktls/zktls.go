package zktls

import (
	"crypto/tls"
	"fmt"
)

// Store is one key store or trust store: zookeeper.ssl.keyStore.* or
// zookeeper.ssl.trustStore.*.
type Store struct {
	// Location is the store's file; "" means no store.
	Location string
	// Password opens the store (and, in a key store, its keys).
	Password string
	// PasswordPath, when set, names a file holding the password; it wins
	// over Password. One trailing "\n" is dropped.
	PasswordPath string
	// Type is "PKCS12", "JKS" or "PEM", in any case; "" takes it from the
	// file's extension (.p12, .jks, .pem).
	Type string
}

// Settings are the zookeeper.ssl.* client settings.
type Settings struct {
	// KeyStore holds the client's key and certificate chain; without one
	// the client sends no certificate.
	KeyStore Store
	// TrustStore holds the certificates that may sign the server's chain;
	// without one the system roots are used.
	TrustStore Store
	// Protocol is zookeeper.ssl.protocol; "" means TLSv1.2, ZooKeeper
	// 3.8's default.
	Protocol string
	// EnabledProtocols is zookeeper.ssl.enabledProtocols; empty means
	// Protocol alone.
	EnabledProtocols []string
	// CipherSuites is zookeeper.ssl.ciphersuites (Java/IANA names); empty
	// means ZooKeeper 3.8's default list.
	CipherSuites []string
	// HostnameVerification is zookeeper.ssl.hostnameVerification; the
	// properties parser passes true unless the file says false.
	HostnameVerification bool
}

// Property names, for error messages.
const (
	propKeyStore   = "zookeeper.ssl.keyStore"
	propTrustStore = "zookeeper.ssl.trustStore"
	propProtocol   = "zookeeper.ssl.protocol"
	propEnabled    = "zookeeper.ssl.enabledProtocols"
	propCiphers    = "zookeeper.ssl.ciphersuites"
)

// Build returns the client *tls.Config that s describes, or an error naming
// the property or file at fault. The caller (the ZooKeeper transport) sets
// ServerName per server on a clone.
func Build(s Settings) (*tls.Config, error) {
	cfg := &tls.Config{}
	if s.KeyStore.Location != "" {
		certs, err := loadKeyStore(s.KeyStore)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = certs
	}
	if s.TrustStore.Location != "" {
		pool, err := loadTrustStore(s.TrustStore)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	v, err := versions(s.Protocol, s.EnabledProtocols)
	if err != nil {
		return nil, err
	}
	suites, err := cipherSuites(s.CipherSuites, v)
	if err != nil {
		return nil, err
	}
	cfg.MinVersion, cfg.MaxVersion, cfg.CipherSuites = suites.min, suites.max, suites.ids
	if !s.HostnameVerification {
		// The chain is checked by VerifyConnection; only the name is not.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = verifyChainOnly(cfg.RootCAs)
	}
	return cfg, nil
}

// storeError is the one-line error for a store: the property, the file and
// what went wrong.
func storeError(prop string, st Store, format string, args ...any) error {
	return fmt.Errorf("zktls: %s.location %s: %s", prop, st.Location, fmt.Sprintf(format, args...))
}
