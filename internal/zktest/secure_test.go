package zktest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSASLServerConfig checks the JAAS file and the zoo.cfg lines for each
// requirement, and that unwritable users are refused.
func TestSASLServerConfig(t *testing.T) {
	tests := []struct {
		req  SASLRequirement
		want []string
		not  []string
	}{
		{SASLOptional, nil, []string{"enforce.auth.enabled=true", "sessionRequireClientSASLAuth=true"}},
		{SASLEnforced, []string{"enforce.auth.enabled=true", "enforce.auth.schemes=sasl"}, []string{"sessionRequireClientSASLAuth=true"}},
		{SASLSessionRequired, []string{"sessionRequireClientSASLAuth=true"}, []string{"enforce.auth.enabled=true"}},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		cfg, err := SASLServerConfig(dir, map[string]string{"bob": "bob's secret", "alice": "ä"}, tt.req)
		if err != nil {
			t.Fatal(err)
		}
		want := append([]string{"authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"}, tt.want...)
		for _, w := range want {
			if !slices.Contains(cfg.ExtraConfig, w) {
				t.Errorf("requirement %d: ExtraConfig %q lacks %q", tt.req, cfg.ExtraConfig, w)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(cfg.ExtraConfig, n) {
				t.Errorf("requirement %d: ExtraConfig %q has %q", tt.req, cfg.ExtraConfig, n)
			}
		}
		jaas := filepath.Join(dir, "jaas.conf")
		if !slices.Contains(cfg.JVMFlags, "-Djava.security.auth.login.config="+jaas) {
			t.Errorf("JVMFlags %q do not name %s", cfg.JVMFlags, jaas)
		}
		b, err := os.ReadFile(jaas)
		if err != nil {
			t.Fatal(err)
		}
		wantJAAS := "Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n" +
			"  user_alice=\"ä\"\n  user_bob=\"bob's secret\";\n};\n"
		if string(b) != wantJAAS {
			t.Errorf("jaas.conf:\n%s\nwant:\n%s", b, wantJAAS)
		}
		if cfg.Probe == nil || cfg.Dir != dir {
			t.Errorf("config %+v has no probe or the wrong dir", cfg)
		}
	}
	for _, users := range []map[string]string{nil, {"bo b": "x"}, {"bob": `a"b`}, {"bob": `a\b`}, {"bob": "a\nb"}} {
		if _, err := SASLServerConfig(t.TempDir(), users, SASLEnforced); err == nil {
			t.Errorf("users %q accepted", users)
		}
	}
}

// TestSASLEnforcedServer starts an enforcing server: it gets ready (the
// probe needs no session) and refuses an anonymous client's request.
func TestSASLEnforcedServer(t *testing.T) {
	SkipIfShort(t)
	cfg, err := SASLServerConfig(t.TempDir(), map[string]string{"bob": "bobsecret"}, SASLEnforced)
	if err != nil {
		t.Fatal(err)
	}
	s, err := StartConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := get(t, s.Addr, "/"); err == nil {
		t.Fatal("an anonymous client read / from a server that enforces SASL")
	}
	const refused = "does not match with any of the expected authentication scheme"
	if !strings.Contains(s.LogTail(1<<20), refused) {
		t.Fatalf("server log does not show the refusal %q", refused)
	}
}
