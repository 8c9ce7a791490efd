package digestmd5

import (
	"errors"
	"fmt"
	"strings"
)

// maxChallenge is RFC 2831's bound on a digest-challenge (section 2.1.1:
// "less than 2048 bytes").
const maxChallenge = 2048

// directive is one name=value pair of a challenge, the value unquoted.
type directive struct {
	name, value string
}

// parseDirectives splits a comma-separated list of name=value directives,
// where a value is a token or a quoted-string (backslash escapes one
// character). Blank list elements and linear white space around elements,
// names and '=' are allowed, as RFC 2831's #rule permits. Names are
// lower-cased; values are returned as sent, escapes removed.
func parseDirectives(s string) ([]directive, error) {
	var out []directive
	i := 0
	skipLWS := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
			i++
		}
	}
	for {
		skipLWS()
		if i == len(s) {
			return out, nil
		}
		if s[i] == ',' {
			i++
			continue
		}
		start := i
		for i < len(s) && isTokenChar(s[i]) {
			i++
		}
		if i == start {
			return nil, fmt.Errorf("unexpected %q at offset %d, want a directive name", s[i], i)
		}
		name := strings.ToLower(s[start:i])
		skipLWS()
		if i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("directive %q has no '='", name)
		}
		i++
		skipLWS()
		var value string
		if i < len(s) && s[i] == '"' {
			v, n, err := unquote(s[i:])
			if err != nil {
				return nil, fmt.Errorf("directive %q: %w", name, err)
			}
			value, i = v, i+n
		} else {
			start := i
			for i < len(s) && isTokenChar(s[i]) {
				i++
			}
			if i == start {
				return nil, fmt.Errorf("directive %q has no value", name)
			}
			value = s[start:i]
		}
		out = append(out, directive{name, value})
		skipLWS()
		if i < len(s) && s[i] != ',' {
			return nil, fmt.Errorf("unexpected %q after directive %q", s[i], name)
		}
	}
}

// unquote reads a quoted-string at the start of s and returns its content
// and the number of bytes consumed.
func unquote(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i == len(s) {
				return "", 0, errors.New("unterminated escape in quoted string")
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("unterminated quoted string")
}

// quote writes v as a quoted-string, escaping '"' and '\'.
func quote(v string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		if v[i] == '"' || v[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	b.WriteByte('"')
	return b.String()
}

// isTokenChar reports whether c may appear in an RFC 2616 token: a visible
// ASCII character other than a separator.
func isTokenChar(c byte) bool {
	if c <= ' ' || c >= 0x7f {
		return false
	}
	return !strings.ContainsRune("()<>@,;:\\\"/[]?={}", rune(c))
}

// challenge is what a client needs of a digest-challenge.
type challenge struct {
	realms  []string
	nonce   string
	qops    []string // "auth" when the server sent none
	utf8    bool     // charset=utf-8
	maxbuf  int      // 0 when absent
	hasAuth bool     // qops contains "auth"
}

// parseChallenge parses and checks a digest-challenge (RFC 2831 section
// 2.1.1): nonce and algorithm=md5-sess are required, qop, charset, maxbuf,
// algorithm and stale may appear at most once, and the only charset is
// utf-8. Unknown directives are ignored.
func parseChallenge(b []byte) (*challenge, error) {
	if len(b) == 0 {
		return nil, errors.New("empty challenge (does the server offer DIGEST-MD5?)")
	}
	if len(b) >= maxChallenge {
		return nil, fmt.Errorf("challenge of %d bytes, RFC 2831 allows less than %d", len(b), maxChallenge)
	}
	ds, err := parseDirectives(string(b))
	if err != nil {
		return nil, err
	}
	ch := &challenge{}
	seen := map[string]bool{}
	var algorithm string
	for _, d := range ds {
		if d.name != "realm" {
			if seen[d.name] {
				return nil, fmt.Errorf("directive %q appears more than once", d.name)
			}
			seen[d.name] = true
		}
		switch d.name {
		case "realm":
			ch.realms = append(ch.realms, d.value)
		case "nonce":
			if d.value == "" {
				return nil, errors.New("empty nonce")
			}
			ch.nonce = d.value
		case "qop":
			for _, q := range strings.Split(d.value, ",") {
				if q = strings.TrimSpace(q); q != "" {
					ch.qops = append(ch.qops, strings.ToLower(q))
				}
			}
		case "charset":
			if !strings.EqualFold(d.value, "utf-8") {
				return nil, fmt.Errorf("unsupported charset %q", d.value)
			}
			ch.utf8 = true
		case "algorithm":
			algorithm = d.value
		case "maxbuf":
			n, err := parseMaxbuf(d.value)
			if err != nil {
				return nil, err
			}
			ch.maxbuf = n
		case "stale":
			if strings.EqualFold(d.value, "true") {
				return nil, errors.New("server says the nonce is stale")
			}
		}
	}
	if ch.nonce == "" {
		return nil, errors.New("challenge has no nonce")
	}
	if !strings.EqualFold(algorithm, "md5-sess") {
		if algorithm == "" {
			return nil, errors.New("challenge has no algorithm (want md5-sess)")
		}
		return nil, fmt.Errorf("unsupported algorithm %q (want md5-sess)", algorithm)
	}
	if !seen["qop"] {
		ch.qops = []string{"auth"}
	}
	for _, q := range ch.qops {
		if q == "auth" {
			ch.hasAuth = true
		}
	}
	return ch, nil
}

// parseMaxbuf parses a maxbuf value: a decimal number from 16 to 16777215
// (RFC 2831, "maxbuf").
func parseMaxbuf(v string) (int, error) {
	if v == "" || len(v) > 8 {
		return 0, fmt.Errorf("invalid maxbuf %q", v)
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, fmt.Errorf("invalid maxbuf %q", v)
		}
		n = n*10 + int(v[i]-'0')
	}
	if n < 16 || n > 16777215 {
		return 0, fmt.Errorf("maxbuf %d out of range 16..16777215", n)
	}
	return n, nil
}
