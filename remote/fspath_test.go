package remote

import (
	"errors"
	"strings"
	"testing"
)

func TestParseFsPath(t *testing.T) {
	tests := []struct {
		in        string
		scheme    string
		authority string
		path      string
		str       string
	}{
		// docs/storage-format.md §5 examples.
		{in: "file:///x", scheme: "file", path: "/x", str: "file:/x"},
		{in: "file:/x", scheme: "file", path: "/x", str: "file:/x"},
		{in: "/tmp//fluss///remote//", path: "/tmp/fluss/remote", str: "/tmp/fluss/remote"},
		{in: "file://tmp/x", scheme: "file", authority: "tmp", path: "/x", str: "file://tmp/x"},
		{in: "hdfs:///fluss", scheme: "hdfs", path: "/fluss", str: "hdfs:/fluss"},
		{in: "hdfs://nn:9000/fluss", scheme: "hdfs", authority: "nn:9000", path: "/fluss", str: "hdfs://nn:9000/fluss"},
		{in: "s3://bucket", scheme: "s3", authority: "bucket", path: "", str: "s3://bucket"},
		{in: "s3://bucket/", scheme: "s3", authority: "bucket", path: "/", str: "s3://bucket/"},
		{in: `C:\fluss\remote`, path: "/C:/fluss/remote", str: "C:/fluss/remote"},
		{in: "C:/fluss/remote/", path: "/C:/fluss/remote", str: "C:/fluss/remote"},
		{in: "C:/", path: "/C:/", str: "C:/"},
		{in: "/C:/", path: "/C:/", str: "C:/"},
		{in: "c:", path: "/c:", str: "c:"},
		{in: "file:/C:/x", scheme: "file", path: "/C:/x", str: "file:/C:/x"},
		// Roots and empty authorities.
		{in: "/", path: "/", str: "/"},
		{in: "//", path: "/", str: "/"},
		{in: "file://", scheme: "file", path: "/", str: "file:/"},
		{in: "file:///", scheme: "file", path: "/", str: "file:/"},
		{in: "mem://", scheme: "mem", path: "/", str: "mem:/"},
		{in: "//host/x", authority: "host", path: "/x", str: "//host/x"},
		{in: "//host", authority: "host", str: "//host"},
		{in: "hdfs://[::1]:9000/x", scheme: "hdfs", authority: "[::1]:9000", path: "/x", str: "hdfs://[::1]:9000/x"},
		// Relative paths.
		{in: "rel/dir/", path: "rel/dir", str: "rel/dir"},
		{in: `a\\b`, path: "a/b", str: "a/b"},
		// "." and ".." as java.net.URI.normalize resolves them.
		{in: "/a/./b", path: "/a/b", str: "/a/b"},
		{in: "/a/b/../c", path: "/a/c", str: "/a/c"},
		{in: "/a/b/..", path: "/a/", str: "/a/"},
		{in: "/a/b/.", path: "/a/b/", str: "/a/b/"},
		{in: "/a/b/../", path: "/a/", str: "/a/"},
		{in: "/..", path: "/..", str: "/.."},
		{in: "/../a", path: "/../a", str: "/../a"},
		{in: "/a/../../b", path: "/../b", str: "/../b"},
		{in: "a/../b", path: "b", str: "b"},
		{in: "../a", path: "../a", str: "../a"},
		{in: "a/..", path: "", str: ""},
		{in: "x/../b:c", path: "./b:c", str: "./b:c"},
		{in: "./b:c", path: "./b:c", str: "./b:c"},
		{in: "s3://b/p/../q/./r", scheme: "s3", authority: "b", path: "/q/r", str: "s3://b/q/r"},
		// Literal characters.
		{in: "/tmp/a?b#c", path: "/tmp/a?b#c", str: "/tmp/a?b#c"},
		{in: "/tmp/a%20b", path: "/tmp/a%20b", str: "/tmp/a%20b"},
		{in: "s3://b%20c/x y", scheme: "s3", authority: "b%20c", path: "/x y", str: "s3://b%20c/x y"},
		{in: "/tmp/é/x", path: "/tmp/é/x", str: "/tmp/é/x"},
		{in: "/tmp/%2E%2E/x", path: "/tmp/%2E%2E/x", str: "/tmp/%2E%2E/x"},
		// Colon placement.
		{in: "/a:b", path: "/a:b", str: "a:b"},
		{in: "/ab:c/d", path: "/ab:c/d", str: "/ab:c/d"},
		{in: "/ab:/", path: "/ab:/", str: "/ab:/"},
		{in: "S3A://Bucket/X", scheme: "S3A", authority: "Bucket", path: "/X", str: "S3A://Bucket/X"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParseFsPath(tt.in)
			if err != nil {
				t.Fatalf("ParseFsPath(%q): %v", tt.in, err)
			}
			want := FsPath{Scheme: tt.scheme, Authority: tt.authority, Path: tt.path}
			if p != want {
				t.Errorf("ParseFsPath(%q) = %#v, want %#v", tt.in, p, want)
			}
			if got := p.String(); got != tt.str {
				t.Errorf("ParseFsPath(%q).String() = %q, want %q", tt.in, got, tt.str)
			}
		})
	}
}

func TestParseFsPathErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantErr string
	}{
		{"", "Can not create a Path from an empty string"},
		{"file:", "expected a path after the scheme"},
		{"s3:", "expected a path after the scheme"},
		{"s3:bucket", "relative path in absolute URI"},
		{"s3:bucket/x", "relative path in absolute URI"},
		{":x", "expected scheme name"},
		{"1s:/x", "illegal character in scheme name"},
		{"s_3:/x", "illegal character in scheme name"},
		{"a b:/x", "illegal character in scheme name"},
		{"hdfs://[zz/x", "malformed IPv6"},
		{"hdfs://a]b/x", "illegal character in authority"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParseFsPath(tt.in)
			if err == nil {
				t.Fatalf("ParseFsPath(%q) = %#v, want error", tt.in, p)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseFsPath(%q) error %q, want it to contain %q", tt.in, err, tt.wantErr)
			}
		})
	}
	if _, err := ParseFsPath(""); !errors.Is(err, ErrEmptyPath) {
		t.Errorf("ParseFsPath(\"\") error %v, want ErrEmptyPath", err)
	}
}

func TestFsPathJoin(t *testing.T) {
	tests := []struct {
		base, child, want string
	}{
		{"s3://bucket", "producers", "s3://bucket/producers"},
		{"s3://bucket/", "producers", "s3://bucket/producers"},
		{"s3://bucket/fluss/", "producers", "s3://bucket/fluss/producers"},
		{"file:///tmp/fluss/remote", "producers", "file:/tmp/fluss/remote/producers"},
		{"/tmp/fluss/remote", "producers", "/tmp/fluss/remote/producers"},
		{"/", "producers", "/producers"},
		{"mem://", "producers", "mem:/producers"},
		{"hdfs:///fluss", "producers", "hdfs:/fluss/producers"},
		{"C:/fluss", "producers", "C:/fluss/producers"},
		{"rel", "producers", "rel/producers"},
		{"/a/b", "/c", "/a/b/c"},
		{"/a/b", "c//d/", "/a/b/c/d"},
		{"/a/b", "../c", "/a/c"},
		{"/a/b/..", "c", "/a/c"},
		{"/a", "", "/a"},
	}
	for _, tt := range tests {
		t.Run(tt.base+"+"+tt.child, func(t *testing.T) {
			got := MustParseFsPath(tt.base).Join(tt.child).String()
			if got != tt.want {
				t.Errorf("Join(%q, %q) = %q, want %q", tt.base, tt.child, got, tt.want)
			}
		})
	}
}

// The stored offsets_path for each remote.data.dir form of docs/storage-format.md §5: producer
// my-producer-1, table 12345, a fixed uuid.
func TestOffsetsPathTable(t *testing.T) {
	const file = "producers/my-producer-1/12345/550e8400-e29b-41d4-a716-446655440000.offsets"
	tests := []struct {
		dir, stored string
	}{
		{"file:///tmp/fluss/remote", "file:/tmp/fluss/remote/" + file},
		{"/tmp/fluss/remote", "/tmp/fluss/remote/" + file},
		{"s3://bucket/fluss", "s3://bucket/fluss/" + file},
		{"oss://bucket/fluss", "oss://bucket/fluss/" + file},
		{"hdfs://nn:9000/fluss", "hdfs://nn:9000/fluss/" + file},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			p := MustParseFsPath(tt.dir).Join("producers").Join("my-producer-1").Join("12345").Join("550e8400-e29b-41d4-a716-446655440000.offsets")
			if got := p.String(); got != tt.stored {
				t.Errorf("got %q, want %q", got, tt.stored)
			}
			// A coordinator re-parses what it stored and gets it back.
			if got := MustParseFsPath(tt.stored).String(); got != tt.stored {
				t.Errorf("re-parse: got %q, want %q", got, tt.stored)
			}
		})
	}
}

// checkReparse is the property FuzzParseFsPath checks: String() re-parses
// to itself, except that a trailing '/' left by resolving "." or ".." is
// dropped by the next parse (as in Fluss); from then on it is stable.
func checkReparse(t *testing.T, in string) {
	p, err := ParseFsPath(in)
	if err != nil {
		return
	}
	s1 := p.String()
	_ = p.Join("x/../y")
	if s1 == "" {
		if p.Path != "" || p.Scheme != "" || p.Authority != "" {
			t.Fatalf("%q: empty String for %#v", in, p)
		}
		return // "a/.." normalises to the empty path, as in Java
	}
	p2, err := ParseFsPath(s1)
	if err != nil {
		t.Fatalf("%q: String() %q does not re-parse: %v", in, s1, err)
	}
	s2 := p2.String()
	trailing := len(p.Path) > 1 && strings.HasSuffix(p.Path, "/") && !isWindowsRootDir(p.Path)
	if !trailing && s2 != s1 {
		t.Fatalf("%q: String() %q re-parses to %q", in, s1, s2)
	}
	p3, err := ParseFsPath(s2)
	if err != nil {
		t.Fatalf("%q: %q does not re-parse: %v", in, s2, err)
	}
	if s3 := p3.String(); s3 != s2 || p3 != p2 {
		t.Fatalf("%q: not stable: %q -> %q (%#v vs %#v)", in, s2, s3, p2, p3)
	}
}

func TestFsPathReparse(t *testing.T) {
	for _, in := range fsPathSeeds {
		checkReparse(t, in)
	}
}

var fsPathSeeds = []string{
	"file:///x", "/tmp//fluss///remote//", "file://tmp/x", "hdfs:///fluss", "s3://bucket",
	"s3://bucket/", `C:\fluss\remote`, "/a/b/..", "x/../b:c", "/tmp/a?b#c", "/tmp/a%20b",
	"a/..", "//host", "/ab:/", "c:", "a://b", "hdfs://[::1]:9000/x", "../..", "./.", "/./..",
	"file:/tmp/fluss/remote/producers/my-producer-1/12345/550e8400-e29b-41d4-a716-446655440000.offsets",
}

func FuzzParseFsPath(f *testing.F) {
	for _, s := range fsPathSeeds {
		f.Add(s)
	}
	f.Fuzz(checkReparse)
}
