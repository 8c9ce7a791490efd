package flussjson

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var goldenSnapshots = []struct {
	file string
	snap offsets.Snapshot
}{
	{"producer_empty.json", offsets.Snapshot{ExpirationTime: 1735538268000, Tables: []offsets.FileRef{}}},
	{"producer_two_tables.json", offsets.Snapshot{ExpirationTime: 1735538268000, Tables: []offsets.FileRef{
		{TableID: 100, OffsetsPath: "oss://bucket/path/uuid1.offsets"},
		{TableID: 200, OffsetsPath: "s3://bucket/path/uuid2.offsets"},
	}}},
}

func TestSnapshotGolden(t *testing.T) {
	t.Parallel()
	for _, g := range goldenSnapshots {
		t.Run(g.file, func(t *testing.T) {
			want := readGolden(t, g.file)
			if got := EncodeSnapshot(g.snap); string(got) != string(want) {
				t.Errorf("EncodeSnapshot:\n got %s\nwant %s", got, want)
			}
			got, err := DecodeSnapshot(want)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, g.snap) {
				t.Errorf("DecodeSnapshot = %+v, want %+v", got, g.snap)
			}
		})
	}
	// nil and empty table lists encode alike.
	if got := EncodeSnapshot(offsets.Snapshot{ExpirationTime: 1735538268000}); string(got) != string(readGolden(t, "producer_empty.json")) {
		t.Errorf("nil tables: %s", got)
	}
}

func TestSnapshotTableOrder(t *testing.T) {
	t.Parallel()
	s := offsets.Snapshot{ExpirationTime: -5, Tables: []offsets.FileRef{
		{TableID: 2, OffsetsPath: "b"}, {TableID: 17, OffsetsPath: "c"}, {TableID: 100, OffsetsPath: "d"},
		{TableID: 200, OffsetsPath: "e"}, {TableID: 1, OffsetsPath: "a"}, {TableID: 2, OffsetsPath: "b2"},
	}}
	// The order given, each id once at its first position with its last path.
	want := `{"version":1,"expiration_time":-5,"tables":[{"table_id":2,"offsets_path":"b2"},` +
		`{"table_id":17,"offsets_path":"c"},{"table_id":100,"offsets_path":"d"},` +
		`{"table_id":200,"offsets_path":"e"},{"table_id":1,"offsets_path":"a"}]}`
	if got := string(EncodeSnapshot(s)); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestJacksonEscaping: expected strings were produced with Jackson 2.14's
// UTF-8 JsonGenerator.writeString.
func TestJacksonEscaping(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`a"b\c/d`, `"a\"b\\c/d"`},
		{"\b\t\n\f\r", `"\b\t\n\f\r"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001F` + "\x7f" + `"`},
		{"x\x0by", `"x\u000By"`},
		{"<>&'", `"<>&'"`},
		{"\u2028\u2029é中", "\"\u2028\u2029é中\""},
		{"😀", `"\uD83D\uDE00"`},
		{"bad\xffutf8", "\"bad\uFFFDutf8\""},
		{"", `""`},
		{"s3://bucket/fluss/producers/p-1/12/550e8400-e29b-41d4-a716-446655440000.offsets", `"s3://bucket/fluss/producers/p-1/12/550e8400-e29b-41d4-a716-446655440000.offsets"`},
	}
	for _, c := range cases {
		if got := string(appendJacksonString(nil, c.in)); got != c.want {
			t.Errorf("%q: got %s want %s", c.in, got, c.want)
		}
		// What we write reads back (except invalid UTF-8, replaced).
		if strings.ToValidUTF8(c.in, "\uFFFD") == c.in {
			enc := EncodeSnapshot(offsets.Snapshot{Tables: []offsets.FileRef{{TableID: 1, OffsetsPath: c.in}}})
			s, err := DecodeSnapshot(enc)
			if err != nil || s.Tables[0].OffsetsPath != c.in {
				t.Errorf("%q: round trip gave %+v, %v", c.in, s, err)
			}
		}
	}
}

