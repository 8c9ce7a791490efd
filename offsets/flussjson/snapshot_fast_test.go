package flussjson

import (
	"os"
	"reflect"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// decodeSnapshotGeneral is DecodeSnapshot without the canonical fast path.
func decodeSnapshotGeneral(data []byte) (offsets.Snapshot, error) {
	saved := data
	// A leading space is not canonical and does not change the JSON value.
	return DecodeSnapshot(append([]byte(" "), saved...))
}

// TestCanonicalSnapshotFastPath: what EncodeSnapshot writes, and the golden
// coordinator znodes, take the fast path and decode as the general way does;
// variants that are not canonical do not take it.
func TestCanonicalSnapshotFastPath(t *testing.T) {
	t.Parallel()
	canonicalInputs := [][]byte{
		EncodeSnapshot(offsets.Snapshot{ExpirationTime: 1735538268000, Tables: []offsets.FileRef{{TableID: 1, OffsetsPath: "file:/tmp/p/1/a.offsets"}, {TableID: -2, OffsetsPath: "s3://b/é"}}}),
		EncodeSnapshot(offsets.Snapshot{ExpirationTime: -1}),
	}
	for _, g := range goldenSnapshots {
		b, err := os.ReadFile("testdata/" + g.file)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := decodeCanonicalSnapshot(b); ok {
			canonicalInputs = append(canonicalInputs, b)
		}
	}
	for _, in := range canonicalInputs {
		fast, ok := decodeCanonicalSnapshot(in)
		if !ok {
			t.Fatalf("%s: not taken by the fast path", in)
		}
		slow, err := decodeSnapshotGeneral(in)
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: fast %+v, general %+v %v", in, fast, slow, err)
		}
	}
	for _, in := range []string{
		`{"version":1,"expiration_time":1,"tables":[]} `,
		`{"version":1,"expiration_time":01,"tables":[]}`,
		`{"version":1,"expiration_time":1.0,"tables":[]}`,
		`{"version":1,"expiration_time":1e3,"tables":[]}`,
		`{"version":1,"expiration_time":99999999999999999999,"tables":[]}`,
		`{"version":1,"expiration_time":1,"tables":[{"table_id":1,"offsets_path":"a\"b"}]}`,
		`{"version":1,"expiration_time":1,"tables":[{"table_id":1,"offsets_path":"\xff"}]}`,
		`{"version":1,"expiration_time":1,"tables":[{"offsets_path":"a","table_id":1}]}`,
		`{"version":1,"expiration_time":1,"tables":[],"x":1}`,
		`{"version":2,"expiration_time":1,"tables":[]}`,
		`{"version":1,"expiration_time":1,"tables":[{"table_id":1,"offsets_path":"a"},]}`,
	} {
		if s, ok := decodeCanonicalSnapshot([]byte(in)); ok {
			t.Errorf("%s: taken by the fast path as %+v", in, s)
		}
	}
}

// FuzzDecodeSnapshotCanonical: whenever the fast path accepts an input, the
// general decoder accepts it too with the same result.
func FuzzDecodeSnapshotCanonical(f *testing.F) {
	f.Add(EncodeSnapshot(offsets.Snapshot{ExpirationTime: 5, Tables: []offsets.FileRef{{TableID: 1, OffsetsPath: "p"}, {TableID: 1, OffsetsPath: "q"}}}))
	f.Add([]byte(`{"version":1,"expiration_time":-0,"tables":[]}`))
	f.Add([]byte(`{"version":1,"expiration_time":1,"tables":[{"table_id":1,"offsets_path":"😀"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, ok := decodeCanonicalSnapshot(data)
		if !ok {
			return
		}
		slow, err := decodeSnapshotGeneral(data)
		if err != nil {
			t.Fatalf("fast path accepted %q, general decoder refused it: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, general %+v", data, fast, slow)
		}
	})
}
