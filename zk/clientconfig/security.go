package clientconfig

import (
	"crypto/tls"
	"fmt"

	"github.com/fluss-sidecar/fluss-sidecar/zk"
	"github.com/fluss-sidecar/fluss-sidecar/zk/digestmd5"
	"github.com/fluss-sidecar/fluss-sidecar/zk/zktls"
)

// Security turns the settings into what zk.Config takes: the TLS
// configuration (nil without zookeeper.client.secure) and the SASL exchange
// (nil without SASL). Key and trust stores are read here, so a wrong
// password or an unreadable store stops the start with a line naming it.
func (s Settings) Security() (*tls.Config, *zk.SASL, error) {
	var tlsConfig *tls.Config
	if s.Secure {
		var err error
		if tlsConfig, err = zktls.Build(s.TLS); err != nil {
			return nil, nil, fmt.Errorf("ZooKeeper client configuration %s: %w", s.Path, err)
		}
	}
	var sasl *zk.SASL
	if c := s.SASL; c != nil {
		user, password := c.Username, c.Password
		sasl = &zk.SASL{
			Mechanism: "DIGEST-MD5",
			User:      user,
			New:       func() zk.SASLExchange { return digestmd5.New(user, password) },
		}
	}
	return tlsConfig, sasl, nil
}

// Summary describes the settings in one line for the start-up log, without
// secrets.
func (s Settings) Summary() string {
	tlsPart := "TLS off"
	if s.Secure {
		tlsPart = "TLS on"
		if ks := s.TLS.KeyStore.Location; ks != "" {
			tlsPart += ", key store " + ks
		}
		if ts := s.TLS.TrustStore.Location; ts != "" {
			tlsPart += ", trust store " + ts
		} else {
			tlsPart += ", system trust roots"
		}
		if !s.TLS.HostnameVerification {
			tlsPart += ", host names not checked"
		}
	}
	return tlsPart + "; SASL " + s.SASLStatus
}
