package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/zk/clientconfig"
)

func TestZooKeeperJAASLookup(t *testing.T) {
	for _, tc := range []struct {
		name string
		keys map[string]string
		env  map[string]string
		path string
		from string
	}{
		{"none", nil, nil, "", ""},
		{"sidecar key wins", map[string]string{KeyZKJAASFile: "/a.conf", KeyJavaOptsAll: "-Djava.security.auth.login.config=/b.conf"}, nil, "/a.conf", KeyZKJAASFile},
		{"all", map[string]string{KeyJavaOptsAll: "-Xmx1g -Djava.security.auth.login.config=/b.conf -Dx=y"}, nil, "/b.conf", KeyJavaOptsAll},
		{"coordinator after all", map[string]string{
			KeyJavaOptsAll:         "-Djava.security.auth.login.config=/b.conf",
			KeyJavaOptsCoordinator: "-Djava.security.auth.login.config==/c.conf",
		}, nil, "/c.conf", KeyJavaOptsCoordinator},
		{"environment over the key", map[string]string{KeyJavaOptsAll: "-Djava.security.auth.login.config=/b.conf"},
			map[string]string{"FLUSS_ENV_JAVA_OPTS": "-Djava.security.auth.login.config=/e.conf"}, "/e.conf", "$FLUSS_ENV_JAVA_OPTS"},
		{"JVM_ARGS first", map[string]string{KeyJavaOptsAll: "-Djava.security.auth.login.config=/b.conf"},
			map[string]string{"JVM_ARGS": "-Djava.security.auth.login.config=/j.conf"}, "/b.conf", KeyJavaOptsAll},
		{"JVM_ARGS alone", nil, map[string]string{"JVM_ARGS": "-Djava.security.auth.login.config=/j.conf"}, "/j.conf", "$JVM_ARGS"},
		{"other options only", map[string]string{KeyJavaOptsAll: "-Xmx1g"}, nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config.New()
			for k, v := range tc.keys {
				c.Set(k, v)
			}
			path, from := zooKeeperJAAS(c, jvmOptions(c, func(k string) string { return tc.env[k] }))
			if path != tc.path || from != tc.from {
				t.Fatalf("got %q from %q, want %q from %q", path, from, tc.path, tc.from)
			}
		})
	}
}

// TestZooKeeperJAASPropertyLine checks the start-up line of a
// java.security.auth.login.config in the client properties file: accepted,
// naming the JAAS file the sidecar uses and where it was found, whichever
// way that file is given.
func TestZooKeeperJAASPropertyLine(t *testing.T) {
	dir := t.TempDir()
	jaas := filepath.Join(dir, "zk-jaas.conf")
	props := filepath.Join(dir, "zk-client.properties")
	for path, text := range map[string]string{
		jaas:  "Client { org.apache.zookeeper.server.auth.DigestLoginModule required username=\"fluss\" password=\"pw\"; };\n",
		props: clientconfig.JAASProperty + "=" + jaas + "\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const head = `property="java.security.auth.login.config (ZooKeeper takes the JAAS file from the JVM option -Djava.security.auth.login.config only, never from this file; `
	for _, tc := range []struct {
		name string
		keys map[string]string
		env  map[string]string
		want string
	}{
		{"sidecar key", map[string]string{KeyZKJAASFile: jaas}, nil, "the sidecar uses that same file, " + jaas + ", from " + KeyZKJAASFile + `)"`},
		{"env.java.opts.all", map[string]string{KeyJavaOptsAll: "-Djava.security.auth.login.config=" + jaas}, nil, "the sidecar uses that same file, " + jaas + ", from " + KeyJavaOptsAll + `)"`},
		{"environment", nil, map[string]string{"FLUSS_ENV_JAVA_OPTS": "-Djava.security.auth.login.config=" + jaas}, "the sidecar uses that same file, " + jaas + `, from $FLUSS_ENV_JAVA_OPTS)"`},
		{"none", nil, nil, `the sidecar uses no JAAS file)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config.New()
			c.Set(KeyZKClientConfig, props)
			for k, v := range tc.keys {
				c.Set(k, v)
			}
			sec, err := zooKeeperSecurityFromConfig(c, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			logZooKeeperSecurity(hclog.New(&hclog.LoggerOptions{Output: &logs}), sec)
			if !strings.Contains(logs.String(), "ZooKeeper client property accepted without effect: "+head+tc.want) {
				t.Fatalf("the start-up log lacks %s%s:\n%s", head, tc.want, logs.String())
			}
			if sasl := sec.SASL != nil; sasl != (tc.name != "none") {
				t.Fatalf("SASL on: %v, want it only with a JAAS file given outside the properties file", sasl)
			}
		})
	}
}
