// Package clientconfig reads the ZooKeeper client configuration a Fluss
// coordinator is given through zookeeper.client.config-path: a Java
// properties file in the format of ZooKeeper's ZKClientConfig, and the JAAS
// login configuration file whose "Client" section holds the SASL
// credentials.
//
// Every property is honoured, accepted with a start-up line saying why it
// changes nothing for this client, or refused by name: nothing in the file
// is silently ignored. A property the sidecar does not know is accepted
// without effect, as ZooKeeper's Java client accepts it, unless it is a
// near miss of one the sidecar reads, which is refused with "did you mean"
// (unknown.go states the rule). The result, Settings, says what the
// connection must do (TLS with which stores, SASL as whom);
// Settings.Security turns it into the zk package's TLS configuration and
// SASL exchange.
package clientconfig

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/zk/zktls"
)

// Settings is what a client properties file, with its JAAS file, asks of the
// connection to ZooKeeper.
type Settings struct {
	// Path is the properties file read, "" when there was none.
	Path string
	// Secure is zookeeper.client.secure: TLS to the servers' secure client
	// port, with TLS as its settings.
	Secure bool
	TLS    zktls.Settings
	// SASL holds the DIGEST-MD5 credentials, nil when the client does not
	// authenticate with SASL; SASLStatus says which and why, for the start-up
	// line.
	SASL       *Credentials
	SASLStatus string
	// NoEffect lists the accepted properties that change nothing for this
	// client, each as "key (reason)", sorted.
	NoEffect []string
}

// Credentials are the user name and password of a JAAS DigestLoginModule.
type Credentials struct {
	JAASPath string
	Section  string
	Username string
	Password string
}

// Options are the inputs besides the properties file.
type Options struct {
	// JAASPath is the JAAS login configuration file (what Java reads from
	// -Djava.security.auth.login.config), "" when none is given.
	JAASPath string
	// Expand resolves ${env:NAME} and ${file:PATH} references in property
	// values and JAAS options; nil leaves values as they are.
	Expand func(string) (string, error)
	// JAASFrom says where JAASPath was found (e.g. "env.java.opts.all"),
	// for the line about a java.security.auth.login.config in the file.
	JAASFrom string
	// JVMOptions are the -Dkey=value options the coordinator's JVM would
	// get. ZooKeeper's client reads its properties from the JVM's system
	// properties first and lets the file override them, so the options
	// whose key starts with "zookeeper." (or is another client property,
	// such as jute.maxbuffer, or a near miss of one) count as properties,
	// under the same rules as the file's; the rest are not the client's
	// and are left alone.
	JVMOptions []JVMOption
}

// JVMOption is one -Dkey=value option, and where it was found (for
// messages, e.g. "env.java.opts.all").
type JVMOption struct {
	Key, Value, From string
}

// Load reads the properties file at path (when path is not empty) and the
// JAAS file named by opts. Errors are one line naming the file, the property
// or the section at fault.
func Load(path string, opts Options) (Settings, error) {
	var props []Property
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Settings{}, fmt.Errorf("ZooKeeper client configuration: %w", err)
		}
		if props, err = ParseProperties(data); err != nil {
			return Settings{}, fmt.Errorf("ZooKeeper client configuration %s: %w", path, err)
		}
	}
	s, err := fromProperties(path, withJVMOptions(opts.JVMOptions, props), opts)
	if err != nil {
		if path == "" {
			return Settings{}, err
		}
		return Settings{}, fmt.Errorf("ZooKeeper client configuration %s: %w", path, err)
	}
	return s, nil
}

// withJVMOptions puts the JVM's client properties before the file's; a key
// in the file replaces the option, as the file overrides system properties
// in ZooKeeper's client configuration.
func withJVMOptions(jvm []JVMOption, file []Property) []Property {
	inFile := map[string]bool{}
	for _, p := range file {
		inFile[p.Key] = true
	}
	var out []Property
	for _, o := range jvm {
		if inFile[o.Key] || !isClientOption(o.Key) {
			continue
		}
		out = append(out, Property{Key: o.Key, Value: o.Value, From: "JVM option -D" + o.Key + " (" + o.From + ")", jvmFrom: o.From})
	}
	return append(out, file...)
}

