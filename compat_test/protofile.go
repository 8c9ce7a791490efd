package compat

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ProtoField is one field of a message as written in a .proto file.
type ProtoField struct {
	Number int
	Label  string // required, optional or repeated
	Type   string // scalar type name or message type name
	Name   string
	Packed bool
}

// ProtoMessage is one top-level message of a .proto file.
type ProtoMessage struct {
	Name   string
	Fields []ProtoField
}

// ParseProto reads the subset of proto2 that messages/fluss.proto uses:
// comments, syntax/package/option/import statements, and top-level messages
// whose fields are "label type name = number [options];". Anything else
// (nested messages, enums, oneofs, groups, maps, services) is an error, so
// the pin can never silently skip a definition.
func ParseProto(src string) ([]ProtoMessage, error) {
	toks, err := tokenize(src)
	if err != nil {
		return nil, err
	}
	p := &protoParser{toks: toks}
	var msgs []ProtoMessage
	seen := map[string]bool{}
	for !p.done() {
		switch t := p.next(); t {
		case "syntax", "package", "option", "import":
			if err := p.skipStatement(); err != nil {
				return nil, err
			}
		case "message":
			m, err := p.message()
			if err != nil {
				return nil, err
			}
			if seen[m.Name] {
				return nil, fmt.Errorf("proto: message %s defined twice", m.Name)
			}
			seen[m.Name] = true
			msgs = append(msgs, m)
		default:
			return nil, fmt.Errorf("proto: unexpected %q at top level", t)
		}
	}
	return msgs, nil
}

type protoParser struct {
	toks []string
	pos  int
}

func (p *protoParser) done() bool { return p.pos >= len(p.toks) }

func (p *protoParser) next() string {
	if p.done() {
		return ""
	}
	t := p.toks[p.pos]
	p.pos++
	return t
}

func (p *protoParser) expect(want string) error {
	if t := p.next(); t != want {
		return fmt.Errorf("proto: expected %q, got %q", want, t)
	}
	return nil
}

func (p *protoParser) skipStatement() error {
	for !p.done() {
		if p.next() == ";" {
			return nil
		}
	}
	return fmt.Errorf("proto: statement without ';'")
}

func (p *protoParser) message() (ProtoMessage, error) {
	name := p.next()
	if !isIdent(name) {
		return ProtoMessage{}, fmt.Errorf("proto: bad message name %q", name)
	}
	m := ProtoMessage{Name: name}
	if err := p.expect("{"); err != nil {
		return m, err
	}
	numbers := map[int]bool{}
	names := map[string]bool{}
	for {
		t := p.next()
		switch t {
		case "}":
			return m, nil
		case "":
			return m, fmt.Errorf("proto: message %s is not closed", name)
		case "required", "optional", "repeated":
		default:
			return m, fmt.Errorf("proto: message %s: unsupported %q (only labelled fields are allowed)", name, t)
		}
		f := ProtoField{Label: t, Type: p.next(), Name: p.next()}
		if !isIdent(f.Type) || !isIdent(f.Name) || f.Type == "group" || f.Type == "map" {
			return m, fmt.Errorf("proto: message %s: bad field %q %q", name, f.Type, f.Name)
		}
		if err := p.expect("="); err != nil {
			return m, fmt.Errorf("proto: message %s field %s: %w", name, f.Name, err)
		}
		n, err := strconv.Atoi(p.next())
		if err != nil || n < 1 || n > 536870911 {
			return m, fmt.Errorf("proto: message %s field %s: bad number", name, f.Name)
		}
		f.Number = n
		if t := p.next(); t == "[" {
			if err := p.fieldOptions(&f); err != nil {
				return m, fmt.Errorf("proto: message %s field %s: %w", name, f.Name, err)
			}
			t = p.next()
			if t != ";" {
				return m, fmt.Errorf("proto: message %s field %s: expected ';', got %q", name, f.Name, t)
			}
		} else if t != ";" {
			return m, fmt.Errorf("proto: message %s field %s: expected ';', got %q", name, f.Name, t)
		}
		if numbers[f.Number] || names[f.Name] {
			return m, fmt.Errorf("proto: message %s: field %s (%d) defined twice", name, f.Name, f.Number)
		}
		numbers[f.Number], names[f.Name] = true, true
		m.Fields = append(m.Fields, f)
	}
}

// fieldOptions reads "name = value, ..." up to "]"; only packed is kept.
func (p *protoParser) fieldOptions(f *ProtoField) error {
	for {
		key := p.next()
		if err := p.expect("="); err != nil {
			return err
		}
		val := p.next()
		if key == "packed" {
			switch val {
			case "true":
				f.Packed = true
			case "false":
			default:
				return fmt.Errorf("packed = %q", val)
			}
		}
		switch t := p.next(); t {
		case "]":
			return nil
		case ",":
		default:
			return fmt.Errorf("expected ',' or ']' in options, got %q", t)
		}
	}
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r == '.' || unicode.IsLetter(r) && r < 128 || i > 0 && unicode.IsDigit(r) && r < 128) {
			return false
		}
	}
	return true
}

// tokenize splits proto source into identifiers/numbers, string literals
// (kept with their quotes) and one-character punctuation, dropping // and
// /* */ comments.
func tokenize(src string) ([]string, error) {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("proto: unterminated comment")
			}
			i += end + 4
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("proto: unterminated string")
			}
			toks = append(toks, src[i:j+1])
			i = j + 1
		case c == '_' || c == '.' || c == '-' || c < 128 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c))):
			j := i
			for j < len(src) && (src[j] == '_' || src[j] == '.' || src[j] == '-' || src[j] < 128 && (unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j])))) {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		case strings.IndexByte("{}[]=;,<>()", c) >= 0:
			toks = append(toks, string(c))
			i++
		default:
			return nil, fmt.Errorf("proto: unexpected character %q", c)
		}
	}
	return toks, nil
}
