package config

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Providers resolve ${PROVIDER:ARG} references in configuration values, so
// that secrets need not be written into server.yaml:
//   - ${env:NAME} is the environment variable NAME (an error if unset);
//   - ${file:PATH} is the content of the file at PATH, without one trailing
//     newline (for mounted secrets).
//
// "$${" stands for a literal "${". Any other "${" is an error, so a
// misspelt reference is never used as a value.
type Providers struct {
	// LookupEnv defaults to os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// ReadFile defaults to os.ReadFile.
	ReadFile func(string) ([]byte, error)
}

// Resolve replaces every reference in every value of c. Errors name the
// key and the reference, never a resolved value.
func (p Providers) Resolve(c *Config) error {
	var errs []error
	for _, k := range c.Keys() {
		v := c.values[k]
		if !strings.Contains(v, "${") {
			continue
		}
		r, err := p.expand(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
			continue
		}
		c.values[k] = r
	}
	return errors.Join(errs...)
}

// Expand resolves the references of one value that did not come from the
// configuration itself, such as a line of a ZooKeeper client properties
// file or a JAAS option. Errors name the reference, never a resolved value.
func (p Providers) Expand(v string) (string, error) { return p.expand(v) }

// expand resolves the references of one value.
func (p Providers) expand(v string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		if i > 0 && v[i-1] == '$' {
			// "$${" is a literal "${".
			b.WriteString(v[:i-1])
			b.WriteString("${")
			v = v[i+2:]
			continue
		}
		b.WriteString(v[:i])
		end := strings.IndexByte(v[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated reference %q", v[i:])
		}
		ref := v[i+2 : i+end]
		v = v[i+end+1:]
		provider, arg, ok := strings.Cut(ref, ":")
		if !ok || arg == "" {
			return "", fmt.Errorf("reference ${%s}: want ${env:NAME} or ${file:PATH}", ref)
		}
		switch provider {
		case "env":
			lookup := p.LookupEnv
			if lookup == nil {
				lookup = os.LookupEnv
			}
			val, ok := lookup(arg)
			if !ok {
				return "", fmt.Errorf("reference ${env:%s}: the environment variable is not set", arg)
			}
			b.WriteString(val)
		case "file":
			read := p.ReadFile
			if read == nil {
				read = os.ReadFile
			}
			data, err := read(arg)
			if err != nil {
				return "", fmt.Errorf("reference ${file:%s}: %w", arg, err)
			}
			s := strings.TrimSuffix(string(data), "\n")
			b.WriteString(strings.TrimSuffix(s, "\r"))
		default:
			return "", fmt.Errorf("reference ${%s}: unknown provider %q (want env or file)", ref, provider)
		}
	}
}
