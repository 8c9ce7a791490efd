package clientconfig

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// jaasCases are JAAS files the JVM reads too (TestJAASAsJavaReadsIt).
var jaasCases = []struct {
	name     string
	text     string
	sections []string
}{
	{"zookeeper client", `Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username="bob"
  password="bob-secret";
};`, []string{"Client"}},
	{"comments and two sections", `/* a comment
   over lines */
Server { org.apache.zookeeper.server.auth.DigestLoginModule required user_bob="x"; }; // trailing
Client {
  // the client
  org.apache.zookeeper.server.auth.DigestLoginModule required username=bob password="p w";
};`, []string{"Server", "Client"}},
	{"escapes and flags", `Other { a.B optional k="a\"b\\c"; c.D sufficient; };`, []string{"Other"}},
	{"shaded module", `Client { org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.server.auth.DigestLoginModule required username="u" password="p"; };`, []string{"Client"}},
}

func TestParseJAAS(t *testing.T) {
	t.Parallel()
	j, err := ParseJAAS(jaasCases[1].text)
	if err != nil {
		t.Fatal(err)
	}
	c := j["Client"]
	if len(c) != 1 || c[0].Flag != "required" || c[0].Options["username"] != "bob" || c[0].Options["password"] != "p w" {
		t.Fatalf("Client section: %+v", c)
	}
	if s := j["Server"]; len(s) != 1 || s[0].Options["user_bob"] != "x" {
		t.Fatalf("Server section: %+v", s)
	}
	o, err := ParseJAAS(jaasCases[2].text)
	if err != nil {
		t.Fatal(err)
	}
	if got := o["Other"]; len(got) != 2 || got[0].Options["k"] != `a"b\c` || got[1].Flag != "sufficient" {
		t.Fatalf("Other section: %+v", got)
	}
}

func TestParseJAASErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{`Client { m required a="b" };`, `line 1: section "Client", module m: expected an option name or ";", found "}"`},
		{`Client { m required a='b'; };`, "single quotes"},
		{`Client { m mandatory; };`, "expected a flag"},
		{`Client { m required; }`, `expected ";"`},
		{`Client m required; };`, `expected "{"`},
		{"Client {\n m required a=\"b;\n};", "line 2: a quoted string runs past the end of the line"},
		{`/* open`, "unterminated comment"},
		{`Client { m required a=; };`, "expected a value"},
		{`{ };`, "expected a section name"},
		{`Client { m required a="x"; }; @`, "unexpected character"},
	} {
		if _, err := ParseJAAS(tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.text, err, tc.want)
		}
	}
}

// TestJAASAsJavaReadsIt reads every case with the JVM's own JAAS
// configuration (testdata/DumpJAAS.java) and checks the Go parser agrees.
func TestJAASAsJavaReadsIt(t *testing.T) {
	t.Parallel()
	zktest.SkipIfShort(t)
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is needed to compare with the JVM's JAAS reader (make test installs it): %v", err)
	}
	for _, tc := range jaasCases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jaas.conf")
			if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"-Djava.security.auth.login.config=" + path, "testdata/DumpJAAS.java"}, tc.sections...)
			out, err := exec.Command(java, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("java: %v\n%s", err, out)
			}
			j, err := ParseJAAS(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, name := range tc.sections {
				mods, ok := j[name]
				if !ok {
					fmt.Fprintf(&b, "section %s missing\n", name)
					continue
				}
				fmt.Fprintf(&b, "section %s %d\n", name, len(mods))
				for _, m := range mods {
					fmt.Fprintf(&b, "module %s %s\n", m.Class, m.Flag)
					keys := make([]string, 0, len(m.Options))
					for k := range m.Options {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					for _, k := range keys {
						fmt.Fprintf(&b, "option %s=%s\n", k, m.Options[k])
					}
				}
			}
			if got, want := strings.TrimSpace(b.String()), strings.TrimSpace(string(out)); got != want {
				t.Fatalf("Go read\n%s\nJava read\n%s", got, want)
			}
		})
	}
}

func FuzzParseJAAS(f *testing.F) {
	for _, tc := range jaasCases {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		j, err := ParseJAAS(text)
		if err != nil {
			return
		}
		for name, mods := range j {
			if name == "" {
				t.Fatal("empty section name")
			}
			for _, m := range mods {
				if m.Class == "" || m.Flag == "" || m.Options == nil {
					t.Fatalf("incomplete module %+v", m)
				}
			}
		}
	})
}
