package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/internal/tlstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// The secured ZooKeeper setups, each started for real on
// loopback: SASL required, TLS only with client certificates required, and
// both at once.
const (
	secureSASL = "sasl"
	secureTLS  = "tls"
	secureBoth = "sasl+tls"
)

const (
	saslUser     = "fluss"
	saslPassword = "fluss-secret"
)

// securedZK is one running secured ZooKeeper and the client files that
// reach it, written as a Fluss coordinator would have them.
type securedZK struct {
	addr  string
	kit   *tlstest.Kit
	dir   string
	props string // zookeeper.client.config-path
	jaas  string // the JAAS file, "" when the setup has no SASL
}

// clientJAAS is the coordinator's JAAS file: a Client section with the
// user's DigestLoginModule.
func clientJAAS(user, password string) string {
	return "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n  username=\"" +
		user + "\"\n  password=\"" + password + "\";\n};\n"
}

// tlsProperties are the client properties of a TLS setup: PKCS12 key store,
// JKS trust store with its password in a file, as ZooKeeper's Java client
// takes them.
func tlsProperties(kit *tlstest.Kit) string {
	return "zookeeper.client.secure=true\n" +
		"zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\n" +
		"zookeeper.ssl.keyStore.location=" + kit.Client.Stores[tlstest.PKCS12] + "\n" +
		"zookeeper.ssl.keyStore.password=" + kit.Password + "\n" +
		"zookeeper.ssl.trustStore.location=" + kit.CA.Trust[tlstest.JKS] + "\n" +
		"zookeeper.ssl.trustStore.passwordPath=" + kit.PasswordFile + "\n"
}