func TestDecodeSnapshot(t *testing.T) {
	t.Parallel()
	ok := []struct {
		name, in string
		want     offsets.Snapshot
	}{
		{"missing tables", `{"version":1,"expiration_time":5}`, offsets.Snapshot{ExpirationTime: 5, Tables: []offsets.FileRef{}}},
		{"null tables", `{"version":1,"expiration_time":5,"tables":null}`, offsets.Snapshot{ExpirationTime: 5, Tables: []offsets.FileRef{}}},
		{"object tables", `{"version":1,"expiration_time":5,"tables":{"a":1}}`, offsets.Snapshot{ExpirationTime: 5, Tables: []offsets.FileRef{}}},
		{"unknown keys and spaces", ` { "x" : [1,{}], "version" : 1 , "expiration_time":-7,"tables":[{"z":0,"table_id":3,"offsets_path":"p\u00e9\/q"}] } `,
			offsets.Snapshot{ExpirationTime: -7, Tables: []offsets.FileRef{{TableID: 3, OffsetsPath: "pé/q"}}}},
		{"order kept", `{"version":1,"expiration_time":0,"tables":[{"table_id":2,"offsets_path":"b"},{"table_id":1,"offsets_path":"a"}]}`,
			offsets.Snapshot{Tables: []offsets.FileRef{{TableID: 2, OffsetsPath: "b"}, {TableID: 1, OffsetsPath: "a"}}}},
	}
	for _, c := range ok {
		got, err := DecodeSnapshot([]byte(c.in))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	bad := []struct{ name, in, wantErr string }{
		{"version 2", `{"version":2,"expiration_time":5,"tables":[]}`, "Unsupported ProducerOffsets version: 2, expected: 1"},
		{"version 0", `{"version":0,"expiration_time":5}`, "Unsupported ProducerOffsets version: 0, expected: 1"},
		{"no version", `{"expiration_time":5,"tables":[]}`, "missing version"},
		{"null version", `{"version":null,"expiration_time":5}`, "missing version"},
		{"no expiration", `{"version":1,"tables":[]}`, "missing expiration_time"},
		{"no table_id", `{"version":1,"expiration_time":5,"tables":[{"offsets_path":"p"}]}`, "missing table_id"},
		{"no offsets_path", `{"version":1,"expiration_time":5,"tables":[{"table_id":1}]}`, "missing offsets_path"},
		{"table not object", `{"version":1,"expiration_time":5,"tables":[1]}`, "not an object"},
		{"path not string", `{"version":1,"expiration_time":5,"tables":[{"table_id":1,"offsets_path":3}]}`, "not a string"},
		{"version string", `{"version":true,"expiration_time":5}`, "not a number"},
		{"huge", `{"version":1,"expiration_time":1e30}`, "out of range"},
		{"not object", `[1]`, "invalid JSON"},
		{"null", `null`, "not a JSON object"},
		{"empty", ``, "invalid JSON"},
		{"trailing", `{"version":1,"expiration_time":5}x`, "invalid JSON"},
	}
	for _, c := range bad {
		_, err := DecodeSnapshot([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: err = %v, want containing %q", c.name, err, c.wantErr)
		}
	}
}

// dedupe is what a Java HashMap keeps of a table list: one entry per id,
// the last path.
func dedupe(tables []offsets.FileRef) map[int64]string {
	m := map[int64]string{}
	for _, t := range tables {
		m[t.TableID] = t.OffsetsPath
	}
	return m
}

func FuzzDecodeSnapshot(f *testing.F) {
	for _, g := range goldenSnapshots {
		b, err := os.ReadFile("testdata/" + g.file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"expiration_time":-1,"tables":[{"table_id":-3,"offsets_path":"a\u0001\"\\😀"},{"table_id":13,"offsets_path":""},{"table_id":-3,"offsets_path":"x"}]}`))
	f.Add([]byte(`{"version":1.9,"expiration_time":2.5,"tables":7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s1, err := DecodeSnapshot(data)
		if err != nil {
			return
		}
		enc1 := EncodeSnapshot(s1)
		s2, err := DecodeSnapshot(enc1)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc1, err)
		}
		if s2.ExpirationTime != s1.ExpirationTime {
			t.Fatalf("expiration %d != %d", s2.ExpirationTime, s1.ExpirationTime)
		}
		want := dedupe(s1.Tables)
		for id, p := range want {
			want[id] = strings.ToValidUTF8(p, "\uFFFD")
		}
		if got := dedupe(s2.Tables); len(s2.Tables) != len(got) || !reflect.DeepEqual(got, want) {
			t.Fatalf("tables %+v, want %+v", s2.Tables, want)
		}
		if enc2 := EncodeSnapshot(s2); string(enc2) != string(enc1) {
			t.Fatalf("not stable:\n%s\n%s", enc1, enc2)
		}
	})
}
