package wire

import "strings"

// MaxClientSoftware is how many bytes of the client software name or
// version a connection sent in API_VERSIONS the server keeps; the rest is
// cut and marked with a trailing "~".
const MaxClientSoftware = 64

// ClientSoftwareText bounds a client software name or version for log
// lines and metric labels: at most MaxClientSoftware bytes, each an ASCII
// letter, digit or one of ". _ - + : /"; any other byte (a space, a control
// character, a byte of a multi-byte character, a quote) becomes "_". An
// empty input gives "". The client controls this text; what it sends
// cannot make a log line long or forge one.
func ClientSoftwareText(s string) string {
	cut := len(s) > MaxClientSoftware
	if cut {
		s = s[:MaxClientSoftware-1]
	}
	var b strings.Builder
	b.Grow(len(s) + 1)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '_', c == '-', c == '+', c == ':', c == '/':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	if cut {
		b.WriteByte('~')
	}
	return b.String()
}

// ClientSoftware returns the client software name and version the
// connection sent in its last API_VERSIONS request, bounded by
// ClientSoftwareText; both "" before one was read.
func (s *Session) ClientSoftware() (name, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientName, s.clientVersion
}

// SetClientSoftware records the client software name and version of an
// API_VERSIONS request, bounded by ClientSoftwareText. The layer that
// answers API_VERSIONS calls it.
func (s *Session) SetClientSoftware(name, version string) {
	name, version = ClientSoftwareText(name), ClientSoftwareText(version)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clientName, s.clientVersion = name, version
}
