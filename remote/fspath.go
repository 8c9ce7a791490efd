package remote

import (
	"errors"
	"fmt"
	"strings"
)

// FsPath is a parsed Fluss FsPath: the form in which Fluss names remote
// files and directories, and whose String form is what a coordinator stores
// in a producer znode's "offsets_path" and compares with its listings.
//
// Path is the normalised URI path. For a Windows drive path without scheme
// and authority it keeps the leading slash ("/C:/x"); String drops it again.
// An empty Scheme or Authority means the component is absent: Fluss drops an
// empty authority, so "file:///x" and "file:/x" are the same path.
type FsPath struct {
	Scheme    string
	Authority string
	Path      string
}

// ErrEmptyPath is returned by ParseFsPath for the empty string.
var ErrEmptyPath = errors.New("fspath: Can not create a Path from an empty string")

// ParseFsPath parses and normalises s by the rules of Fluss's FsPath(String):
//
//   - a Windows drive ("C:...") gets a "/" in front;
//   - the scheme is the text before the first ':' if that ':' comes before
//     the first '/';
//   - "//" after the scheme starts an authority when more than two characters
//     remain; it runs up to the next '/', and an empty authority vanishes;
//   - in the path '\' becomes '/', runs of '/' collapse to one, a trailing
//     '/' is dropped (except for "/" and a Windows root like "/C:/"), and "."
//     and ".." segments are resolved the way java.net.URI.normalize does;
//   - every other character, including '?', '#' and '%', is literal.
//
// It fails where Fluss fails: on the empty string, an invalid scheme, a
// scheme followed by a relative or empty path, and an authority that Java
// could not parse (only a malformed bracketed IPv6 literal is checked).
func ParseFsPath(s string) (FsPath, error) {
	if s == "" {
		return FsPath{}, ErrEmptyPath
	}
	if hasWindowsDrive(s, false) {
		s = "/" + s
	}
	var p FsPath
	rest := s
	colon := strings.IndexByte(s, ':')
	slash := strings.IndexByte(s, '/')
	hasScheme := colon >= 0 && (slash < 0 || colon < slash)
	if hasScheme {
		p.Scheme = s[:colon]
		rest = s[colon+1:]
		if err := checkScheme(p.Scheme); err != nil {
			return FsPath{}, fmt.Errorf("invalid path %q: %w", s, err)
		}
	}
	if strings.HasPrefix(rest, "//") && len(rest) > 2 {
		end := strings.IndexByte(rest[2:], '/')
		if end < 0 {
			p.Authority = rest[2:]
			rest = ""
		} else {
			p.Authority = rest[2 : 2+end]
			rest = rest[2+end:]
		}
		if err := checkAuthority(p.Authority); err != nil {
			return FsPath{}, fmt.Errorf("invalid path %q: %w", s, err)
		}
	}
	path := collapseSlashes(rest)
	if hasScheme {
		if path == "" && p.Authority == "" {
			return FsPath{}, fmt.Errorf("invalid path %q: expected a path after the scheme", s)
		}
		if path != "" && path[0] != '/' {
			return FsPath{}, fmt.Errorf("invalid path %q: relative path in absolute URI", s)
		}
	}
	p.Path = normalizeDots(path)
	return p, nil
}

// MustParseFsPath is ParseFsPath for constants; it panics on error.
func MustParseFsPath(s string) FsPath {
	p, err := ParseFsPath(s)
	if err != nil {
		panic(err)
	}
	return p
}

// String renders p as Fluss's FsPath.toString does: "scheme:" if there is a
// scheme, "//authority" if there is an authority, then the path (without the
// slash in front of a Windows drive when there is neither).
func (p FsPath) String() string {
	var b strings.Builder
	if p.Scheme != "" {
		b.WriteString(p.Scheme)
		b.WriteByte(':')
	}
	if p.Authority != "" {
		b.WriteString("//")
		b.WriteString(p.Authority)
	}
	path := p.Path
	if p.Scheme == "" && p.Authority == "" && hasWindowsDrive(path, true) {
		path = path[1:]
	}
	b.WriteString(path)
	return b.String()
}

// Join resolves child, a relative path such as "producers" or
// "p1/12345/x.offsets", against p, as Fluss's FsPath(parent, child) does:
// a leading '/' of child is ignored, and the result is normalised. An empty
// child returns p unchanged. child must not carry a scheme or authority.
func (p FsPath) Join(child string) FsPath {
	child = strings.TrimPrefix(normalizeDots(collapseSlashes(child)), "/")
	if child == "" {
		return p
	}
	base := p.Path
	if base != "" && base != "/" {
		base += "/"
	}
	var path string
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		path = base[:i+1] + child
	} else if p.Scheme != "" {
		// A base with a scheme but no path is absolute: resolve against "/".
		path = "/" + child
	} else {
		path = child
	}
	// URI resolution normalises the joined path (skipping empty segments),
	// then FsPath's own normalisation runs on the result.
	path = normalizeDots(collapseRuns(path))
	return FsPath{Scheme: p.Scheme, Authority: p.Authority, Path: normalizeDots(collapseSlashes(path))}
}

// IsAbs reports whether the path part is absolute.
func (p FsPath) IsAbs() bool { return strings.HasPrefix(p.Path, "/") }

