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

// propertyCases are files whose reading follows java.util.Properties; each
// is also read by Java itself in TestPropertiesAsJavaReadsThem.
var propertyCases = []struct {
	name string
	text string
	want map[string]string
}{
	{"plain", "a=1\nb = 2\n", map[string]string{"a": "1", "b": "2"}},
	{"colon and blank separators", "a:1\nb 2\nc\t=\t3\n", map[string]string{"a": "1", "b": "2", "c": "3"}},
	{"comments", "# x=1\n  ! y=2\nz=3 # not a comment\n", map[string]string{"z": "3 # not a comment"}},
	{"continuation", "a=one,\\\n    two\nb=x\\\\\nc=y\n", map[string]string{"a": "one,two", "b": `x\`, "c": "y"}},
	{"escaped separators in key", "a\\=b=c\nd\\ e=f\n", map[string]string{"a=b": "c", "d e": "f"}},
	{"unicode escape", "k=\\u0041\\u00e9\n", map[string]string{"k": "Aé"}},
	{"latin-1 bytes", "k=caf\xe9\n", map[string]string{"k": "café"}},
	{"crlf and cr", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
	{"later wins", "a=1\na=2\n", map[string]string{"a": "2"}},
	{"empty value", "a=\nb\n", map[string]string{"a": "", "b": ""}},
	{"trailing blanks trimmed", "a = v  \t\n", map[string]string{"a": "v"}},
	{"escapes", "a=x\\ty\\qz\n", map[string]string{"a": "x\ty" + "qz"}},
	{"continuation at end", "a=b\\", map[string]string{"a": "b"}},
	{"comment not continued", "# c \\\na=1\n", map[string]string{"a": "1"}},
	{"blank continuation line", "a=x\\\n\nb=y\n", map[string]string{"a": "x", "b": "y"}},
}

func TestParseProperties(t *testing.T) {
	t.Parallel()
	for _, tc := range propertyCases {
		t.Run(tc.name, func(t *testing.T) {
			props, err := ParseProperties([]byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, p := range props {
				got[p.Key] = p.Value
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	t.Parallel()
	for _, text := range []string{"k=\\u12\n", "k=\\u12zz\n", "\\uqqqq=v\n"} {
		if _, err := ParseProperties([]byte(text)); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: got %v, want a malformed escape error on line 1", text, err)
		}
	}
}

func TestPropertiesLineNumbers(t *testing.T) {
	t.Parallel()
	props, err := ParseProperties([]byte("# c\n\na=1\\\n 2\nb=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(props) != 2 || props[0].Line != 3 || props[1].Line != 5 {
		t.Fatalf("got %+v, want a on line 3 and b on line 5", props)
	}
}

// TestPropertiesAsJavaReadsThem reads every case with java.util.Properties
// (Java 17's single-file launcher runs testdata/DumpProperties.java) and
// checks the Go parser agrees character for character.
func TestPropertiesAsJavaReadsThem(t *testing.T) {
	t.Parallel()
	zktest.SkipIfShort(t)
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is needed to compare with java.util.Properties (make test installs it): %v", err)
	}
	dir := t.TempDir()
	var paths []string
	for i, tc := range propertyCases {
		p := filepath.Join(dir, fmt.Sprintf("case%02d.properties", i))
		if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out, err := exec.Command(java, append([]string{"testdata/DumpProperties.java"}, paths...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	javaSays := strings.Split(strings.TrimSpace(string(out)), "== ")
	if len(javaSays) != len(paths)+1 {
		t.Fatalf("java printed %d files, want %d:\n%s", len(javaSays)-1, len(paths), out)
	}
	for i, tc := range propertyCases {
		props, err := ParseProperties([]byte(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(props, func(a, b int) bool { return props[a].Key < props[b].Key })
		var b strings.Builder
		b.WriteString(paths[i] + "\n")
		for _, p := range props {
			b.WriteString(javaShow(p.Key) + "=" + javaShow(p.Value) + "\n")
		}
		if got, want := strings.TrimSpace(b.String()), strings.TrimSpace(javaSays[i+1]); got != want {
			t.Errorf("%s: Go read\n%s\nJava read\n%s", tc.name, got, want)
		}
	}
}

// javaShow prints a string as DumpProperties.java does.
func javaShow(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0x20 && r < 0x7f && r != '\\' {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

func FuzzParseProperties(f *testing.F) {
	for _, tc := range propertyCases {
		f.Add([]byte(tc.text))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := ParseProperties(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, p := range props {
			if seen[p.Key] {
				t.Fatalf("key %q twice", p.Key)
			}
			seen[p.Key] = true
			if p.Key != javaTrim(p.Key) || p.Value != javaTrim(p.Value) {
				t.Fatalf("untrimmed %q=%q", p.Key, p.Value)
			}
		}
	})
}
