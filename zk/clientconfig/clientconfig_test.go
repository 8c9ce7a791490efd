package clientconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

const digestJAAS = `Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required username="bob" password="${env:ZK_PASSWORD}";
};
Other { org.apache.zookeeper.server.auth.DigestLoginModule required username="alice" password="a"; };
Kerberos { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };
Strange { com.example.OwnLoginModule required; };
NoPassword { org.apache.zookeeper.server.auth.DigestLoginModule required username="bob"; };
`

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func testExpand() func(string) (string, error) {
	return config.Providers{LookupEnv: func(k string) (string, bool) {
		if k == "ZK_PASSWORD" {
			return "from-env", true
		}
		return "", false
	}}.Expand
}

func TestLoadRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jaas := write(t, dir, "jaas.conf", digestJAAS)
	for _, tc := range []struct {
		name  string
		props string
		jaas  string
		want  string
	}{
		{"misspelt property", "zookeeper.client.secure=false\nzookeeper.sasl.clent=true\n", "", "line 2: property zookeeper.sasl.clent is not a ZooKeeper client property the sidecar knows; did you mean zookeeper.sasl.client?"},
		{"wrong case", "zookeeper.ssl.keystore.location=/x.p12\n", "", "property zookeeper.ssl.keystore.location is not a ZooKeeper client property the sidecar knows; did you mean zookeeper.ssl.keyStore.location?"},
		{"java class", "zookeeper.ssl.context.supplier.class=com.example.Ctx\n", "", "property zookeeper.ssl.context.supplier.class is not supported: it names a Java class"},
		{"crl on", "zookeeper.ssl.crl=true\n", "", "property zookeeper.ssl.crl=true is not supported"},
		{"watch reset off", "zookeeper.disableAutoWatchReset=TRUE\n", "", "zookeeper.disableAutoWatchReset=true is not supported"},
		{"not a boolean", "zookeeper.client.secure=yes\n", "", `property zookeeper.client.secure: "yes" is not true or false`},
		{"socket class", "zookeeper.clientCnxnSocket=com.example.Socket\n", "", "is not one of ZooKeeper's client socket classes"},
		{"explicit section without jaas", "zookeeper.sasl.clientconfig=Other\n", "", `names JAAS section "Other", but no JAAS file is given`},
		{"explicit section missing", "zookeeper.sasl.clientconfig=Nope\n", jaas, `has no section "Nope", which zookeeper.sasl.clientconfig names`},
		{"kerberos", "zookeeper.sasl.clientconfig=Kerberos\n", jaas, "Kerberos (GSSAPI, com.sun.security.auth.module.Krb5LoginModule) is not supported"},
		{"other module", "zookeeper.sasl.clientconfig=Strange\n", jaas, "login module com.example.OwnLoginModule is not supported"},
		{"no password", "zookeeper.sasl.clientconfig=NoPassword\n", jaas, "DigestLoginModule has no password option"},
		{"missing jaas file", "", filepath.Join(dir, "absent.conf"), "JAAS file: open " + filepath.Join(dir, "absent.conf")},
		{"unset env reference", "zookeeper.ssl.keyStore.password=${env:NOT_SET}\n", "", "line 1: property zookeeper.ssl.keyStore.password: reference ${env:NOT_SET}: the environment variable is not set"},
		{"bad escape", "a=\\u00g0\n", "", "line 1: malformed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, t.TempDir(), "zk-client.properties", tc.props)
			_, err := Load(path, Options{JAASPath: tc.jaas, Expand: testExpand()})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			if !strings.Contains(err.Error(), path) && !strings.Contains(tc.want, "JAAS") {
				t.Fatalf("error %q does not name the file %s", err, path)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "zk-client.properties")
	_, err := Load(missing, Options{})
	if err == nil || !strings.Contains(err.Error(), "ZooKeeper client configuration: open "+missing) {
		t.Fatalf("got %v, want an error naming the file", err)
	}
}

func TestLoadTLS(t *testing.T) {
	t.Parallel()
	path := write(t, t.TempDir(), "zk-client.properties", `
zookeeper.client.secure=true
zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty
zookeeper.ssl.keyStore.location=/etc/zk/client.p12
zookeeper.ssl.keyStore.password=${env:ZK_PASSWORD}
zookeeper.ssl.trustStore.location=/etc/zk/trust.jks
zookeeper.ssl.trustStore.passwordPath=/etc/zk/trust.pass
zookeeper.ssl.trustStore.type=JKS
zookeeper.ssl.enabledProtocols=TLSv1.3, TLSv1.2
zookeeper.ssl.ciphersuites=TLS_AES_128_GCM_SHA256
zookeeper.ssl.clientAuth=need
zookeeper.sasl.client=false
`)
	s, err := Load(path, Options{Expand: testExpand()})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Secure || s.SASL != nil || !strings.Contains(s.SASLStatus, "zookeeper.sasl.client is false") {
		t.Fatalf("settings %+v", s)
	}
	tls := s.TLS
	if tls.KeyStore.Location != "/etc/zk/client.p12" || tls.KeyStore.Password != "from-env" ||
		tls.TrustStore.PasswordPath != "/etc/zk/trust.pass" || tls.TrustStore.Type != "JKS" ||
		!tls.HostnameVerification || strings.Join(tls.EnabledProtocols, "|") != "TLSv1.3|TLSv1.2" ||
		strings.Join(tls.CipherSuites, "|") != "TLS_AES_128_GCM_SHA256" {
		t.Fatalf("TLS settings %+v", tls)
	}
	if len(s.NoEffect) != 2 || !strings.HasPrefix(s.NoEffect[0], "zookeeper.clientCnxnSocket (") ||
		!strings.HasPrefix(s.NoEffect[1], "zookeeper.ssl.clientAuth (a server setting)") {
		t.Fatalf("no-effect list %q", s.NoEffect)
	}

	off := write(t, t.TempDir(), "zk-client.properties", "zookeeper.client.secure=true\nzookeeper.ssl.hostnameVerification=false\n")
	if s, err := Load(off, Options{}); err != nil || s.TLS.HostnameVerification {
		t.Fatalf("hostnameVerification=false: %+v, %v", s.TLS, err)
	}
	plain := write(t, t.TempDir(), "zk-client.properties", "zookeeper.ssl.keyStore.location=/x.p12\n")
	s, err = Load(plain, Options{})
	if err != nil || s.Secure || len(s.NoEffect) != 1 || !strings.Contains(s.NoEffect[0], "zookeeper.client.secure is not true") {
		t.Fatalf("TLS keys without secure: %+v, %v", s, err)
	}
}

func TestLoadSASL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jaas := write(t, dir, "jaas.conf", digestJAAS)
	empty := write(t, dir, "empty.properties", "# nothing\n")
	for _, tc := range []struct {
		name, props, jaas  string
		user, pass, status string
	}{
		{"default section", "", jaas, "bob", "from-env", `DIGEST-MD5 as "bob"`},
		{"named section", "zookeeper.sasl.clientconfig=Other\n", jaas, "alice", "a", `section "Other"`},
		{"no jaas file", "", "", "", "", "off (no JAAS file is given)"},
		{"sasl off", "zookeeper.sasl.client=false\n", jaas, "", "", "off (zookeeper.sasl.client is false)"},
		{"default section missing", "", write(t, dir, "server-only.conf", "Server { a.B required; };"), "", "", `has no "Client" section`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := empty
			if tc.props != "" {
				path = write(t, t.TempDir(), "zk.properties", tc.props)
			}
			s, err := Load(path, Options{JAASPath: tc.jaas, Expand: testExpand()})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(s.SASLStatus, tc.status) {
				t.Fatalf("status %q, want it to contain %q", s.SASLStatus, tc.status)
			}
			switch {
			case tc.user == "" && s.SASL != nil:
				t.Fatalf("SASL on: %+v", s.SASL)
			case tc.user != "" && (s.SASL == nil || s.SASL.Username != tc.user || s.SASL.Password != tc.pass):
				t.Fatalf("credentials %+v, want %s/%s", s.SASL, tc.user, tc.pass)
			}
			if strings.Contains(s.SASLStatus, "from-env") {
				t.Fatal("the status line shows the password")
			}
		})
	}
}