// isClientOption reports a JVM option that is checked as a client property:
// one the sidecar knows, any under "zookeeper.", and a near miss of a
// property the sidecar acts on (such as -Dzookeper.client.secure). The
// others (-Dlog4j..., -Djava.security.auth.login.config) are the JVM's.
func isClientOption(key string) bool {
	_, known := rules[key]
	return known || strings.HasPrefix(key, "zookeeper.") || nearMiss(key) != ""
}

// values holds the checked properties by key.
type values map[string]string

func (v values) boolean(key string, def bool) (bool, error) {
	s, ok := v[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(s) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("property %s: %q is not true or false", key, s)
}

func (v values) list(key string) []string {
	var out []string
	for _, part := range strings.Split(v[key], ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func (v values) store(prefix string) zktls.Store {
	return zktls.Store{
		Location:     v[prefix+"location"],
		Password:     v[prefix+"password"],
		PasswordPath: v[prefix+"passwordPath"],
		Type:         v[prefix+"type"],
	}
}

// fromProperties checks every property against the rules and builds the
// settings.
func fromProperties(path string, props []Property, opts Options) (Settings, error) {
	s := Settings{Path: path}
	vals := values{}
	for _, p := range props {
		rule, known := rules[p.Key]
		if !known {
			why, err := unknownProperty(p, opts)
			if err != nil {
				return Settings{}, err
			}
			s.NoEffect = append(s.NoEffect, p.noEffect(why))
			continue // its value is not even expanded: nothing reads it
		}
		value := p.Value
		if opts.Expand != nil && strings.Contains(value, "${") {
			v, err := opts.Expand(value)
			if err != nil {
				return Settings{}, fmt.Errorf("%s: property %s: %w", p.where(), p.Key, err)
			}
			value = v
		}
		switch rule.how {
		case refused:
			return Settings{}, fmt.Errorf("%s: property %s is not supported: %s", p.where(), p.Key, rule.why)
		case onlyFalse:
			on, err := values{p.Key: value}.boolean(p.Key, false)
			if err != nil {
				return Settings{}, fmt.Errorf("%s: %w", p.where(), err)
			}
			if on {
				return Settings{}, fmt.Errorf("%s: property %s=true is not supported: %s", p.where(), p.Key, rule.why)
			}
		case noEffect:
			s.NoEffect = append(s.NoEffect, p.noEffect(rule.why))
		}
		vals[p.Key] = value
	}
	if sock, ok := vals[keyCnxnSocket]; ok {
		// Fluss shades ZooKeeper, and its shading rewrites class names, so
		// a coordinator's file names org.apache.fluss.shaded....
		switch {
		case strings.HasSuffix(sock, "org.apache.zookeeper.ClientCnxnSocketNetty"),
			strings.HasSuffix(sock, "org.apache.zookeeper.ClientCnxnSocketNIO"):
		default:
			return Settings{}, fmt.Errorf("property %s: %q is not one of ZooKeeper's client socket classes", keyCnxnSocket, sock)
		}
	}

	var err error
	if s.Secure, err = vals.boolean(keySecure, false); err != nil {
		return Settings{}, err
	}
	hostnames, err := vals.boolean(keyHostnameCheck, true)
	if err != nil {
		return Settings{}, err
	}
	if s.Secure {
		s.TLS = zktls.Settings{
			KeyStore:             vals.store(keyKeyStore),
			TrustStore:           vals.store(keyTrustStore),
			Protocol:             vals[keyProtocol],
			EnabledProtocols:     vals.list(keyProtocols),
			CipherSuites:         vals.list(keyCipherSuites),
			HostnameVerification: hostnames,
		}
	} else {
		for k := range vals {
			if isTLSKey(k) {
				s.NoEffect = append(s.NoEffect, fmt.Sprintf("%s (%s is not true)", k, keySecure))
			}
		}
	}
	sort.Strings(s.NoEffect)

	if err := s.chooseSASL(vals, opts); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// chooseSASL follows ZooKeeper's Java client: SASL is on unless
// zookeeper.sasl.client is false; it needs a JAAS file with the section
// named by zookeeper.sasl.clientconfig (default "Client"). A missing default
// section means no SASL, as in Java; a section named explicitly but missing
// is an error. A JAAS file that is given but cannot be read is an error
// here, where Java would go on without SASL: the sidecar never runs
// unauthenticated by accident.
func (s *Settings) chooseSASL(vals values, opts Options) error {
	enabled, err := vals.boolean(keySASLClient, true)
	if err != nil {
		return err
	}
	section, explicit := vals[keySASLSection]
	if !explicit {
		section = DefaultSection
	}
	switch {
	case !enabled:
		s.SASLStatus = "off (" + keySASLClient + " is false)"
		return nil
	case opts.JAASPath == "" && explicit:
		return fmt.Errorf("property %s names JAAS section %q, but no JAAS file is given (see README \"Secured ZooKeeper\")", keySASLSection, section)
	case opts.JAASPath == "":
		s.SASLStatus = "off (no JAAS file is given)"
		return nil
	}
	data, err := os.ReadFile(opts.JAASPath)
	if err != nil {
		return fmt.Errorf("JAAS file: %w", err)
	}
	jaas, err := ParseJAAS(string(data))
	if err != nil {
		return fmt.Errorf("JAAS file %s: %w", opts.JAASPath, err)
	}
	modules, found := jaas[section]
	switch {
	case !found && explicit:
		return fmt.Errorf("JAAS file %s has no section %q, which %s names", opts.JAASPath, section, keySASLSection)
	case !found:
		s.SASLStatus = fmt.Sprintf("off (JAAS file %s has no %q section)", opts.JAASPath, section)
		return nil
	}
	creds, err := digestCredentials(modules, opts)
	if err != nil {
		return fmt.Errorf("JAAS file %s, section %q: %w", opts.JAASPath, section, err)
	}
	creds.JAASPath, creds.Section = opts.JAASPath, section
	s.SASL = creds
	s.SASLStatus = fmt.Sprintf("DIGEST-MD5 as %q (JAAS file %s, section %q)", creds.Username, opts.JAASPath, section)
	return nil
}

// digestCredentials takes the user name and password from the section's
// DigestLoginModule (ZooKeeper's, or a shaded copy such as Fluss's).
func digestCredentials(modules []LoginModule, opts Options) (*Credentials, error) {
	var digest *LoginModule
	for i, m := range modules {
		switch {
		case strings.HasSuffix(m.Class, ".Krb5LoginModule"):
			return nil, errors.New("Kerberos (GSSAPI, " + m.Class + ") is not supported; use DIGEST-MD5 (DigestLoginModule)")
		case strings.HasSuffix(m.Class, ".DigestLoginModule"):
			if digest != nil {
				return nil, errors.New("more than one DigestLoginModule")
			}
			digest = &modules[i]
		default:
			return nil, fmt.Errorf("login module %s is not supported; use org.apache.zookeeper.server.auth.DigestLoginModule", m.Class)
		}
	}
	if digest == nil {
		return nil, errors.New("no login module")
	}
	c := &Credentials{}
	for _, o := range []struct {
		name string
		to   *string
	}{{"username", &c.Username}, {"password", &c.Password}} {
		v, ok := digest.Options[o.name]
		if !ok {
			return nil, fmt.Errorf("DigestLoginModule has no %s option", o.name)
		}
		if opts.Expand != nil && strings.Contains(v, "${") {
			var err error
			if v, err = opts.Expand(v); err != nil {
				return nil, fmt.Errorf("DigestLoginModule option %s: %w", o.name, err)
			}
		}
		*o.to = v
	}
	if c.Username == "" {
		return nil, errors.New("DigestLoginModule has an empty username")
	}
	return c, nil
}
