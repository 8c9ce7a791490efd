package app

import (
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/config"
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
