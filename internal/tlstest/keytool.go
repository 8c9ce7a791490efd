package tlstest

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// JavaStores are stores written by Java's keytool from the kit, to prove
// that what Java writes can be read.
type JavaStores struct {
	// ClientJKS and ClientPKCS12 hold the kit's Client key and chain,
	// re-encoded by keytool -importkeystore.
	ClientJKS, ClientPKCS12 string
	// TrustJKS and TrustPKCS12 hold the kit's CA as a trusted certificate
	// entry, written by keytool -importcert.
	TrustJKS, TrustPKCS12 string
	// SelfPKCS12 holds a key pair keytool generated itself (alias "self",
	// EC P-256, a self-signed certificate named CN=java-made).
	SelfPKCS12 string
}

// Keytool writes the kit's client identity and CA as JKS and PKCS12 stores
// with Java's keytool (all with the kit's password); see RunKeytool.
func (k *Kit) Keytool(tb testing.TB) JavaStores {
	tb.Helper()
	js := JavaStores{
		ClientJKS:    filepath.Join(k.Dir, "java-client.jks"),
		ClientPKCS12: filepath.Join(k.Dir, "java-client.p12"),
		TrustJKS:     filepath.Join(k.Dir, "java-trust.jks"),
		TrustPKCS12:  filepath.Join(k.Dir, "java-trust.p12"),
		SelfPKCS12:   filepath.Join(k.Dir, "java-self.p12"),
	}
	pw := k.Password
	run := func(args ...string) { tb.Helper(); RunKeytool(tb, args...) }
	for typ, dest := range map[string]string{JKS: js.ClientJKS, PKCS12: js.ClientPKCS12} {
		run("-importkeystore", "-noprompt",
			"-srckeystore", k.Client.Stores[PKCS12], "-srcstoretype", PKCS12, "-srcstorepass", pw,
			"-destkeystore", dest, "-deststoretype", typ, "-deststorepass", pw, "-destkeypass", pw)
	}
	for typ, dest := range map[string]string{JKS: js.TrustJKS, PKCS12: js.TrustPKCS12} {
		run("-importcert", "-noprompt", "-alias", "tlstest-ca", "-file", k.CA.Trust[PEM],
			"-keystore", dest, "-storetype", typ, "-storepass", pw)
	}
	run("-genkeypair", "-alias", "self", "-keyalg", "EC", "-groupname", "secp256r1",
		"-dname", "CN=java-made", "-validity", "2",
		"-keystore", js.SelfPKCS12, "-storetype", PKCS12, "-storepass", pw, "-keypass", pw)
	return js
}

// RunKeytool runs Java's keytool with args. It skips the test when keytool
// is not installed and fails it if keytool fails; under -short, where no
// JVM runs, it skips the test (zktest.SkipIfShort).
func RunKeytool(tb testing.TB, args ...string) {
	tb.Helper()
	zktest.SkipIfShort(tb)
	tool, err := exec.LookPath("keytool")
	if err != nil {
		tb.Skipf("tlstest: keytool not installed: %v", err)
	}
	out, err := exec.Command(tool, args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("tlstest: keytool %v: %v\n%s", args, err, out)
	}
}
