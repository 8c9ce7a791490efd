package zk

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// decodeCanonicalSnapshot decodes, without the generic JSON machinery, a
// znode written exactly as EncodeSnapshot and a Fluss coordinator write it:
// compact, keys in order, integers without fraction or exponent, paths
// without escapes. ok is false for anything else, which DecodeSnapshot then
// decodes the general way; when ok is true the result is the one the
// general way gives (FuzzDecodeSnapshotCanonical checks it).
func decodeCanonicalSnapshot(data []byte) (s offsets.Snapshot, ok bool) {
	p := canonical{b: data}
	if !p.lit(`{"version":1,"expiration_time":`) {
		return s, false
	}
	if s.ExpirationTime, ok = p.int(); !ok || !p.lit(`,"tables":[`) {
		return s, false
	}
	n := bytes.Count(data, []byte(`{"table_id":`))
	s.Tables = make([]offsets.FileRef, 0, n)
	if p.lit("]}") {
		return s, p.end()
	}
	for {
		var ref offsets.FileRef
		if !p.lit(`{"table_id":`) {
			return s, false
		}
		if ref.TableID, ok = p.int(); !ok || !p.lit(`,"offsets_path":`) {
			return s, false
		}
		if ref.OffsetsPath, ok = p.str(); !ok || !p.lit("}") {
			return s, false
		}
		s.Tables = append(s.Tables, ref)
		if p.lit(",") {
			continue
		}
		if p.lit("]}") {
			return s, p.end()
		}
		return s, false
	}
}

// canonical reads canonical JSON tokens from b.
type canonical struct {
	b []byte
	i int
}

func (p *canonical) lit(s string) bool {
	if len(p.b)-p.i >= len(s) && string(p.b[p.i:p.i+len(s)]) == s {
		p.i += len(s)
		return true
	}
	return false
}

func (p *canonical) end() bool { return p.i == len(p.b) }

// int reads -?(0|[1-9][0-9]*) that fits an int64.
func (p *canonical) int() (int64, bool) {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '-' {
		p.i++
	}
	digits := p.i
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == digits || (p.b[digits] == '0' && p.i-digits > 1) {
		return 0, false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(p.b[start:p.i]), 10, 64)
	return v, err == nil
}

// str reads a string without escapes or control characters, in valid UTF-8.
func (p *canonical) str() (string, bool) {
	if !p.lit(`"`) {
		return "", false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		p.i++
	}
	return "", false
}
