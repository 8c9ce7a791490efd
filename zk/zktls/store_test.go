package zktls

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreType: the type wins in any case; else the extension decides,
// exactly as ZooKeeper's KeyStoreFileType matches it (case-sensitive,
// after the last dot of the whole path).
func TestStoreType(t *testing.T) {
	cases := []struct {
		loc, typ, want, wantErr string
	}{
		{"/x/a.p12", "", typePKCS12, ""},
		{"/x/a.jks", "", typeJKS, ""},
		{"/x/a.pem", "", typePEM, ""},
		{"/x/a.p12", "pem", typePEM, ""},
		{"/x/a", "Jks", typeJKS, ""},
		{"/x/a.pfx", "", "", "cannot tell"},
		{"/x/a.P12", "", "", "cannot tell"},
		{"/x.d/a", "", "", "cannot tell"},
		{"/x/a.bcfks", "", "", "cannot tell"},
		{"/x/a.p12", "BCFKS", "", "not supported"},
		{"/x/a.p12", "PKCS#12", "", "not a store type"},
	}
	for _, c := range cases {
		t.Run(c.loc+"|"+c.typ, func(t *testing.T) {
			got, err := storeType(propKeyStore, Store{Location: c.loc, Type: c.typ})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("got %q, %v; want an error with %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestPassword: PasswordPath wins over Password, and only one trailing
// "\n" of its file is dropped (Java's System.lineSeparator() on Linux).
func TestPassword(t *testing.T) {
	dir := t.TempDir()
	file := func(content string) string {
		p := filepath.Join(dir, strings.NewReplacer("\n", "N", "\r", "R", " ", "S").Replace(content)+".txt")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name       string
		pass, path string
		want       string
	}{
		{"password only", "p1", "", "p1"},
		{"empty", "", "", ""},
		{"file wins", "p1", file("p2"), "p2"},
		{"one newline dropped", "", file("p3\n"), "p3"},
		{"only one newline dropped", "", file("p4\n\n"), "p4\n"},
		{"carriage return kept", "", file("p5\r\n"), "p5\r"},
		{"spaces kept", "", file(" p6 "), " p6 "},
		{"empty file", "p7", file(""), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := password(propKeyStore, Store{Password: c.pass, PasswordPath: c.path})
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// TestBinaryFormat: the JKS magic makes a file JKS, a DER sequence makes it
// PKCS12, whichever of the two was named; anything else keeps the name.
func TestBinaryFormat(t *testing.T) {
	cases := []struct {
		typ  string
		data string
		want string
	}{
		{typePKCS12, jksMagic + "rest", typeJKS},
		{typeJKS, "\x30\x82\x01", typePKCS12},
		{typeJKS, "-----BEGIN", typeJKS},
		{typePKCS12, "", typePKCS12},
	}
	for _, c := range cases {
		if got := binaryFormat(c.typ, []byte(c.data)); got != c.want {
			t.Errorf("binaryFormat(%s, %q) = %s, want %s", c.typ, c.data, got, c.want)
		}
	}
}
