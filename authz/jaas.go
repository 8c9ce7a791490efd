package authz

import (
	"fmt"
	"strings"
	"unicode"
)

// PlainLoginModule is the JAAS login module class of Fluss's SASL/PLAIN
// server.
const PlainLoginModule = "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule"

// JAASEntry is one login module of a JAAS configuration value.
type JAASEntry struct {
	LoginModule string
	Flag        string
	Options     map[string]string
}

// ParseJAAS parses a JAAS configuration value as Fluss's
// "*.jaas.config" keys hold it: one or more
// `<class> <required|requisite|sufficient|optional> key=value ... ;`
// entries. Values are bare words or double-quoted strings in which a
// backslash escapes the next character. Anything else is an error.
func ParseJAAS(s string) ([]JAASEntry, error) {
	tz := &jaasTokenizer{src: s}
	var entries []JAASEntry
	for {
		tok, err := tz.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			break
		}
		if tok.kind != tokWord {
			return nil, fmt.Errorf("JAAS config: expected a login module class at offset %d", tok.pos)
		}
		e := JAASEntry{LoginModule: tok.text, Options: map[string]string{}}
		flag, err := tz.next()
		if err != nil {
			return nil, err
		}
		if flag.kind != tokWord {
			return nil, fmt.Errorf("JAAS config: expected a control flag after %s", e.LoginModule)
		}
		switch strings.ToLower(flag.text) {
		case "required", "requisite", "sufficient", "optional":
			e.Flag = strings.ToLower(flag.text)
		default:
			return nil, fmt.Errorf("JAAS config: invalid control flag %q for %s", flag.text, e.LoginModule)
		}
		for {
			t, err := tz.next()
			if err != nil {
				return nil, err
			}
			if t.kind == tokSemicolon {
				break
			}
			if t.kind != tokWord {
				return nil, fmt.Errorf("JAAS config: expected an option name or ';' at offset %d", t.pos)
			}
			eq, err := tz.next()
			if err != nil {
				return nil, err
			}
			if eq.kind != tokEquals {
				return nil, fmt.Errorf("JAAS config: expected '=' after option %s", t.text)
			}
			v, err := tz.next()
			if err != nil {
				return nil, err
			}
			if v.kind != tokWord && v.kind != tokQuoted {
				return nil, fmt.Errorf("JAAS config: expected a value for option %s", t.text)
			}
			if _, dup := e.Options[t.text]; dup {
				return nil, fmt.Errorf("JAAS config: option %s is set twice", t.text)
			}
			e.Options[t.text] = v.text
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("JAAS config: no login module")
	}
	return entries, nil
}

// PlainUsers returns the users of the PlainLoginModule entries
// (options user_<name>="<password>").
func PlainUsers(entries []JAASEntry) (map[string]string, error) {
	users := map[string]string{}
	found := false
	for _, e := range entries {
		if e.LoginModule != PlainLoginModule {
			continue
		}
		found = true
		for k, v := range e.Options {
			if name, ok := strings.CutPrefix(k, "user_"); ok && name != "" {
				users[name] = v
			}
		}
	}
	if !found {
		return nil, fmt.Errorf("JAAS config has no %s entry", PlainLoginModule)
	}
	return users, nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokQuoted
	tokEquals
	tokSemicolon
)

type token struct {
	kind tokKind
	text string
	pos  int
}

type jaasTokenizer struct {
	src string
	pos int
}

func (t *jaasTokenizer) next() (token, error) {
	for t.pos < len(t.src) && unicode.IsSpace(rune(t.src[t.pos])) {
		t.pos++
	}
	start := t.pos
	if t.pos >= len(t.src) {
		return token{kind: tokEOF, pos: start}, nil
	}
	switch c := t.src[t.pos]; c {
	case '=':
		t.pos++
		return token{kind: tokEquals, text: "=", pos: start}, nil
	case ';':
		t.pos++
		return token{kind: tokSemicolon, text: ";", pos: start}, nil
	case '"':
		t.pos++
		var b strings.Builder
		for t.pos < len(t.src) {
			c := t.src[t.pos]
			switch c {
			case '\\':
				if t.pos+1 >= len(t.src) {
					return token{}, fmt.Errorf("JAAS config: unfinished escape at offset %d", t.pos)
				}
				b.WriteByte(t.src[t.pos+1])
				t.pos += 2
			case '"':
				t.pos++
				return token{kind: tokQuoted, text: b.String(), pos: start}, nil
			default:
				b.WriteByte(c)
				t.pos++
			}
		}
		return token{}, fmt.Errorf("JAAS config: unterminated quoted value at offset %d", start)
	}
	for t.pos < len(t.src) {
		c := t.src[t.pos]
		if unicode.IsSpace(rune(c)) || c == '=' || c == ';' || c == '"' {
			break
		}
		t.pos++
	}
	return token{kind: tokWord, text: t.src[start:t.pos], pos: start}, nil
}
