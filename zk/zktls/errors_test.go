package zktls_test

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/tlstest"
	"github.com/fluss-sidecar/fluss-sidecar/zk/zktls"
)

// TestBuildErrors: every bad setting fails Build with one line naming the
// property (and the file) and saying what is wrong.
func TestBuildErrors(t *testing.T) {
	k := tlstest.New(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	certs := func(id *tlstest.Identity) []byte {
		var b []byte
		for _, c := range id.Chain {
			b = append(b, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
		}
		return b
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(k.Client.Key)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(mustEC(t, k.Client))
	if err != nil {
		t.Fatal(err)
	}
	sec1PEM := write("sec1.pem", append(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), certs(k.Client)...))
	keyOnly := write("key-only.pem", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	mismatch := write("mismatch.pem", append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}), certs(k.Server)...))
	pw := k.Password
	key := func(loc, pass, typ string) zktls.Settings {
		return zktls.Settings{KeyStore: zktls.Store{Location: loc, Password: pass, Type: typ}}
	}
	trust := func(loc, pass, typ string) zktls.Settings {
		return zktls.Settings{TrustStore: zktls.Store{Location: loc, Password: pass, Type: typ}}
	}
	proto := func(p string, enabled, ciphers []string) zktls.Settings {
		return zktls.Settings{Protocol: p, EnabledProtocols: enabled, CipherSuites: ciphers}
	}
	cases := []struct {
		name string
		s    zktls.Settings
		want []string // substrings of the error
	}{
		{"PKCS12 key store, wrong password", key(k.Client.Stores[tlstest.PKCS12], "nope", ""), []string{"zookeeper.ssl.keyStore.location", "client.p12", "wrong password"}},
		{"JKS key store, wrong password", key(k.Client.Stores[tlstest.JKS], "nope", ""), []string{"zookeeper.ssl.keyStore.location", "client.jks", "wrong password"}},
		{"PEM key store, wrong password", key(k.Client.Stores[tlstest.PEM], "nope", ""), []string{"zookeeper.ssl.keyStore.location", "client.pem", "wrong password"}},
		{"PKCS12 trust store, wrong password", trust(k.CA.Trust[tlstest.PKCS12], "nope", ""), []string{"zookeeper.ssl.trustStore.location", "ca-trust.p12", "wrong password"}},
		{"JKS trust store, wrong password", trust(k.CA.Trust[tlstest.JKS], "nope", ""), []string{"zookeeper.ssl.trustStore.location", "ca-trust.jks", "wrong password"}},
		{"JKS trust store, no password", trust(k.CA.Trust[tlstest.JKS], "", ""), []string{"wrong password"}},
		{"missing password file", zktls.Settings{KeyStore: zktls.Store{Location: k.Client.Stores[tlstest.PKCS12], PasswordPath: filepath.Join(dir, "none")}}, []string{"zookeeper.ssl.keyStore.passwordPath", "cannot read"}},
		{"missing store", key(filepath.Join(dir, "none.p12"), pw, ""), []string{"zookeeper.ssl.keyStore.location", "none.p12", "cannot read"}},
		{"unknown extension", key(write("client.pfx", nil), pw, ""), []string{"zookeeper.ssl.keyStore.location", "client.pfx", "zookeeper.ssl.keyStore.type"}},
		{"upper-case extension", trust(write("CA.PEM", nil), "", ""), []string{"zookeeper.ssl.trustStore.location", "CA.PEM", "cannot tell"}},
		{"unknown type", key(k.Client.Stores[tlstest.PKCS12], pw, "PKCS11"), []string{"zookeeper.ssl.keyStore.type", "PKCS11"}},
		{"BCFKS", trust(k.CA.Trust[tlstest.PKCS12], pw, "bcfks"), []string{"zookeeper.ssl.trustStore.type", "not supported"}},
		{"PEM type on a JKS file", key(k.Client.Stores[tlstest.JKS], pw, "PEM"), []string{"client.jks", "no private key found"}},
		{"PKCS12 type on a PEM file", key(k.Client.Stores[tlstest.PEM], pw, "PKCS12"), []string{"client.pem", "not a readable PKCS12"}},
		{"JKS type on a PEM trust store", trust(k.CA.Trust[tlstest.PEM], pw, "JKS"), []string{"ca-trust.pem", "not a readable JKS"}},
		{"PEM key not encrypted, password set", key(k.Client.PlainPEM, pw, ""), []string{"client-plain.pem", "not encrypted"}},
		{"PEM key encrypted, no password", key(k.Client.Stores[tlstest.PEM], "", ""), []string{"client.pem", "encrypted but no password"}},
		{"SEC 1 PEM key", key(sec1PEM, "", ""), []string{"sec1.pem", "EC PRIVATE KEY", "PKCS#8"}},
		{"PEM key without certificate", key(keyOnly, "", ""), []string{"key-only.pem", "no certificate"}},
		{"PEM key of another certificate", key(mismatch, "", ""), []string{"mismatch.pem", "matches none"}},
		{"PKCS12 trust store as key store", key(k.CA.Trust[tlstest.PKCS12], pw, ""), []string{"zookeeper.ssl.keyStore.location", "ca-trust.p12", "no private key found"}},
		{"JKS trust store as key store", key(k.CA.Trust[tlstest.JKS], pw, ""), []string{"zookeeper.ssl.keyStore.location", "ca-trust.jks", "no private key found"}},
		{"PKCS12 key store as trust store", trust(k.Client.Stores[tlstest.PKCS12], pw, ""), []string{"zookeeper.ssl.trustStore.location", "other than trusted certificates"}},
		{"JKS key store as trust store", trust(k.Client.Stores[tlstest.JKS], pw, ""), []string{"zookeeper.ssl.trustStore.location", "no trusted certificate"}},
		{"PEM trust store without certificates", trust(k.PasswordFile, "", "PEM"), []string{"zookeeper.ssl.trustStore.location", "no trusted certificate"}},
		{"TLSv1.1", proto("TLSv1.1", nil, nil), []string{"zookeeper.ssl.protocol", "TLSv1.1", "not supported"}},
		{"unknown protocol", proto("TLSv9", nil, nil), []string{"zookeeper.ssl.protocol", "TLSv9"}},
		{"TLS without enabled protocols", proto("TLS", nil, nil), []string{"zookeeper.ssl.protocol", "zookeeper.ssl.enabledProtocols"}},
		{"enabled protocol with a space", proto("", []string{"TLSv1.2", " TLSv1.3"}, nil), []string{"zookeeper.ssl.enabledProtocols", `" TLSv1.3"`}},
		{"enabled protocol in lower case", proto("", []string{"tlsv1.2"}, nil), []string{"zookeeper.ssl.enabledProtocols", "tlsv1.2"}},
		{"enabled TLSv1", proto("", []string{"TLSv1"}, nil), []string{"zookeeper.ssl.enabledProtocols", "TLSv1", "not supported"}},
		{"unknown cipher", proto("", nil, []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_NO_SUCH"}), []string{"zookeeper.ssl.ciphersuites", "TLS_NO_SUCH"}},
		{"cipher Go lacks", proto("", nil, []string{"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"}), []string{"zookeeper.ssl.ciphersuites", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384"}},
		{"TLSv1.2 with TLS 1.3 suites only", proto("TLSv1.2", nil, []string{"TLS_AES_128_GCM_SHA256"}), []string{"zookeeper.ssl.ciphersuites", "no cipher suite", "TLS 1.2"}},
		{"TLSv1.3 with 3.8's default suites", proto("TLSv1.3", nil, nil), []string{"zookeeper.ssl.ciphersuites", "no cipher suite", "TLS 1.3"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := zktls.Build(c.s)
			if err == nil {
				t.Fatalf("Build succeeded (%d certificates), want an error", len(cfg.Certificates))
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

// TestBuildPBES1PEMKey: a PEM key encrypted with PBES1 (which ZooKeeper on
// Java 17 reads, unlike PBES2) is refused with a message saying so and
// pointing at PKCS12 or JKS. The key is made with openssl.
func TestBuildPBES1PEMKey(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skipf("openssl not installed: %v", err)
	}
	k := tlstest.New(t)
	keyFile := filepath.Join(t.TempDir(), "pbes1-key.pem")
	out, err := exec.Command(openssl, "pkcs8", "-topk8", "-v1", "PBE-SHA1-3DES",
		"-in", k.Client.PlainPEM, "-out", keyFile, "-passout", "pass:"+k.Password).CombinedOutput()
	if err != nil {
		t.Fatalf("openssl: %v\n%s", err, out)
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	chain, err := os.ReadFile(k.Client.Stores[tlstest.PEM])
	if err != nil {
		t.Fatal(err)
	}
	_, certs, _ := strings.Cut(string(chain), "-----END ENCRYPTED PRIVATE KEY-----\n")
	store := filepath.Join(t.TempDir(), "pbes1.pem")
	if err := os.WriteFile(store, append(key, certs...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = zktls.Build(zktls.Settings{KeyStore: zktls.Store{Location: store, Password: k.Password}})
	if err == nil || !strings.Contains(err.Error(), "PBES1") || !strings.Contains(err.Error(), "PKCS12 or JKS") {
		t.Fatalf("Build: %v, want the PBES1 error", err)
	}
}
