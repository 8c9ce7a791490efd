package zktest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SASLRequirement says how a SASL server treats clients that do not
// authenticate.
type SASLRequirement int

const (
	// SASLOptional offers SASL but serves anonymous clients too.
	SASLOptional SASLRequirement = iota
	// SASLEnforced refuses every request but SASL ones until the
	// connection has authenticated, and closes the session
	// (enforce.auth.enabled=true, enforce.auth.schemes=sasl).
	SASLEnforced
	// SASLSessionRequired is the older switch for the same thing
	// (sessionRequireClientSASLAuth=true).
	SASLSessionRequired
)

// jaasName reports whether name can follow "user_" in a JAAS option name.
func jaasName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

// SASLServerConfig returns the configuration of a server in dir that
// accepts SASL DIGEST-MD5 logins for users (name → password) as
// ZooKeeper's JAAS DigestLoginModule does, treating other clients as req
// says. It writes dir/jaas.conf. The readiness check is the "srvr" four
// letter word on the plain port, which needs no session. For SASL over
// TLS, add its ExtraConfig and JVMFlags to a TLS server's (see
// internal/tlstest's ServerOptions) with a SrvrProbe over TLS.
func SASLServerConfig(dir string, users map[string]string, req SASLRequirement) (ServerConfig, error) {
	if len(users) == 0 {
		return ServerConfig{}, errors.New("zktest: a SASL server needs at least one user")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return ServerConfig{}, err
	}
	names := make([]string, 0, len(users))
	for name := range users {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required")
	for _, name := range names {
		pw := users[name]
		if !jaasName(name) {
			return ServerConfig{}, fmt.Errorf("zktest: user name %q cannot be written to a JAAS file", name)
		}
		if strings.ContainsAny(pw, "\"\\\n\r") {
			return ServerConfig{}, fmt.Errorf("zktest: the password of %q cannot be written to a JAAS file", name)
		}
		fmt.Fprintf(&b, "\n  user_%s=\"%s\"", name, pw)
	}
	b.WriteString(";\n};\n")
	jaas, err := filepath.Abs(filepath.Join(dir, "jaas.conf"))
	if err != nil {
		return ServerConfig{}, err
	}
	if err := os.WriteFile(jaas, []byte(b.String()), 0o600); err != nil {
		return ServerConfig{}, err
	}
	extra := []string{"authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider"}
	switch req {
	case SASLEnforced:
		extra = append(extra, "enforce.auth.enabled=true", "enforce.auth.schemes=sasl")
	case SASLSessionRequired:
		extra = append(extra, "sessionRequireClientSASLAuth=true")
	}
	return ServerConfig{
		Dir:         dir,
		ExtraConfig: extra,
		JVMFlags:    []string{"-Djava.security.auth.login.config=" + jaas},
		Probe:       SrvrProbe(nil),
	}, nil
}

// SrvrProbe returns a readiness check that sends the "srvr" four letter
// word, which needs no session and so no authentication, and wants the
// answer of a serving server. With tlsConfig nil it uses the plain port,
// else the TLS port.
func SrvrProbe(tlsConfig *tls.Config) func(ctx context.Context, s *Server) error {
	return func(ctx context.Context, s *Server) error {
		var (
			conn net.Conn
			err  error
		)
		if tlsConfig == nil {
			var d net.Dialer
			conn, err = d.DialContext(ctx, "tcp", s.Addr)
		} else {
			cfg := tlsConfig.Clone()
			if cfg.ServerName == "" {
				cfg.ServerName = s.cfg.Bind
			}
			d := tls.Dialer{Config: cfg}
			conn, err = d.DialContext(ctx, "tcp", s.SecureAddr)
		}
		if err != nil {
			return err
		}
		defer conn.Close()
		if dl, ok := ctx.Deadline(); ok {
			conn.SetDeadline(dl)
		}
		if _, err := conn.Write([]byte("srvr")); err != nil {
			return err
		}
		out, err := io.ReadAll(io.LimitReader(conn, 64<<10))
		if err != nil && len(out) == 0 {
			return err
		}
		if !strings.Contains(string(out), "Mode:") {
			return fmt.Errorf("zktest: srvr answered %q", strings.TrimSpace(string(out)))
		}
		return nil
	}
}
