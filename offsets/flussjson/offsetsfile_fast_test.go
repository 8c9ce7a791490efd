package flussjson

import (
	"reflect"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// decodeOffsetsGeneral is DecodeTableOffsets without the canonical fast path: a
// leading space is not canonical and does not change the JSON value.
func decodeOffsetsGeneral(b []byte) (offsets.TableOffsets, error) {
	return DecodeTableOffsets(append([]byte(" "), b...))
}

// TestCanonicalOffsetsFastPath: the golden files and what
// EncodeTableOffsets writes take the fast path and decode as the general
// way does; variants that are not canonical do not take it.
func TestCanonicalOffsetsFastPath(t *testing.T) {
	t.Parallel()
	var inputs [][]byte
	for _, g := range goldenOffsets {
		inputs = append(inputs, readOffsetsGolden(t, g.file))
	}
	for _, tc := range []offsets.TableOffsets{
		{TableID: 7},
		{TableID: -1, Buckets: []offsets.BucketOffset{{BucketID: 3, LogEndOffset: 0}, {BucketID: 0, LogEndOffset: 1 << 62}}},
		{TableID: 2, Buckets: []offsets.BucketOffset{
			{Partitioned: true, PartitionID: 9, BucketID: 1, LogEndOffset: 5},
			{Partitioned: true, PartitionID: -4, BucketID: 0, LogEndOffset: 6},
		}},
	} {
		b, err := EncodeTableOffsets(tc)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	// Offsets below -1, as a coordinator writes them.
	inputs = append(inputs, []byte(`{"version":1,"table_id":1,"bucket_offsets":[1,-2]}`),
		[]byte(`{"version":1,"table_id":1,"partition_offsets":[{"partition_id":2,"bucket_offsets":[-1,-9223372036854775808]}]}`))
	for _, in := range inputs {
		fast, ok := decodeCanonicalOffsets(in)
		if !ok {
			t.Fatalf("%s: not taken by the fast path", in)
		}
		slow, err := decodeOffsetsGeneral(in)
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: fast %+v, general %+v %v", in, fast, slow, err)
		}
	}
	for _, in := range []string{
		`{"version":1,"table_id":1,"bucket_offsets":[1,-9223372036854775809]}`,
		`{"version":1,"table_id":1,"bucket_offsets":[1.0]}`,
		`{"version":1,"table_id":1,"bucket_offsets":[01]}`,
		`{"version":1,"table_id":1,"bucket_offsets":[1]} `,
		`{"version":1,"table_id":1,"partition_offsets":[{"partition_id":2,"bucket_offsets":[1]},{"partition_id":2,"bucket_offsets":[2]}]}`,
		`{"version":1,"table_id":1,"partition_offsets":[{"partition_id":2}]}`,
		`{"version":1,"table_id":1,"bucket_offsets":[1],"partition_offsets":[]}`,
		`{"version":2,"table_id":1}`,
		`{"table_id":1,"version":1}`,
	} {
		if got, ok := decodeCanonicalOffsets([]byte(in)); ok {
			t.Errorf("%s: taken by the fast path as %+v", in, got)
		}
	}
}

// FuzzDecodeTableOffsetsCanonical: whenever the fast path accepts an input,
// the general decoder accepts it too with the same result.
func FuzzDecodeTableOffsetsCanonical(f *testing.F) {
	for _, g := range goldenOffsets {
		f.Add(readOffsetsGolden(f, g.file))
	}
	f.Add([]byte(`{"version":1,"table_id":-0,"partition_offsets":[{"partition_id":1,"bucket_offsets":[-1,-1]},{"partition_id":3,"bucket_offsets":[]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := decodeCanonicalOffsets(b)
		if !ok {
			return
		}
		slow, err := decodeOffsetsGeneral(b)
		if err != nil {
			t.Fatalf("fast path accepted %q, general decoder refused it: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, general %+v", b, fast, slow)
		}
	})
}
