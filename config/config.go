// Package config reads Fluss-style configuration: a flat YAML file of dotted
// keys (as Fluss's server.yaml) plus -Dkey=value overrides, and parses the
// value forms Fluss uses (durations such as "24h" or "1 min", memory sizes
// such as "100mb", listener lists such as "FLUSS://127.0.0.1:9123").
package config

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is a set of string keys and values. Keys unknown to the sidecar are
// kept (a Fluss server.yaml has many) and ignored by readers.
type Config struct {
	values map[string]string
	// sequences are the keys whose value was a YAML sequence in the file,
	// kept joined with ","; see FromSequence.
	sequences map[string]bool
}

// New returns an empty Config.
func New() *Config { return &Config{values: map[string]string{}, sequences: map[string]bool{}} }

// Load reads a Fluss-style YAML file. Nested maps are flattened with dots, so
// both `zookeeper.address: x` and `zookeeper: {address: x}` work; a YAML
// sequence becomes its items joined with "," (FromSequence tells which).
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return c, nil
}

// Parse reads Fluss-style YAML from memory.
func Parse(data []byte) (*Config, error) {
	var root map[string]any
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	c := New()
	if err := c.flatten("", root); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) flatten(prefix string, m map[string]any) error {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		switch v := v.(type) {
		case map[string]any:
			if err := c.flatten(key, v); err != nil {
				return err
			}
		case nil:
			c.values[key] = ""
		case []any:
			parts := make([]string, len(v))
			for i, p := range v {
				parts[i] = fmt.Sprint(p)
			}
			c.values[key] = strings.Join(parts, ",")
			c.sequences[key] = true
		default:
			c.values[key] = fmt.Sprint(v)
		}
	}
	return nil
}

// ApplyOverride applies one "-Dkey=value" argument (with or without "-D").
func (c *Config) ApplyOverride(arg string) error {
	kv := strings.TrimPrefix(arg, "-D")
	k, v, ok := strings.Cut(kv, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return fmt.Errorf("override %q: want -Dkey=value", arg)
	}
	c.Set(k, strings.TrimSpace(v))
	return nil
}

// Set sets a key.
func (c *Config) Set(key, value string) {
	c.values[key] = value
	delete(c.sequences, key)
}

// Merge copies every key of src over c, with what FromSequence says of it.
func (c *Config) Merge(src *Config) {
	for k, v := range src.values {
		c.Set(k, v)
		if src.sequences[k] {
			c.sequences[k] = true
		}
	}
}

// FromSequence reports whether key's value was written as a YAML sequence
// (a block list of "- item" lines, or [a, b]), which the Config holds
// joined with ",". Fluss's server.yaml reader takes one "key: value" per
// line and never reads a YAML sequence: a key whose value Fluss parses
// itself can refuse one.
func (c *Config) FromSequence(key string) bool { return c.sequences[key] }

// Lookup returns a key's value and whether it is set.
func (c *Config) Lookup(key string) (string, bool) {
	v, ok := c.values[key]
	return v, ok
}

// String returns the value or def when unset or blank.
func (c *Config) String(key, def string) string {
	if v, ok := c.values[key]; ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

// Int returns an integer value or def.
func (c *Config) Int(key string, def int64) (int64, error) {
	v := c.String(key, "")
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an integer", key, v)
	}
	return n, nil
}

// Bool returns a boolean value or def.
func (c *Config) Bool(key string, def bool) (bool, error) {
	v := c.String(key, "")
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.ToLower(v))
	if err != nil {
		return false, fmt.Errorf("%s: %q is not a boolean", key, v)
	}
	return b, nil
}

// Keys lists the keys set, sorted.
func (c *Config) Keys() []string {
	out := make([]string, 0, len(c.values))
	for k := range c.values {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
