package zktls_test

import (
	"encoding/asn1"
	"encoding/binary"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/tlstest"
	"github.com/fluss-sidecar/fluss-sidecar/zk/zktls"
)

// TestDamagedStoresRefusedBeforeDecoding: a store whose lengths or counts
// ask for far more than the file holds, or whose integrity check asks for
// more rounds than Java allows, is refused with the reason before a
// decoder allocates or computes what the file claims (a damaged JKS file
// once made keystore-go ask for 60 GB and kill the process).
func TestDamagedStoresRefusedBeforeDecoding(t *testing.T) {
	k := tlstest.New(t)
	dir := t.TempDir()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// jksAt returns a copy of a JKS store with the u32 at the given offset
	// of its first entry (after tag, alias and creation time) replaced.
	jksAt := func(p string, extra int, v uint32) []byte {
		b := append([]byte(nil), read(p)...)
		aliasLen := int(binary.BigEndian.Uint16(b[16:18]))
		at := 12 + 4 + 2 + aliasLen + 8 + extra
		binary.BigEndian.PutUint32(b[at:], v)
		return b
	}
	keyJKS := k.Client.Stores[tlstest.JKS]
	b := read(keyJKS)
	aliasLen := int(binary.BigEndian.Uint16(b[16:18]))
	encKeyLen := int(binary.BigEndian.Uint32(b[12+4+2+aliasLen+8:]))

	type pfx struct {
		Version  int
		AuthSafe asn1.RawValue
		MacData  struct {
			Mac        asn1.RawValue
			MacSalt    []byte
			Iterations int
		}
	}
	rounds := func(p string, n int) []byte {
		var v pfx
		if _, err := asn1.Unmarshal(read(p), &v); err != nil {
			t.Fatal(err)
		}
		v.MacData.Iterations = n
		out, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// pemRounds returns the kit's PEM key store with its key's PBKDF2
	// count set to n, or its derivation named kdf when kdf is set.
	pemRounds := func(n int, kdf asn1.ObjectIdentifier) []byte {
		data := read(k.Client.Stores[tlstest.PEM])
		block, rest := pem.Decode(data)
		var info pbes2Key
		if _, err := asn1.Unmarshal(block.Bytes, &info); err != nil {
			t.Fatal(err)
		}
		info.Algo.Parameters.KDF.Parameters.Iterations = n
		if kdf != nil {
			info.Algo.Parameters.KDF.Algorithm = kdf
		}
		der, err := asn1.Marshal(info)
		if err != nil {
			t.Fatal(err)
		}
		return append(pem.EncodeToMemory(&pem.Block{Type: block.Type, Bytes: der}), rest...)
	}
	cases := []struct {
		name  string
		data  []byte
		trust bool
		want  []string
	}{
		{"JKS key length past the end", jksAt(keyJKS, 0, 0xFFFFFFF0), false, []string{"not a readable JKS store", "runs past the end"}},
		{"JKS certificate count past the end", jksAt(keyJKS, 4+encKeyLen, 0x7FFFFFFF), false, []string{"not a readable JKS store", "count of 2147483647"}},
		{"JKS entry count past the end", func() []byte {
			b := append([]byte(nil), b...)
			binary.BigEndian.PutUint32(b[8:], 0xFFFFFFFF)
			return b
		}(), false, []string{"not a readable JKS store", "count of 4294967295"}},
		{"JKS cut short", b[:40], true, []string{"not a readable JKS store", "more than the 8 bytes left"}},
		{"PEM key, too many rounds", pemRounds(6_000_000, nil), false, []string{"cannot read the private key", "6000000 rounds"}},
		{"PEM key, scrypt", pemRounds(2048, asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11591, 4, 11}), false, []string{"cannot read the private key", "not PBKDF2"}},
		{"PKCS12 key store, too many rounds", rounds(k.Client.Stores[tlstest.PKCS12], 5_000_001), false, []string{"not a readable PKCS12 key store", "5000001 rounds"}},
		{"PKCS12 trust store, too many rounds", rounds(k.CA.Trust[tlstest.PKCS12], 1<<40), true, []string{"not a readable PKCS12 trust store", "1099511627776 rounds"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if err := os.WriteFile(p, c.data, 0o600); err != nil {
				t.Fatal(err)
			}
			st := zktls.Store{Location: p, Password: k.Password, Type: tlstest.JKS}
			switch {
			case strings.HasPrefix(c.name, "PKCS12"):
				st.Type = tlstest.PKCS12
			case strings.HasPrefix(c.name, "PEM"):
				st.Type = tlstest.PEM
			}
			s := zktls.Settings{KeyStore: st}
			if c.trust {
				s = zktls.Settings{TrustStore: st}
			}
			_, err := zktls.Build(s)
			if err == nil {
				t.Fatal("Build accepted the damaged store")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	// The same stores undamaged still open, and so does the PEM key
	// re-encoded with its own count (the test's re-encoding is faithful).
	faithful := filepath.Join(dir, "faithful.pem")
	if err := os.WriteFile(faithful, pemRounds(pemIterations(t, read(k.Client.Stores[tlstest.PEM])), nil), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, s := range []zktls.Settings{
		{KeyStore: zktls.Store{Location: faithful, Password: k.Password}},
		{KeyStore: zktls.Store{Location: keyJKS, Password: k.Password}},
		{TrustStore: zktls.Store{Location: k.CA.Trust[tlstest.JKS], Password: k.Password}},
	} {
		if _, err := zktls.Build(s); err != nil {
			t.Errorf("Build(%+v): %v", s, err)
		}
	}
}

// pbes2Key is an encrypted PKCS#8 key with PBES2 and PBKDF2 as the kit
// writes it, with its derivation's parameters spelt out.
type pbes2Key struct {
	Algo struct {
		Algorithm  asn1.ObjectIdentifier
		Parameters struct {
			KDF struct {
				Algorithm  asn1.ObjectIdentifier
				Parameters struct {
					Salt       []byte
					Iterations int
					Rest       asn1.RawValue `asn1:"optional"`
				}
			}
			Scheme asn1.RawValue
		}
	}
	Data []byte
}

// pemIterations reads the PBKDF2 count of a PEM key store's encrypted key.
func pemIterations(t *testing.T, data []byte) int {
	t.Helper()
	block, _ := pem.Decode(data)
	var info pbes2Key
	if _, err := asn1.Unmarshal(block.Bytes, &info); err != nil {
		t.Fatal(err)
	}
	return info.Algo.Parameters.KDF.Parameters.Iterations
}
