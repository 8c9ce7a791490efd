package zktls

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"testing"
	"time"
)

// TestPreferUsable: keys are ranked as Java's key manager ranks them
// (usable now, then expired, then not for client authentication), keeping
// the store's order within a rank.
func TestPreferUsable(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	cert := func(name string, notAfter time.Time, eku ...x509.ExtKeyUsage) tls.Certificate {
		return tls.Certificate{Leaf: &x509.Certificate{
			Subject:     pkix.Name{CommonName: name},
			NotBefore:   now.Add(-time.Hour),
			NotAfter:    notAfter,
			ExtKeyUsage: eku,
		}}
	}
	later, earlier := now.Add(time.Hour), now.Add(-time.Minute)
	certs := []tls.Certificate{
		cert("server-only", later, x509.ExtKeyUsageServerAuth),
		cert("expired", earlier, x509.ExtKeyUsageClientAuth),
		cert("client", later, x509.ExtKeyUsageClientAuth),
		cert("no-eku", later),
		cert("any", later, x509.ExtKeyUsageAny),
	}
	preferUsable(certs, now)
	want := []string{"client", "no-eku", "any", "expired", "server-only"}
	for i, c := range certs {
		if c.Leaf.Subject.CommonName != want[i] {
			t.Fatalf("position %d: %s, want order %v", i, c.Leaf.Subject.CommonName, want)
		}
	}
}
