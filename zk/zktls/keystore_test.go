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

// TestJKSPassword: a JKS password reaches keystore-go one byte per
// character (so Latin-1 characters hash as Java's UTF-16 units do), and a
// character past U+00FF is refused with a message.
func TestJKSPassword(t *testing.T) {
	cases := []struct {
		pass    string
		want    []byte
		wantErr bool
	}{
		{"secret", []byte("secret"), false},
		{"pässwörd", []byte{'p', 0xe4, 's', 's', 'w', 0xf6, 'r', 'd'}, false},
		{"", []byte{}, false},
		{"€uro", nil, true},
	}
	for _, c := range cases {
		got, err := jksPassword(propKeyStore, Store{Location: "/x/a.jks"}, c.pass)
		if (err != nil) != c.wantErr || string(got) != string(c.want) {
			t.Errorf("jksPassword(%q) = %v, %v; want %v, error %v", c.pass, got, err, c.want, c.wantErr)
		}
	}
}
