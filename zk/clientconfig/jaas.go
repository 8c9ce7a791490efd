package clientconfig

import (
	"fmt"
	"strings"
)

// LoginModule is one entry of a JAAS section: the module's class, its
// control flag and its options.
type LoginModule struct {
	Class   string
	Flag    string // required, requisite, sufficient or optional
	Options map[string]string
}

// JAAS is a parsed JAAS login configuration file: its sections by name,
// each with its login modules in file order.
type JAAS map[string][]LoginModule

// ParseJAAS reads the text of a JAAS login configuration file as the JVM's
// default configuration reads it:
//
//	Client {
//	  org.apache.zookeeper.server.auth.DigestLoginModule required
//	  username="bob"
//	  password="secret";
//	};
//
// Comments are "//" to the end of the line and "/* ... */"; values are
// words or strings in double quotes, in which a backslash takes the next
// character literally (\n, \t and \r stand for the control characters).
// Single quotes are refused, as the JVM refuses them. Sections of the same
// name are joined.
func ParseJAAS(text string) (JAAS, error) {
	p := &jaasParser{lex: jaasLexer{src: text, line: 1}}
	out := JAAS{}
	for {
		tok, err := p.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			return out, nil
		}
		if tok.kind != tokWord {
			return nil, p.errorf(tok, "expected a section name, found %s", tok)
		}
		name := tok.text
		if err := p.expect("{"); err != nil {
			return nil, err
		}
		modules, err := p.modules(name)
		if err != nil {
			return nil, err
		}
		out[name] = append(out[name], modules...)
	}
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokString
	tokPunct
)

type token struct {
	kind tokKind
	text string
	line int
}

func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "the end of the file"
	case tokString:
		return "a quoted string"
	}
	return fmt.Sprintf("%q", t.text)
}

type jaasParser struct {
	lex    jaasLexer
	peeked *token
}

func (p *jaasParser) next() (token, error) {
	if p.peeked != nil {
		t := *p.peeked
		p.peeked = nil
		return t, nil
	}
	return p.lex.next()
}

func (p *jaasParser) errorf(t token, format string, args ...any) error {
	return fmt.Errorf("line %d: %s", t.line, fmt.Sprintf(format, args...))
}

func (p *jaasParser) expect(punct string) error {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.kind != tokPunct || t.text != punct {
		return p.errorf(t, "expected %q, found %s", punct, t)
	}
	return nil
}

// modules reads login modules up to and including the section's "};".
func (p *jaasParser) modules(section string) ([]LoginModule, error) {
	var out []LoginModule
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tokPunct && t.text == "}" {
			return out, p.expect(";")
		}
		if t.kind != tokWord {
			return nil, p.errorf(t, "section %q: expected a login module class, found %s", section, t)
		}
		m := LoginModule{Class: t.text, Options: map[string]string{}}
		flag, err := p.next()
		if err != nil {
			return nil, err
		}
		switch f := strings.ToLower(flag.text); {
		case flag.kind == tokWord && (f == "required" || f == "requisite" || f == "sufficient" || f == "optional"):
			m.Flag = f
		default:
			return nil, p.errorf(flag, "section %q, module %s: expected a flag (required, requisite, sufficient or optional), found %s", section, m.Class, flag)
		}
		for {
			t, err := p.next()
			if err != nil {
				return nil, err
			}
			if t.kind == tokPunct && t.text == ";" {
				break
			}
			if t.kind != tokWord {
				return nil, p.errorf(t, "section %q, module %s: expected an option name or \";\", found %s", section, m.Class, t)
			}
			if err := p.expect("="); err != nil {
				return nil, err
			}
			v, err := p.next()
			if err != nil {
				return nil, err
			}
			if v.kind != tokWord && v.kind != tokString {
				return nil, p.errorf(v, "section %q, option %s: expected a value, found %s", section, t.text, v)
			}
			m.Options[t.text] = v.text
		}
		out = append(out, m)
	}
}

type jaasLexer struct {
	src  string
	pos  int
	line int
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '$' || c == '-' || c == '*' || c >= 0x80
}

func (l *jaasLexer) next() (token, error) {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case c <= ' ':
			l.pos++
		case strings.HasPrefix(l.src[l.pos:], "//"):
			end := strings.IndexByte(l.src[l.pos:], '\n')
			if end < 0 {
				l.pos = len(l.src)
			} else {
				l.pos += end
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return token{}, fmt.Errorf("line %d: unterminated comment", l.line)
			}
			comment := l.src[l.pos : l.pos+2+end+2]
			l.line += strings.Count(comment, "\n")
			l.pos += len(comment)
		case c == '"':
			return l.quoted(c)
		case c == '\'':
			return token{}, fmt.Errorf("line %d: a value in single quotes is not accepted (the JVM refuses it too); use double quotes", l.line)
		case isWordByte(c):
			start := l.pos
			for l.pos < len(l.src) && isWordByte(l.src[l.pos]) {
				l.pos++
			}
			return token{kind: tokWord, text: l.src[start:l.pos], line: l.line}, nil
		case c == '{' || c == '}' || c == ';' || c == '=':
			l.pos++
			return token{kind: tokPunct, text: string(c), line: l.line}, nil
		default:
			return token{}, fmt.Errorf("line %d: unexpected character %q", l.line, c)
		}
	}
	return token{kind: tokEOF, line: l.line}, nil
}

func (l *jaasLexer) quoted(q byte) (token, error) {
	start := l.line
	l.pos++ // the opening quote
	var b strings.Builder
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		l.pos++
		switch c {
		case q:
			return token{kind: tokString, text: b.String(), line: start}, nil
		case '\n':
			return token{}, fmt.Errorf("line %d: a quoted string runs past the end of the line", start)
		case '\\':
			if l.pos == len(l.src) {
				continue
			}
			e := l.src[l.pos]
			l.pos++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return token{}, fmt.Errorf("line %d: unterminated quoted string", start)
}
