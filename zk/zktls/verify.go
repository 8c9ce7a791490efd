package zktls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
)

// verifyChainOnly checks the server's chain against roots (the system
// roots when nil) without checking its name: zookeeper.ssl.hostnameVerification
// turned off. It is set with InsecureSkipVerify, which skips Go's own check.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("zktls: the server sent no certificate")
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			Intermediates: x509.NewCertPool(),
			KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		if _, err := cs.PeerCertificates[0].Verify(opts); err != nil {
			return fmt.Errorf("zktls: the server's certificate is not trusted: %w", err)
		}
		return nil
	}
}
