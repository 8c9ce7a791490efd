package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// durationUnits maps Fluss's duration unit spellings to their length.
var durationUnits = map[string]time.Duration{
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond, "nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
	"us": time.Microsecond, "µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond, "microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond, "millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// ParseDuration reads a Fluss duration: a whole number followed by an
// optional unit, with optional space between ("24h", "1 min", "500").
// A bare number is milliseconds.
func ParseDuration(s string) (time.Duration, error) {
	num, unit := splitNumber(s)
	if num == "" {
		return 0, fmt.Errorf("duration %q: no number", s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %v", s, err)
	}
	mult := time.Millisecond
	if unit != "" {
		u, ok := durationUnits[strings.ToLower(unit)]
		if !ok {
			return 0, fmt.Errorf("duration %q: unknown unit %q", s, unit)
		}
		mult = u
	}
	if n != 0 && (n > math.MaxInt64/int64(mult) || n < math.MinInt64/int64(mult)) {
		return 0, fmt.Errorf("duration %q overflows", s)
	}
	return time.Duration(n) * mult, nil
}

// ParseMemorySize reads a Fluss memory size: a whole number and an optional
// binary unit ("100mb", "64 kb", "1024" bytes).
func ParseMemorySize(s string) (int64, error) {
	num, unit := splitNumber(s)
	if num == "" {
		return 0, fmt.Errorf("memory size %q: no number", s)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("memory size %q: not a non-negative whole number", s)
	}
	var mult int64
	switch strings.ToLower(unit) {
	case "", "b", "bytes":
		mult = 1
	case "k", "kb", "kibibytes":
		mult = 1 << 10
	case "m", "mb", "mebibytes":
		mult = 1 << 20
	case "g", "gb", "gibibytes":
		mult = 1 << 30
	case "t", "tb", "tebibytes":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("memory size %q: unknown unit %q", s, unit)
	}
	if n > math.MaxInt64/mult {
		return 0, fmt.Errorf("memory size %q overflows", s)
	}
	return n * mult, nil
}

func splitNumber(s string) (num, unit string) {
	s = strings.TrimSpace(s)
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || (i == 1 && (s[0] == '-' || s[0] == '+')) {
		return "", ""
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// SplitList splits the value of a Fluss list option (remote.data.dirs, for
// one) into its items, by the rules Fluss's configuration applies to a list
// written as one string:
//   - items are separated by ',';
//   - an item that starts with ' or " is quoted up to the matching quote, in
//     which ',' is literal and a doubled quote stands for one; only
//     whitespace may follow it before the next ',' or the end;
//   - any other item runs up to the next ',' and is trimmed; whitespace
//     before an item is skipped;
//   - two ',' with only whitespace between give an empty item, but a lone
//     ',' at the start or the end gives none: "" and "," are the empty list,
//     "a,,b" and ",,a" hold an empty item.
//
// It fails on a quote that is not closed and on text after a quoted item.
func SplitList(s string) ([]string, error) {
	type token struct {
		delim  bool // a ','; otherwise an item
		quoted bool
		item   string
		at     int // byte offset in s
	}
	var tokens []token
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == ',':
			tokens = append(tokens, token{delim: true, at: i})
			i++
		case r == '\'' || r == '"':
			item, end, ok := unquote(s, i)
			if !ok {
				return nil, fmt.Errorf("list %q: the quote at offset %d is not closed", s, i)
			}
			tokens = append(tokens, token{quoted: true, item: item, at: i})
			i = end
		case unicode.IsSpace(r):
			i += size
		default:
			end := strings.IndexByte(s[i:], ',')
			if end < 0 {
				end = len(s) - i
			}
			tokens = append(tokens, token{item: strings.TrimSpace(s[i : i+end]), at: i})
			i += end
		}
	}
	var items []string
	for j, t := range tokens {
		nextIsDelim, last := j+1 < len(tokens) && tokens[j+1].delim, j+1 == len(tokens)
		switch {
		case t.delim:
			if nextIsDelim {
				items = append(items, "")
			}
		case t.quoted && !nextIsDelim && !last:
			return nil, fmt.Errorf("list %q: text after the quoted item at offset %d; separate items with ','", s, t.at)
		default:
			items = append(items, t.item)
		}
	}
	return items, nil
}

// unquote reads the quoted item that starts at s[start], a ' or ", and
// returns it with each doubled quote made one, and the offset after the
// closing quote; ok is false when the quote is not closed.
func unquote(s string, start int) (item string, end int, ok bool) {
	q := s[start]
	var b strings.Builder
	for i := start + 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", 0, false
}

// Duration returns a duration value or def.
func (c *Config) Duration(key string, def time.Duration) (time.Duration, error) {
	v := c.String(key, "")
	if v == "" {
		return def, nil
	}
	d, err := ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return d, nil
}

// MemorySize returns a memory size value or def.
func (c *Config) MemorySize(key string, def int64) (int64, error) {
	v := c.String(key, "")
	if v == "" {
		return def, nil
	}
	n, err := ParseMemorySize(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return n, nil
}

// Listener is one entry of bind.listeners or advertised.listeners.
type Listener struct {
	Name string
	Host string
	Port int
}

// Address is host:port, with IPv6 hosts bracketed.
func (l Listener) Address() string {
	return joinHostPort(l.Host, l.Port)
}

func joinHostPort(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// ParseListeners reads "NAME://host:port, NAME2://host:port".
func ParseListeners(s string) ([]Listener, error) {
	var out []Listener
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, rest, ok := strings.Cut(part, "://")
		if !ok || name == "" {
			return nil, fmt.Errorf("listener %q: want NAME://host:port", part)
		}
		i := strings.LastIndex(rest, ":")
		if i < 0 {
			return nil, fmt.Errorf("listener %q: no port", part)
		}
		host := rest[:i]
		if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
			host = host[1 : len(host)-1]
		}
		if c := badHostChar(host); c >= 0 {
			return nil, fmt.Errorf("listener %q: host %q holds %q; a host is letters, digits and - %% . _ : (an IPv6 address may be bracketed)", part, host, rune(c))
		}
		port, err := strconv.Atoi(rest[i+1:])
		if err != nil || port < 0 || port > 65535 {
			return nil, fmt.Errorf("listener %q: bad port", part)
		}
		if seen[name] {
			return nil, fmt.Errorf("listener name %q appears twice", name)
		}
		seen[name] = true
		out = append(out, Listener{Name: name, Host: host, Port: port})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no listener in %q", s)
	}
	return out, nil
}

// badHostChar returns the first byte of host that cannot be in a listener's
// host, or -1. The set is the one Fluss's own listener parsing accepts:
// names, IPv4 and IPv6 addresses (with a zone after %), nothing else, so
// every parsed listener joins into an address net.SplitHostPort reads back.
func badHostChar(host string) int {
	for i := 0; i < len(host); i++ {
		c := host[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '%', c == '.', c == '_', c == ':':
		default:
			return int(c)
		}
	}
	return -1
}

// FormatListeners is the inverse of ParseListeners.
func FormatListeners(ls []Listener) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.Name + "://" + l.Address()
	}
	return strings.Join(parts, ",")
}