// hasWindowsDrive reports whether s starts with a drive letter and a colon,
// after a '/' when slashed is true.
func hasWindowsDrive(s string, slashed bool) bool {
	start := 0
	if slashed {
		start = 1
		if len(s) == 0 || s[0] != '/' {
			return false
		}
	}
	if len(s) < start+2 || s[start+1] != ':' {
		return false
	}
	c := s[start]
	return ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z')
}

func isAlpha(c byte) bool { return ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z') }

// checkScheme applies java.net.URI's scheme grammar: a letter followed by
// letters, digits, '+', '-' or '.'.
func checkScheme(s string) error {
	if s == "" {
		return errors.New("expected scheme name")
	}
	if !isAlpha(s[0]) {
		return fmt.Errorf("illegal character in scheme name %q", s)
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !('0' <= c && c <= '9') && c != '+' && c != '-' && c != '.' {
			return fmt.Errorf("illegal character in scheme name %q", s)
		}
	}
	return nil
}

// checkAuthority refuses square brackets except around a plausible IPv6
// literal host, the one authority shape java.net.URI would reject.
func checkAuthority(a string) error {
	if !strings.ContainsAny(a, "[]") {
		return nil
	}
	host := a[strings.LastIndexByte(a, '@')+1:]
	if !strings.HasPrefix(host, "[") {
		return fmt.Errorf("illegal character in authority %q", a)
	}
	end := strings.IndexByte(host, ']')
	if end < 0 {
		return fmt.Errorf("malformed IPv6 address in authority %q", a)
	}
	lit := host[1:end]
	if lit == "" || strings.Trim(lit, "0123456789abcdefABCDEF:.") != "" || !strings.Contains(lit, ":") {
		return fmt.Errorf("malformed IPv6 address in authority %q", a)
	}
	port := host[end+1:]
	if port != "" && (port[0] != ':' || strings.Trim(port[1:], "0123456789") != "") {
		return fmt.Errorf("illegal character in authority %q", a)
	}
	if strings.ContainsAny(a[:len(a)-len(host)], "[]") {
		return fmt.Errorf("illegal character in authority %q", a)
	}
	return nil
}

// collapseSlashes turns '\' into '/', collapses runs of '/', and drops a
// trailing '/' unless the path is "/" or a Windows root like "/C:/".
func collapseSlashes(s string) string {
	if s == "" {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prevSlash := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			c = '/'
		}
		if c == '/' {
			if prevSlash {
				continue
			}
			prevSlash = true
		} else {
			prevSlash = false
		}
		b.WriteByte(c)
	}
	out := b.String()
	if len(out) > 1 && out[len(out)-1] == '/' && !isWindowsRootDir(out) {
		out = out[:len(out)-1]
	}
	return out
}

// collapseRuns collapses runs of '/' and keeps a trailing one.
func collapseRuns(s string) string {
	for strings.Contains(s, "//") {
		s = strings.ReplaceAll(s, "//", "/")
	}
	return s
}

// isWindowsRootDir reports whether s is exactly "/", one or more letters,
// ":/" (the pattern Fluss uses to keep a trailing slash).
func isWindowsRootDir(s string) bool {
	if len(s) < 4 || s[0] != '/' || !strings.HasSuffix(s, ":/") {
		return false
	}
	for i := 1; i < len(s)-2; i++ {
		if !isAlpha(s[i]) {
			return false
		}
	}
	return true
}

// normalizeDots resolves "." and ".." segments with the rules of
// java.net.URI.normalize, which differ from path.Clean:
//   - a ".." is removed only together with a preceding segment that is not
//     itself "..", so "/../a" and "../a" stay as they are;
//   - a segment that was followed by a '/' keeps it, so "/a/b/.." becomes
//     "/a/" and "/a/." becomes "/a/";
//   - a relative result whose first segment holds a ':' gets "./" in front
//     (when the original first segment was removed), so it cannot be taken
//     for a scheme.
//
// The input has no runs of '/'.
func normalizeDots(p string) string {
	if p == "" {
		return p
	}
	abs := p[0] == '/'
	body := p
	if abs {
		body = p[1:]
	}
	if body == "" {
		return p
	}
	type seg struct {
		s       string
		slash   bool // followed by '/'
		removed bool
	}
	parts := strings.Split(body, "/")
	segs := make([]seg, 0, len(parts))
	for i, s := range parts {
		if s == "" && i == len(parts)-1 {
			break // trailing slash: already recorded on the previous segment
		}
		segs = append(segs, seg{s: s, slash: i < len(parts)-1})
	}
	changed := false
	for i := range segs {
		switch segs[i].s {
		case ".":
			segs[i].removed = true
			changed = true
		case "..":
			j := i - 1
			for j >= 0 && segs[j].removed {
				j--
			}
			if j >= 0 && segs[j].s != ".." {
				segs[i].removed = true
				segs[j].removed = true
				changed = true
			}
		}
	}
	if !changed {
		return p
	}
	var b strings.Builder
	if abs {
		b.WriteByte('/')
	} else {
		first := -1
		for i := range segs {
			if !segs[i].removed {
				first = i
				break
			}
		}
		if first > 0 && strings.IndexByte(segs[first].s, ':') >= 0 {
			b.WriteString("./")
		}
	}
	for _, s := range segs {
		if s.removed {
			continue
		}
		b.WriteString(s.s)
		if s.slash {
			b.WriteByte('/')
		}
	}
	return b.String()
}