func startSecuredZK(t *testing.T, setup string) *securedZK {
	t.Helper()
	zktest.SkipIfShort(t)
	z := &securedZK{kit: tlstest.New(t), dir: t.TempDir()}
	saslCfg, err := zktest.SASLServerConfig(filepath.Join(z.dir, "zk"), map[string]string{saslUser: saslPassword}, zktest.SASLEnforced)
	if err != nil {
		t.Fatal(err)
	}
	var props string // the properties file's text, "" for none
	switch setup {
	case secureSASL:
		s, err := zktest.StartConfig(t.Context(), saslCfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		z.addr = s.Addr
		// No properties file: SASL is on by default, and the JAAS file
		// comes with the JVM options, as most Fluss clusters have it.
	case secureTLS:
		z.addr = tlstest.StartZooKeeper(t, z.kit, "need").SecureAddr
		props = tlsProperties(z.kit)
	case secureBoth:
		s := tlstest.StartZooKeeperWith(t, z.kit, tlstest.ServerOptions{
			ClientAuth:  "need",
			ExtraConfig: saslCfg.ExtraConfig,
			JVMFlags:    saslCfg.JVMFlags,
			// An anonymous session cannot read "/" here: ask "srvr".
			Probe: zktest.SrvrProbe(z.kit.ClientTLS("127.0.0.1")),
		})
		z.addr = s.SecureAddr
		props = tlsProperties(z.kit)
	}
	if setup != secureTLS {
		z.jaas = filepath.Join(z.dir, "zk-jaas.conf")
		if err := os.WriteFile(z.jaas, []byte(clientJAAS(saslUser, saslPassword)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if props != "" {
		z.props = filepath.Join(z.dir, "zk-client.properties")
		if err := os.WriteFile(z.props, []byte(props), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return z
}

// serverYAML writes the coordinator's server.yaml for z; the JAAS file is
// given the way Fluss's launch script passes it to the JVM. extra lines are
// appended.
func (z *securedZK) serverYAML(t *testing.T, root, remote string, extra ...string) string {
	t.Helper()
	lines := []string{
		"bind.listeners: FLUSS://127.0.0.1:0",
		"zookeeper.address: " + z.addr,
		"zookeeper.path.root: " + root,
		"zookeeper.client.connection-timeout: 60 s",
		"remote.data.dir: " + remote,
		"coordinator.producer-offsets.cleanup-interval: 1 s",
		"sidecar.orphan-cleanup.grace-period: 1 h",
	}
	if z.props != "" {
		lines = append(lines, "zookeeper.client.config-path: "+z.props)
	}
	if z.jaas != "" {
		lines = append(lines, "env.java.opts.all: -Xmx1g -Djava.security.auth.login.config="+z.jaas)
	}
	lines = append(lines, extra...)
	path := filepath.Join(t.TempDir(), "server.yaml")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSecuredZooKeeper runs register, get, delete, cleanup and the admin
// commands against each secured setup, and ZooKeeper's own Java client,
// configured from the same properties and JAAS files, reads what the
// sidecar wrote.
func TestSecuredZooKeeper(t *testing.T) {
	for _, setup := range []string{secureSASL, secureTLS, secureBoth} {
		t.Run(setup, func(t *testing.T) {
			z := startSecuredZK(t, setup)
			root := zktest.UniqueRoot()
			yaml := z.serverYAML(t, root, filepath.Join(t.TempDir(), "remote"))
			cfgArgs := []string{"--config", yaml}
			cfg, err := loadConfig(cfgArgs)
			if err != nil {
				t.Fatal(err)
			}
			a := apptest.StartConfig(t, cfg, app.Options{})
			bs := a.Addr()
			cli := func(args ...string) (string, string, int) {
				t.Helper()
				return runCLI(args...)
			}

			for _, r := range [][]string{
				{"--producer-id", "job-1", "--offset", "100:0=42", "--offset", "100:1=7"},
				{"--producer-id", "job-short", "--ttl-ms", "1", "--offset", "100:0=1"},
			} {
				if out, errOut, code := cli(append([]string{"offsets", "register", "--bootstrap", bs}, r...)...); code != 0 {
					t.Fatalf("register: %s %s", out, errOut)
				}
			}
			out, errOut, code := cli("offsets", "get", "--bootstrap", bs, "--producer-id", "job-1")
			if code != 0 || !strings.Contains(out, "42") {
				t.Fatalf("get: %d %s %s", code, out, errOut)
			}

			// Cleanup (every second here) removes the expired snapshot.
			eventually.Nil(t, "cleanup to remove the expired snapshot", func() error {
				out, _, code := cli("offsets", "get", "--bootstrap", bs, "--producer-id", "job-short")
				if code != 0 {
					t.Fatalf("get of an expiring snapshot: %s", out)
				}
				if !strings.Contains(out, `"found":false`) {
					return fmt.Errorf("still found: %s", out)
				}
				return nil
			})

			admin := func(args ...string) (string, string, int) {
				return runCLI(append(append([]string{"offsets"}, args...), cfgArgs...)...)
			}
			out, errOut, code = admin("list")
			lines := jsonLines(t, out)
			if code != 0 || len(lines) != 1 || lines[0]["producer_id"] != "job-1" || lines[0]["state"] != "live" {
				t.Fatalf("list: %d %s %s", code, out, errOut)
			}
			out, errOut, code = admin("fsck")
			if lines = jsonLines(t, out); code != 0 || len(lines) != 1 || lines[0]["summary"] == nil {
				t.Fatalf("fsck: %d %s %s", code, out, errOut)
			}
			file := filepath.Join(t.TempDir(), "rows.csv")
			if out, errOut, code = admin("export", "--format", "csv", "--output", file); code != 0 || !strings.Contains(out, `"rows":2`) {
				t.Fatalf("export: %d %s %s", code, out, errOut)
			}

			// ZooKeeper's own Java client, from the same two files.
			javaOut := zkJavaClient(t, z, "get", root+"/producers/job-1")
			if !strings.Contains(javaOut, `"tables":[{"table_id":100,`) {
				t.Fatalf("ZooKeeper's Java client did not read the snapshot znode:\n%s", javaOut)
			}

			proxyDiscoversCoordinator(t, z, root)

			if out, errOut, code = cli("offsets", "delete", "--bootstrap", bs, "--producer-id", "job-1"); code != 0 {
				t.Fatalf("delete: %s %s", out, errOut)
			}
			if out, _, code = admin("list"); code != 0 || strings.TrimSpace(out) != "" {
				t.Fatalf("list after delete: %d %q", code, out)
			}
		})
	}
}

// TestSecuredZooKeeperIgnoredProperties starts the sidecar against
// ZooKeeper requiring SASL with a client properties file that holds
// java.security.auth.login.config and other properties ZooKeeper's Java
// client ignores, the JAAS file given as the coordinator gets it
// ($FLUSS_ENV_JAVA_OPTS): the start accepts the file and says so in one
// line per property, SASL works (register, get, delete), and ZooKeeper's
// own client takes the same file.
func TestSecuredZooKeeperIgnoredProperties(t *testing.T) {
	z := startSecuredZK(t, secureSASL)
	z.props = filepath.Join(z.dir, "zk-client.properties")
	props := "java.security.auth.login.config=" + z.jaas + "\n" +
		"sun.security.krb5.debug=true\n" +
		"zookeeper.ssl.quorum.keyStore.location=/etc/zookeeper/quorum.p12\n"
	if err := os.WriteFile(z.props, []byte(props), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FLUSS_ENV_JAVA_OPTS", "-Xmx1g -Djava.security.auth.login.config="+z.jaas)
	yamlZK := *z
	yamlZK.jaas = "" // not in server.yaml: only in the environment
	root := zktest.UniqueRoot()
	cfg, err := loadConfig([]string{"--config", yamlZK.serverYAML(t, root, filepath.Join(t.TempDir(), "remote"))})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	a := apptest.StartConfig(t, cfg, app.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
	for _, want := range []string{
		`SASL DIGEST-MD5 as \"` + saslUser + `\"`,
		"property=\"java.security.auth.login.config (ZooKeeper takes the JAAS file from the JVM option -Djava.security.auth.login.config only, never from this file; the sidecar uses that same file, " + z.jaas + ", from $FLUSS_ENV_JAVA_OPTS)\"",
		"property=\"sun.security.krb5.debug (ZooKeeper's Java client does not read it",
		"property=\"zookeeper.ssl.quorum.keyStore.location (ZooKeeper's Java client does not read it",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Fatalf("the start-up log lacks %s:\n%s", want, logs.String())
		}
	}

	bs := a.Addr()
	if out, errOut, code := runCLI("offsets", "register", "--bootstrap", bs, "--producer-id", "job-1", "--offset", "100:0=42"); code != 0 {
		t.Fatalf("register: %s %s", out, errOut)
	}
	if out, errOut, code := runCLI("offsets", "get", "--bootstrap", bs, "--producer-id", "job-1"); code != 0 || !strings.Contains(out, "42") {
		t.Fatalf("get: %d %s %s", code, out, errOut)
	}
	if out := zkJavaClient(t, z, "get", root+"/producers/job-1"); !strings.Contains(out, `"table_id":100`) {
		t.Fatalf("ZooKeeper's Java client, with the same properties file, did not read the snapshot znode:\n%s", out)
	}
	if out, errOut, code := runCLI("offsets", "delete", "--bootstrap", bs, "--producer-id", "job-1"); code != 0 {
		t.Fatalf("delete: %s %s", out, errOut)
	}
	if out, errOut, code := runCLI("offsets", "get", "--bootstrap", bs, "--producer-id", "job-1"); code != 0 || !strings.Contains(out, `"found":false`) {
		t.Fatalf("get after delete: %d %s %s", code, out, errOut)
	}
}

// zkJavaClient runs one command of ZooKeeper's own command-line client
// (ZooKeeperMain) with z's properties file and JAAS file, and returns its
// output.
func zkJavaClient(t *testing.T, z *securedZK, args ...string) string {
	t.Helper()
	zktest.SkipIfShort(t)
	java, classpath, err := zktest.Java()
	if err != nil {
		t.Fatal(err)
	}
	cmdArgs := []string{"-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", classpath}
	if z.jaas != "" {
		cmdArgs = append(cmdArgs, "-Djava.security.auth.login.config="+z.jaas)
	}
	cmdArgs = append(cmdArgs, "org.apache.zookeeper.ZooKeeperMain", "-server", z.addr, "-waitforconnection")
	if z.props != "" {
		cmdArgs = append(cmdArgs, "-client-configuration", z.props)
	}
	cmdArgs = append(cmdArgs, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, java, cmdArgs...).CombinedOutput()
	if err != nil {
		t.Fatalf("ZooKeeperMain %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestSecuredZooKeeperRefusals checks that each way of failing to reach a
// secured ZooKeeper ends the start with one line naming the cause, well
// before zookeeper.client.connection-timeout (60 s here), and that a
// sidecar never serves without the authentication the server requires.
func TestSecuredZooKeeperRefusals(t *testing.T) {
	sasl := startSecuredZK(t, secureSASL)
	tlsZK := startSecuredZK(t, secureTLS)
	kit := tlsZK.kit
	file := func(name, text string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noClientCert := "zookeeper.client.secure=true\n" +
		"zookeeper.ssl.trustStore.location=" + kit.CA.Trust[tlstest.PEM] + "\n"
	untrusted := "zookeeper.client.secure=true\n" +
		"zookeeper.ssl.keyStore.location=" + kit.Client.Stores[tlstest.PKCS12] + "\n" +
		"zookeeper.ssl.keyStore.password=" + kit.Password + "\n" +
		"zookeeper.ssl.trustStore.location=" + kit.OtherCA.Trust[tlstest.PEM] + "\n"

	for _, tc := range []struct {
		name  string
		zk    *securedZK
		props string // the properties file's path
		jaas  string // the JAAS file's path, "" for none
		want  []string
	}{
		{"wrong password", sasl, sasl.props, file("jaas.conf", clientJAAS(saslUser, "not-the-password")),
			[]string{"SASL", saslUser}},
		// Not fluss's password: ZooKeeper 3.8.0 lets an unknown user in
		// with the password of the last user who logged in
		// (ZOOKEEPER-4839, fixed in 3.8.5 and 3.9.3).
		{"unknown user", sasl, sasl.props, file("jaas.conf", clientJAAS("mallory", "mallory-secret")),
			[]string{"SASL", "mallory"}},
		{"no SASL where it is required", sasl, file("zk.properties", "zookeeper.sasl.client=false\n"), "",
			[]string{"SASL"}},
		{"missing client certificate", tlsZK, file("zk.properties", noClientCert), "",
			[]string{"certificate"}},
		{"untrusted server certificate", tlsZK, file("zk.properties", untrusted), "",
			[]string{"certificate", "unknown authority"}},
		{"missing config file", tlsZK, filepath.Join(t.TempDir(), "absent.properties"), "",
			[]string{"zookeeper.client.config-path", "absent.properties"}},
		{"misspelt property", tlsZK, file("zk.properties", "zookeeper.client.secure=true\nzookeeper.ssl.keystore.location=/x\n"), "",
			[]string{"zookeeper.ssl.keystore.location", "not a ZooKeeper client property", "did you mean zookeeper.ssl.keyStore.location?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z := *tc.zk
			z.props, z.jaas = tc.props, tc.jaas
			cfg, err := loadConfig([]string{"--config", z.serverYAML(t, zktest.UniqueRoot(), filepath.Join(t.TempDir(), "remote"))})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			s, err := app.FromConfig(cfg)
			if err == nil {
				var a *app.App
				a, err = app.Start(ctx, s, app.Options{})
				if err == nil {
					a.Close()
					t.Fatal("the sidecar started")
				}
			}
			msg := err.Error()
			if errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "no session within") {
				t.Fatalf("the start waited for a timeout instead of failing on the cause: %v", err)
			}
			if strings.Contains(msg, "\n") {
				t.Fatalf("the error spans several lines: %q", msg)
			}
			t.Log(msg)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("error %q does not name %q", msg, w)
				}
			}
		})
	}
}

// proxyDiscoversCoordinator starts a proxy-mode sidecar with the authorizer
// on over z: it loads the ACLs and follows /coordinators/active through
// the secured ZooKeeper, and forwards a request to the coordinator it
// found there.
func proxyDiscoversCoordinator(t *testing.T, z *securedZK, root string) {
	t.Helper()
	coord, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(coord.Close)
	yaml := z.serverYAML(t, root, filepath.Join(t.TempDir(), "remote"),
		"sidecar.mode: proxy", "authorizer.enabled: true", "super.users: User:admin",
		"internal.listener.name: INTERNAL") // FLUSS, the only listener, is then authorized
	cfg, err := loadConfig([]string{"--config", yaml})
	if err != nil {
		t.Fatal(err)
	}
	s, err := app.FromConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The coordinator registers itself as Fluss does, through the same
	// secured client configuration.
	ctx := t.Context()
	zc, err := zk.Connect(ctx, s.ZooKeeperConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	defer zc.Close()
	active := fmt.Sprintf(`{"version":2,"id":"1","listeners":"FLUSS://%s"}`, coord.Addr())
	if _, err := zc.Create(ctx, "/coordinators/active", []byte(active), zk.Ephemeral); err != nil {
		t.Fatal(err)
	}
	a := apptest.StartConfig(t, cfg, app.Options{})
	c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallRaw(ctx, messages.KeyListDatabases, 0, nil); err != nil {
		t.Fatalf("a request forwarded to the discovered coordinator: %v", err)
	}
	if n := len(coord.RequestsFor(messages.KeyListDatabases)); n != 1 {
		t.Fatalf("the coordinator saw %d LIST_DATABASES requests, want 1", n)
	}
}