// TestNoConfigFile is the case of a Fluss configuration without
// zookeeper.client.config-path: no TLS, and SASL only from a JAAS file.
func TestNoConfigFile(t *testing.T) {
	t.Parallel()
	s, err := Load("", Options{})
	if err != nil || s.Secure || s.SASL != nil {
		t.Fatalf("got %+v, %v", s, err)
	}
	jaas := write(t, t.TempDir(), "jaas.conf", digestJAAS)
	s, err = Load("", Options{JAASPath: jaas, Expand: testExpand()})
	if err != nil || s.SASL == nil || s.SASL.Username != "bob" {
		t.Fatalf("got %+v, %v", s, err)
	}
}

func TestSummaryHasNoSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	props := write(t, dir, "zk.properties", "zookeeper.client.secure=true\n"+
		"zookeeper.ssl.keyStore.location=/etc/zk/client.p12\nzookeeper.ssl.keyStore.password=ks-secret\n"+
		"zookeeper.ssl.hostnameVerification=false\n")
	s, err := Load(props, Options{JAASPath: write(t, dir, "jaas.conf", digestJAAS), Expand: testExpand()})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Summary()
	want := `TLS on, key store /etc/zk/client.p12, system trust roots, host names not checked; SASL DIGEST-MD5 as "bob"`
	if !strings.HasPrefix(got, want) || strings.Contains(got, "ks-secret") || strings.Contains(got, "from-env") {
		t.Fatalf("summary %q, want it to start with %q and hold no password", got, want)
	}
}

