package config

import (
	"os"
	"strings"
	"testing"
)

func TestProvidersResolve(t *testing.T) {
	t.Parallel()
	env := map[string]string{"S3_SECRET": "s3cr3t", "EMPTY": "", "BRACE": "a}b"}
	files := map[string]string{"/run/secrets/pw": "file-pw\n", "/run/secrets/crlf": "x\r\n"}
	p := Providers{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		ReadFile: func(f string) ([]byte, error) {
			if v, ok := files[f]; ok {
				return []byte(v), nil
			}
			return nil, os.ErrNotExist
		},
	}
	cases := []struct {
		name, in, want, err string
	}{
		{"plain", "abc", "abc", ""},
		{"env", "${env:S3_SECRET}", "s3cr3t", ""},
		{"embedded", "user_a=\"${env:S3_SECRET}\";", "user_a=\"s3cr3t\";", ""},
		{"two", "${env:S3_SECRET}-${env:S3_SECRET}", "s3cr3t-s3cr3t", ""},
		{"empty env", "x${env:EMPTY}y", "xy", ""},
		{"value with brace", "${env:BRACE}", "a}b", ""},
		{"file", "${file:/run/secrets/pw}", "file-pw", ""},
		{"file crlf", "${file:/run/secrets/crlf}", "x", ""},
		{"escaped", "$${env:S3_SECRET}", "${env:S3_SECRET}", ""},
		{"dollar alone", "a$b{c}", "a$b{c}", ""},
		{"unset env", "${env:NOPE}", "", "zk.key: reference ${env:NOPE}: the environment variable is not set"},
		{"missing file", "${file:/nope}", "", "zk.key: reference ${file:/nope}: file does not exist"},
		{"unknown provider", "${vault:x}", "", `unknown provider "vault"`},
		{"bare", "${HOME}", "", "want ${env:NAME} or ${file:PATH}"},
		{"unterminated", "${env:X", "", "unterminated reference"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := New()
			cfg.Set("zk.key", c.in)
			err := p.Resolve(cfg)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want error %q", err, c.err)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Fatalf("error leaks a secret: %v", err)
				}
				return
			}
			got, _ := cfg.Lookup("zk.key")
			if err != nil || got != c.want {
				t.Fatalf("got %q %v, want %q", got, err, c.want)
			}
		})
	}
}

func TestProvidersDefaultToTheProcessEnvironment(t *testing.T) {
	t.Setenv("FLUSS_SIDECAR_TEST_SECRET", "from-env")
	cfg := New()
	cfg.Set("s3.secret-key", "${env:FLUSS_SIDECAR_TEST_SECRET}")
	cfg.Set("a", "${env:FLUSS_SIDECAR_TEST_UNSET_1}")
	cfg.Set("b", "${env:FLUSS_SIDECAR_TEST_UNSET_2}")
	err := Providers{}.Resolve(cfg)
	if v, _ := cfg.Lookup("s3.secret-key"); v != "from-env" {
		t.Fatalf("resolved %q", v)
	}
	// Every failing key is reported, not only the first.
	if err == nil || !strings.Contains(err.Error(), "a: ") || !strings.Contains(err.Error(), "b: ") {
		t.Fatalf("errors: %v", err)
	}
}

func FuzzProvidersExpand(f *testing.F) {
	for _, s := range []string{"", "${env:A}", "$${", "${", "}${file:x}", "$$${env:A}", "${:}"} {
		f.Add(s)
	}
	p := Providers{
		LookupEnv: func(k string) (string, bool) { return "<" + k + ">", k != "" },
		ReadFile:  func(string) ([]byte, error) { return []byte("F"), nil },
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := p.expand(s)
		if err == nil && !strings.Contains(s, "${") && out != s {
			t.Fatalf("a value without references changed: %q -> %q", s, out)
		}
	})
}
