package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// sources are the files that read configuration: app's and authz's.
func sources(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			out = append(out, f)
		}
	}
	return append(out, "../authz/settings.go")
}

// TestKnownKeysCoverWhatIsRead finds every key literal the configuration
// readers pass to config.Config (and to fsKey) in app's and authz's sources
// and checks KnownKeys lists it, so the list cannot drift from the code.
func TestKnownKeysCoverWhatIsRead(t *testing.T) {
	read := regexp.MustCompile(`c\.(?:String|Duration|Int|Bool|MemorySize)\("([^"]+)",|fsKey\(c, "([^"]+)"\)`)
	found := 0
	for _, f := range sources(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range read.FindAllStringSubmatch(string(src), -1) {
			k := m[1]
			if k == "" {
				k = "fs." + m[2]
			}
			found++
			if !IsKnownKey(k) {
				t.Errorf("%s reads %q, which KnownKeys does not list", f, k)
			}
		}
	}
	// And every key constant the readers declare.
	decl := regexp.MustCompile(`(?m)^\s+Key[A-Za-z]+\s+= "([^"]+)"`)
	for _, f := range sources(t) {
		src, _ := os.ReadFile(f)
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			found++
			if !IsKnownKey(m[1]) && m[1] != ModeStandalone && m[1] != ModeProxy {
				t.Errorf("%s declares key %q, which KnownKeys does not list", f, m[1])
			}
		}
	}
	if found < 20 {
		t.Fatalf("found only %d key literals: the pattern no longer matches the readers", found)
	}
	for _, k := range []string{"zookeeper.address", "fs.gs.storage.root.url", "gs.storage.root.url", "obs.access.key",
		"fs.azure.account.key.acct.dfs.core.windows.net", "security.sasl.listener.name.client.plain.jaas.config"} {
		if !IsKnownKey(k) {
			t.Errorf("%q is not known", k)
		}
	}
	for _, k := range []string{"zookeeper.adress", "cosn.userinfo.secretId", "fs.azure.account.key.", "sidecar.nope"} {
		if IsKnownKey(k) {
			t.Errorf("%q is known", k)
		}
	}
}
