package authz

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// Configuration keys read by SettingsFromConfig.
const (
	KeyInternalListener     = "internal.listener.name"
	KeyProtocolMap          = "security.protocol.map"
	KeyMechanisms           = "security.sasl.enabled.mechanisms"
	KeyPlainJAAS            = "security.sasl.plain.jaas.config"
	KeyPlainCredentials     = "security.sasl.plain.credentials"
	KeyAuthorizerEnabled    = "authorizer.enabled"
	KeyAuthorizerType       = "authorizer.type"
	KeySuperUsers           = "super.users"
	KeyIgnoreCase           = "security.acl.principal.ignore-case"
	KeyAuthTimeout          = "sidecar.authentication.timeout"
	KeyRequireTableForEmpty = "sidecar.authorization.require-table-for-empty"
)

// DefaultInternalListener is internal.listener.name's default.
const DefaultInternalListener = "FLUSS"

// DefaultAuthTimeout is sidecar.authentication.timeout's default.
const DefaultAuthTimeout = 30 * time.Second

// Settings is the security part of the sidecar's configuration.
type Settings struct {
	InternalListener string
	// Listeners holds the security of every bound listener.
	Listeners            map[string]ListenerSecurity
	AuthTimeout          time.Duration
	AuthorizerEnabled    bool
	SuperUsers           []Principal
	IgnoreCase           bool
	RequireTableForEmpty bool
}

// JAASKey is the per-listener JAAS key of a mechanism.
func JAASKey(listener, mechanism string) string {
	return "security.sasl.listener.name." + strings.ToLower(listener) + "." + strings.ToLower(mechanism) + ".jaas.config"
}

// SettingsFromConfig reads the security keys for the bound listeners.
func SettingsFromConfig(c *config.Config, listeners []string) (Settings, error) {
	var s Settings
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	s.InternalListener = c.String(KeyInternalListener, DefaultInternalListener)
	protocols, err := ParseProtocolMap(c.String(KeyProtocolMap, ""))
	add(err)
	bound := map[string]bool{}
	for _, l := range listeners {
		bound[l] = true
	}
	for name := range protocols {
		if !bound[name] {
			add(fmt.Errorf("%s names listener %s, which is not in bind.listeners", KeyProtocolMap, name))
		}
	}
	var mechs []string
	for _, m := range strings.Split(c.String(KeyMechanisms, MechanismPlain), ",") {
		if m = strings.ToUpper(strings.TrimSpace(m)); m != "" {
			mechs = append(mechs, m)
		}
	}
	dynamic, err := ParseCredentialsList(c.String(KeyPlainCredentials, ""))
	add(wrap(KeyPlainCredentials, err))
	s.Listeners = map[string]ListenerSecurity{}
	for _, name := range listeners {
		p := protocols[name]
		if p == "" {
			p = ProtocolPlaintext
		}
		ls := ListenerSecurity{Protocol: p}
		if p == ProtocolSASL {
			ls.Mechanisms = mechs
			users := map[string]string{}
			key := JAASKey(name, MechanismPlain)
			jaas, ok := c.Lookup(key)
			if !ok {
				key = KeyPlainJAAS
				jaas, ok = c.Lookup(key)
			}
			if ok && strings.TrimSpace(jaas) != "" {
				entries, err := ParseJAAS(jaas)
				if err == nil {
					users, err = PlainUsers(entries)
				}
				add(wrap(key, err))
			}
			for u, pw := range dynamic {
				if users == nil {
					users = map[string]string{}
				}
				users[u] = pw
			}
			ls.Users = NewCredentials(users)
		}
		s.Listeners[name] = ls
	}
	s.AuthTimeout, err = c.Duration(KeyAuthTimeout, DefaultAuthTimeout)
	add(err)
	if err == nil && s.AuthTimeout < 0 {
		add(fmt.Errorf("%s must not be negative, got %v", KeyAuthTimeout, s.AuthTimeout))
	}
	s.AuthorizerEnabled, err = c.Bool(KeyAuthorizerEnabled, false)
	add(err)
	if t := c.String(KeyAuthorizerType, "default"); s.AuthorizerEnabled && t != "default" {
		add(fmt.Errorf("%s %q is not supported; the sidecar implements only the default authorizer", KeyAuthorizerType, t))
	}
	s.SuperUsers, err = ParseSuperUsers(c.String(KeySuperUsers, ""))
	add(wrap(KeySuperUsers, err))
	s.IgnoreCase, err = c.Bool(KeyIgnoreCase, false)
	add(err)
	s.RequireTableForEmpty, err = c.Bool(KeyRequireTableForEmpty, false)
	add(err)
	return s, errors.Join(errs...)
}

func wrap(key string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", key, err)
}

// ParseProtocolMap reads "LISTENER:protocol,..."; protocols are sasl or
// plaintext in any case and come back upper case.
func ParseProtocolMap(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, proto, ok := strings.Cut(part, ":")
		name, proto = strings.TrimSpace(name), strings.TrimSpace(proto)
		if !ok || name == "" {
			return nil, fmt.Errorf("%s: entry %q is not LISTENER:protocol", KeyProtocolMap, part)
		}
		switch strings.ToUpper(proto) {
		case ProtocolSASL, ProtocolPlaintext:
		default:
			return nil, fmt.Errorf("%s: listener %s has unknown protocol %q (want sasl or plaintext)", KeyProtocolMap, name, proto)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s: listener %s appears twice", KeyProtocolMap, name)
		}
		out[name] = strings.ToUpper(proto)
	}
	return out, nil
}

var credentialUser = regexp.MustCompile(`^\w+$`)

// ParseCredentialsList reads "user:password,user2:password2".
func ParseCredentialsList(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		user, pw, ok := strings.Cut(part, ":")
		if !ok || !credentialUser.MatchString(user) || pw == "" {
			return nil, fmt.Errorf("entry %q is not user:password with a user name of letters, digits and '_'", redact(part))
		}
		out[user] = pw
	}
	return out, nil
}

// redact keeps a credentials entry's user name out of the password's way.
func redact(entry string) string {
	user, _, ok := strings.Cut(entry, ":")
	if !ok {
		return "…"
	}
	return user + ":…"
}

// ParseSuperUsers reads "User:admin;User:bob".
func ParseSuperUsers(s string) ([]Principal, error) {
	var out []Principal
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		typ, name, ok := strings.Cut(part, ":")
		if !ok || typ == "" || name == "" {
			return nil, fmt.Errorf("entry %q is not type:name, e.g. User:admin", part)
		}
		out = append(out, Principal{Name: name, Type: typ})
	}
	return out, nil
}