// TestJVMOptions checks the -D options of the coordinator's JVM: ZooKeeper's
// client reads them as properties, and its file overrides them.
func TestJVMOptions(t *testing.T) {
	t.Parallel()
	opt := func(k, v string) JVMOption { return JVMOption{Key: k, Value: v, From: "env.java.opts.all"} }
	dir := t.TempDir()
	jaas := write(t, dir, "jaas.conf", digestJAAS)

	s, err := Load("", Options{JVMOptions: []JVMOption{
		opt("log4j.configurationFile", "x.xml"), // not the client's: left alone
		opt("zookeeper.client.secure", "true"),
		opt("zookeeper.ssl.trustStore.location", "/etc/zk/trust.pem"),
		opt("zookeeper.clientCnxnSocket", "org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.ClientCnxnSocketNetty"),
		opt("zookeeper.sasl.clientconfig", "Other"),
	}, JAASPath: jaas})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Secure || s.TLS.TrustStore.Location != "/etc/zk/trust.pem" || s.SASL == nil || s.SASL.Username != "alice" {
		t.Fatalf("settings from JVM options: %+v", s)
	}

	file := write(t, dir, "zk.properties", "zookeeper.client.secure=false\n")
	s, err = Load(file, Options{JVMOptions: []JVMOption{opt("zookeeper.client.secure", "true")}})
	if err != nil || s.Secure {
		t.Fatalf("the file did not override the JVM option: %+v, %v", s, err)
	}

	_, err = Load(file, Options{JVMOptions: []JVMOption{opt("zookeeper.ssl.ocsp", "true")}})
	if err == nil || !strings.Contains(err.Error(), "JVM option -Dzookeeper.ssl.ocsp (env.java.opts.all): property zookeeper.ssl.ocsp=true is not supported") {
		t.Fatalf("got %v, want the refusal to name the JVM option and where it was found", err)
	}
	_, err = Load("", Options{JVMOptions: []JVMOption{opt("zookeeper.sasl.clientConfig", "Other")}})
	if err == nil || !strings.Contains(err.Error(), "JVM option -Dzookeeper.sasl.clientConfig (env.java.opts.all): property zookeeper.sasl.clientConfig is not a ZooKeeper client property the sidecar knows; did you mean zookeeper.sasl.clientconfig?") {
		t.Fatalf("got %v, want a misspelt zookeeper.* option refused", err)
	}
	_, err = Load("", Options{JVMOptions: []JVMOption{opt("zookeper.client.secure", "true")}})
	if err == nil || !strings.Contains(err.Error(), "did you mean zookeeper.client.secure?") {
		t.Fatalf("got %v, want an option misspelt in its prefix refused", err)
	}
	s, err = Load("", Options{JVMOptions: []JVMOption{opt("zookeeper.unknown.thing", "1"), opt("sun.security.krb5.debug", "true")}})
	if err != nil || len(s.NoEffect) != 1 ||
		s.NoEffect[0] != "zookeeper.unknown.thing (a JVM option in env.java.opts.all; "+ignoredByZooKeeper+")" {
		t.Fatalf("got %q, %v: want the unknown zookeeper.* option accepted without effect and the other option left to the JVM", s.NoEffect, err)
	}
}
