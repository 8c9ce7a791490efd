package clientconfig

import (
	"fmt"
	"strings"
)

// Property is one key=value entry of a properties file.
type Property struct {
	Key   string
	Value string
	Line  int // the first line of the entry, from 1
	// From says where a property not read from the file came from, for
	// messages; "" for the file's own lines.
	From string
	// jvmFrom is where a JVM option was found ("env.java.opts.all"), ""
	// for the file's own lines.
	jvmFrom string
}

// noEffect is the entry of Settings.NoEffect for p, accepted for the reason
// why.
func (p Property) noEffect(why string) string {
	if p.jvmFrom != "" {
		why = "a JVM option in " + p.jvmFrom + "; " + why
	}
	return p.Key + " (" + why + ")"
}

// where names the property's place in messages.
func (p Property) where() string {
	if p.From != "" {
		return p.From
	}
	return fmt.Sprintf("line %d", p.Line)
}

// ParseProperties reads the text of a Java properties file the way
// java.util.Properties.load(InputStream) does, then trims each key and value
// as ZooKeeper's client configuration does: the bytes are ISO 8859-1, "#"
// and "!" start comment lines, an odd number of backslashes at the end of
// a line joins it to the next, a key ends at the first unescaped '=', ':'
// or blank, and \uXXXX, \t, \n, \r and \f are escapes (any other escaped
// character stands for itself). A later entry for a key replaces an earlier
// one; the result keeps the first position of each key.
func ParseProperties(data []byte) ([]Property, error) {
	lines := naturalLines(data)
	var out []Property
	index := map[string]int{}
	for i := 0; i < len(lines); i++ {
		first := i + 1
		line := trimLeadingBlanks(lines[i])
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for endsWithOddBackslashes(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + trimLeadingBlanks(lines[i])
		}
		if endsWithOddBackslashes(line) {
			line = line[:len(line)-1] // a continuation at the end of the file
		}
		rawKey, rawValue := splitEntry(line)
		key, err := unescape(rawKey)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", first, err)
		}
		value, err := unescape(rawValue)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", first, err)
		}
		p := Property{Key: javaTrim(key), Value: javaTrim(value), Line: first}
		if at, ok := index[p.Key]; ok {
			out[at].Value, out[at].Line = p.Value, p.Line
			continue
		}
		index[p.Key] = len(out)
		out = append(out, p)
	}
	return out, nil
}

// naturalLines decodes ISO 8859-1 and splits at "\n", "\r" or "\r\n".
func naturalLines(data []byte) []string {
	var lines []string
	var b strings.Builder
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '\n' || c == '\r' {
			lines = append(lines, b.String())
			b.Reset()
			if c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			continue
		}
		b.WriteRune(rune(c)) // ISO 8859-1: each byte is its own code point
	}
	if b.Len() > 0 {
		lines = append(lines, b.String())
	}
	return lines
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

func trimLeadingBlanks(s string) string {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	return s[i:]
}

func endsWithOddBackslashes(s string) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitEntry cuts a logical line into its raw (still escaped) key and value.
func splitEntry(line string) (key, value string) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++ // the escaped character belongs to the key
			continue
		}
		if c == '=' || c == ':' || isBlank(c) {
			end = i
			break
		}
	}
	key, rest := line[:end], line[end:]
	rest = trimLeadingBlanks(rest)
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = trimLeadingBlanks(rest[1:])
	}
	return key, rest
}

// unescape applies the escapes of a properties file.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			break // a lone backslash at the very end is dropped
		}
		switch c = s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uXXXX escape %q`, s[i-1:])
			}
			var r rune
			for _, h := range s[i+1 : i+5] {
				d, ok := hexDigit(h)
				if !ok {
					return "", fmt.Errorf(`malformed \uXXXX escape %q`, s[i-1:i+5])
				}
				r = r<<4 | d
			}
			b.WriteRune(r)
			i += 4
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func hexDigit(c rune) (rune, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// javaTrim removes leading and trailing characters up to U+0020, as Java's
// String.trim does.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
