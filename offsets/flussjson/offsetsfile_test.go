package flussjson

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

func nb(bucket int32, off int64) offsets.BucketOffset {
	return offsets.BucketOffset{BucketID: bucket, LogEndOffset: off}
}

func pb(partition int64, bucket int32, off int64) offsets.BucketOffset {
	return offsets.BucketOffset{Partitioned: true, PartitionID: partition, BucketID: bucket, LogEndOffset: off}
}

// The five byte strings of docs/storage-format.md §6 (Fluss's own serializer test).
var goldenOffsets = []struct {
	file string
	t    offsets.TableOffsets
}{
	{"empty.json", offsets.TableOffsets{TableID: 1}},
	{"buckets.json", offsets.TableOffsets{TableID: 4, Buckets: []offsets.BucketOffset{nb(0, 100), nb(1, 200), nb(2, 300)}}},
	{"buckets_holes.json", offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{nb(0, 100), nb(2, 300), nb(4, 500)}}},
	{"partitions.json", offsets.TableOffsets{TableID: 6, Buckets: []offsets.BucketOffset{pb(1, 0, 100), pb(1, 1, 200), pb(2, 0, 300), pb(2, 1, 400)}}},
	{"partitions_holes.json", offsets.TableOffsets{TableID: 7, Buckets: []offsets.BucketOffset{pb(1, 0, 100), pb(1, 2, 300), pb(2, 1, 400), pb(2, 3, 600)}}},
}

func readOffsetsGolden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "offsets", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOffsetsGolden(t *testing.T) {
	t.Parallel()
	for _, g := range goldenOffsets {
		t.Run(g.file, func(t *testing.T) {
			want := readOffsetsGolden(t, g.file)
			got, err := EncodeTableOffsets(g.t)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encode:\n got %s\nwant %s", got, want)
			}
			dec, err := DecodeTableOffsets(want)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(dec, g.t) {
				t.Errorf("decode: got %+v, want %+v", dec, g.t)
			}
		})
	}
}

// Files a Fluss 0.9.1 coordinator writes for registers the sidecar refuses
// (an offset below 0, a bucket id above MaxBucketID), in the bytes the
// coordinator writes (compat_test's TestBesideCoordinator registers the same
// input through a real coordinator and compares its file with these). The
// sidecar reads each as the coordinator does: every entry but -1 is a
// bucket, whatever its value, and answers it on GET.
var coordinatorOffsets = []struct {
	file string
	t    offsets.TableOffsets // what reading gives, and a coordinator's GET answers
	// refused: EncodeTableOffsets refuses t (the sidecar's writing rules).
	refused bool
	// reencoded is what writing t back gives, when not the file's bytes:
	// an offset of -1 the register gave is read as no bucket.
	reencoded string
}{
	{"negative_offsets.json", offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{nb(1, -5), nb(2, 7), nb(3, math.MinInt64)}}, true, ""},
	{"negative_offsets_partitioned.json", offsets.TableOffsets{TableID: 6, Buckets: []offsets.BucketOffset{pb(1, 0, -2), pb(3, 2, 3)}}, true, ""},
	{"bucket_past_limit.json", offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{nb(MaxBucketID+1, 9)}}, true, ""},
	{"offset_minus_one_last.json", offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{nb(0, 3)}}, false, `{"version":1,"table_id":5,"bucket_offsets":[3]}`},
}

// TestCoordinatorOffsetsGolden: the sidecar reads every file of
// coordinatorOffsets, on the fast path and the general one, writes it back
// in the same bytes (or the stated ones), and its own writer still refuses
// the offsets it does not write.
func TestCoordinatorOffsetsGolden(t *testing.T) {
	t.Parallel()
	for _, g := range coordinatorOffsets {
		t.Run(g.file, func(t *testing.T) {
			data := readOffsetsGolden(t, g.file)
			if _, ok := decodeCanonicalOffsets(data); !ok {
				t.Errorf("not taken by the fast path")
			}
			for _, in := range [][]byte{data, append([]byte(" "), data...)} {
				got, err := DecodeTableOffsets(in)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if !reflect.DeepEqual(got, g.t) {
					t.Fatalf("decode: got %+v, want %+v", got, g.t)
				}
			}
			want := string(data)
			if g.reencoded != "" {
				want = g.reencoded
			}
			back, err := encodeFile(g.t)
			if err != nil || string(back) != want {
				t.Errorf("written back: %.200s, %v; want %.200s", back, err, want)
			}
			own, err := EncodeTableOffsets(g.t)
			switch {
			case g.refused && (!errors.Is(err, ErrInvalidOffsets) || own != nil):
				t.Errorf("EncodeTableOffsets: %.200s, %v; want ErrInvalidOffsets", own, err)
			case !g.refused && (err != nil || string(own) != want):
				t.Errorf("EncodeTableOffsets: %.200s, %v; want %.200s", own, err, want)
			}
		})
	}
}

func TestEncodeOrderIndependent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		t    offsets.TableOffsets
		want string
	}{
		{"buckets reversed", offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{nb(4, 500), nb(0, 100), nb(2, 300)}},
			`{"version":1,"table_id":5,"bucket_offsets":[100,-1,300,-1,500]}`},
		{"partitions reversed", offsets.TableOffsets{TableID: 7, Buckets: []offsets.BucketOffset{pb(2, 3, 600), pb(2, 1, 400), pb(1, 2, 300), pb(1, 0, 100)}},
			`{"version":1,"table_id":7,"partition_offsets":[{"partition_id":1,"bucket_offsets":[100,-1,300]},{"partition_id":2,"bucket_offsets":[-1,400,-1,600]}]}`},
		{"zero offset and bucket", offsets.TableOffsets{TableID: -3, Buckets: []offsets.BucketOffset{nb(0, 0)}},
			`{"version":1,"table_id":-3,"bucket_offsets":[0]}`},
		{"max bucket", offsets.TableOffsets{TableID: 1, Buckets: []offsets.BucketOffset{nb(2, 9223372036854775807)}},
			`{"version":1,"table_id":1,"bucket_offsets":[-1,-1,9223372036854775807]}`},
		{"negative partition id", offsets.TableOffsets{TableID: 1, Buckets: []offsets.BucketOffset{pb(-1, 0, 1), pb(0, 0, 2)}},
			`{"version":1,"table_id":1,"partition_offsets":[{"partition_id":-1,"bucket_offsets":[1]},{"partition_id":0,"bucket_offsets":[2]}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeTableOffsets(tt.t)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestEncodeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		buckets []offsets.BucketOffset
		wantErr string
	}{
		{"mixed", []offsets.BucketOffset{nb(0, 1), pb(1, 0, 1)}, "mixes partitioned and non-partitioned"},
		{"negative bucket", []offsets.BucketOffset{nb(-1, 1)}, "negative bucket id -1"},
		{"negative partitioned bucket", []offsets.BucketOffset{pb(1, -2, 1)}, "negative bucket id -2"},
		{"duplicate bucket", []offsets.BucketOffset{nb(1, 1), nb(1, 2)}, "bucket 1 appears twice"},
		{"duplicate partitioned bucket", []offsets.BucketOffset{pb(3, 1, 1), pb(3, 1, 1)}, "bucket p3/1 appears twice"},
		{"offset -1", []offsets.BucketOffset{nb(0, -1)}, "read back as missing"},
		{"offset -2", []offsets.BucketOffset{pb(1, 0, -2)}, "offset -2 is negative"},
		{"bucket above limit", []offsets.BucketOffset{nb(MaxBucketID+1, 1)}, "above the limit"},
		{"huge bucket", []offsets.BucketOffset{pb(1, 1<<31-1, 1)}, "above the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := EncodeTableOffsets(offsets.TableOffsets{TableID: 9, Buckets: tt.buckets})
			if err == nil {
				t.Fatalf("encoded %s, want error", b)
			}
			if !errors.Is(err, ErrInvalidOffsets) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want ErrInvalidOffsets containing %q", err, tt.wantErr)
			}
			if b != nil {
				t.Errorf("returned bytes %q with the error", b)
			}
		})
	}
	// The limit itself is accepted.
	if _, err := EncodeTableOffsets(offsets.TableOffsets{Buckets: []offsets.BucketOffset{nb(MaxBucketID, 1)}}); err != nil {
		t.Errorf("bucket MaxBucketID: %v", err)
	}
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want offsets.TableOffsets
	}{
		{"unknown keys ignored", `{"version":1,"x":{"y":[1]},"table_id":3,"bucket_offsets":[7],"z":null}`,
			offsets.TableOffsets{TableID: 3, Buckets: []offsets.BucketOffset{nb(0, 7)}}},
		{"whitespace", " {\n\"version\" : 1 , \"table_id\" : 3 }\n", offsets.TableOffsets{TableID: 3}},
		{"all -1", `{"version":1,"table_id":3,"bucket_offsets":[-1,-1]}`, offsets.TableOffsets{TableID: 3}},
		{"empty array", `{"version":1,"table_id":3,"bucket_offsets":[]}`, offsets.TableOffsets{TableID: 3}},
		{"partitions unsorted", `{"version":1,"table_id":3,"partition_offsets":[{"partition_id":9,"bucket_offsets":[1]},{"partition_id":2,"bucket_offsets":[-1,2]}]}`,
			offsets.TableOffsets{TableID: 3, Buckets: []offsets.BucketOffset{pb(2, 1, 2), pb(9, 0, 1)}}},
		{"repeated partition merges", `{"version":1,"table_id":3,"partition_offsets":[{"partition_id":1,"bucket_offsets":[1,2]},{"partition_id":1,"bucket_offsets":[-1,5,6]}]}`,
			offsets.TableOffsets{TableID: 3, Buckets: []offsets.BucketOffset{pb(1, 0, 1), pb(1, 1, 5), pb(1, 2, 6)}}},
		{"partition without buckets", `{"version":1,"table_id":3,"partition_offsets":[{"partition_id":1}]}`, offsets.TableOffsets{TableID: 3}},
		{"repeated key last wins", `{"version":1,"table_id":3,"table_id":4}`, offsets.TableOffsets{TableID: 4}},
		{"offsets below -1", `{"version":1,"table_id":3,"bucket_offsets":[-2,-1,-9223372036854775808]}`,
			offsets.TableOffsets{TableID: 3, Buckets: []offsets.BucketOffset{nb(0, -2), nb(2, math.MinInt64)}}},
		{"partitioned offsets below -1", `{"version":1,"table_id":3,"partition_offsets":[{"partition_id":-4,"bucket_offsets":[-1,-3]}]}`,
			offsets.TableOffsets{TableID: 3, Buckets: []offsets.BucketOffset{pb(-4, 1, -3)}}},
		{"bucket past MaxBucketID, general path", ` {"version":1,"table_id":3,"bucket_offsets":[` + strings.Repeat("-1,", MaxBucketID+1) + `-7]}`,
			offsets.TableOffsets{TableID: 3, Buckets: []offsets.BucketOffset{nb(MaxBucketID+1, -7)}}},
		{"partitioned bucket past MaxBucketID", `{"version":1,"table_id":3,"partition_offsets":[{"partition_id":0,"bucket_offsets":[` + strings.Repeat("-1,", MaxBucketID+2) + `1]}]}`,
			offsets.TableOffsets{TableID: 3, Buckets: []offsets.BucketOffset{pb(0, MaxBucketID+2, 1)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeTableOffsets([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, wantErr string
	}{
		{"version 2", `{"version":2,"table_id":1}`, "Unsupported version: 2"},
		{"version 0", `{"version":0,"table_id":1}`, "Unsupported version: 0"},
		{"both", `{"version":1,"table_id":1,"bucket_offsets":[1],"partition_offsets":[]}`, "Both bucket_offsets and partition_bucket_offsets cannot be present at the same time"},
		{"no version", `{"table_id":1}`, "missing version"},
		{"no table", `{"version":1}`, "missing table_id"},
		{"string version", `{"version":"1","table_id":1}`, "version must be a 64-bit integer"},
		{"float table", `{"version":1,"table_id":1.5}`, "table_id must be a 64-bit integer"},
		{"huge table", `{"version":1,"table_id":9223372036854775808}`, "table_id must be a 64-bit integer"},
		{"offset past int64", `{"version":1,"table_id":1,"bucket_offsets":[-9223372036854775809]}`, "bucket_offsets[0] must be a 64-bit integer"},
		{"fraction offset", `{"version":1,"table_id":1,"bucket_offsets":[1.0]}`, "bucket_offsets[0] must be a 64-bit integer"},
		{"string offset", `{"version":1,"table_id":1,"bucket_offsets":["5"]}`, "bucket_offsets[0] must be"},
		{"buckets not array", `{"version":1,"table_id":1,"bucket_offsets":{}}`, "bucket_offsets must be an array"},
		{"buckets null", `{"version":1,"table_id":1,"bucket_offsets":null}`, "bucket_offsets must be an array"},
		{"partitions null", `{"version":1,"table_id":1,"partition_offsets":null}`, "partition_offsets must be an array"},
		{"partition entry null", `{"version":1,"table_id":1,"partition_offsets":[null]}`, "entry must be an object"},
		{"partition entry no id", `{"version":1,"table_id":1,"partition_offsets":[{"bucket_offsets":[1]}]}`, "without partition_id"},
		{"not object", `[1]`, "malformed"},
		{"null", `null`, "not a JSON object"},
		{"empty", ``, "malformed"},
		{"trailing", `{"version":1,"table_id":1}x`, "trailing data"},
		{"two objects", `{"version":1,"table_id":1}{}`, "trailing data"},
		{"truncated", `{"version":1,"table_id":1`, "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeTableOffsets([]byte(tt.in))
			if err == nil {
				t.Fatalf("decoded %+v, want error", got)
			}
			if !errors.Is(err, ErrMalformedOffsetsFile) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want ErrMalformedOffsetsFile containing %q", err, tt.wantErr)
			}
		})
	}
	// An array longer than 32-bit bucket ids count, which no coordinator
	// can write, is refused by its length alone (a real one is 6 GiB).
	if err := checkBucketCount(maxFileBuckets + 1); !errors.Is(err, ErrMalformedOffsetsFile) || !strings.Contains(err.Error(), "more than a 32-bit bucket id counts") {
		t.Errorf("over-long array: error %v", err)
	}
	if err := checkBucketCount(maxFileBuckets); err != nil {
		t.Errorf("the longest array: %v", err)
	}
}

// FuzzDecodeTableOffsets: whatever the sidecar reads, whatever its value
// ranges, the file writer can write back (encodeFile), into bytes that
// read back as the same table, take the fast path and are written again
// unchanged. Input already in that form is written back byte for byte.
// The sidecar's own writer (EncodeTableOffsets) either writes those same
// bytes or refuses the table for its narrower rules alone: an offset below
// 0 or a bucket id above MaxBucketID.
func FuzzDecodeTableOffsets(f *testing.F) {
	for _, g := range goldenOffsets {
		f.Add(readOffsetsGolden(f, g.file))
	}
	for _, g := range coordinatorOffsets {
		if g.file != "bucket_past_limit.json" { // too large a seed
			f.Add(readOffsetsGolden(f, g.file))
		}
	}
	f.Add([]byte(`{"version":1,"table_id":3,"partition_offsets":[{"partition_id":1,"bucket_offsets":[1,2]},{"partition_id":1,"bucket_offsets":[-1,5,6]}]}`))
	f.Add([]byte(`{"version":1,"table_id":1,"bucket_offsets":[1],"partition_offsets":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		t1, err := DecodeTableOffsets(b)
		if err != nil {
			return
		}
		enc, err := encodeFile(t1)
		if err != nil {
			t.Fatalf("decoded %+v from %q but cannot write it back: %v", t1, b, err)
		}
		t2, err := DecodeTableOffsets(enc)
		if err != nil {
			t.Fatalf("cannot decode own encoding %q: %v", enc, err)
		}
		if !reflect.DeepEqual(t1, t2) {
			t.Fatalf("round trip changed %+v into %+v (via %s)", t1, t2, enc)
		}
		if _, ok := decodeCanonicalOffsets(enc); !ok {
			t.Fatalf("own encoding %s misses the fast path", enc)
		}
		enc2, err := encodeFile(t2)
		if err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding not stable: %s vs %s (%v)", enc, enc2, err)
		}
		if writtenForm(b) && !bytes.Equal(b, enc) {
			t.Fatalf("%q is in the written form but is written back as %q", b, enc)
		}
		own, err := EncodeTableOffsets(t1)
		if err == nil {
			if !bytes.Equal(own, enc) {
				t.Fatalf("EncodeTableOffsets writes %s, the file writer %s", own, enc)
			}
			return
		}
		if !errors.Is(err, ErrInvalidOffsets) || !outsideOwnRules(t1) {
			t.Fatalf("EncodeTableOffsets refuses %+v: %v; only an offset below 0 or a bucket id above %d may be refused", t1, err, MaxBucketID)
		}
	})
}

// writtenForm reports whether b is a file as a writer gives it: on the
// fast path, with no -1 where a writer has no hole to fill (at the end of
// a bucket array), no empty array and no -0.
func writtenForm(b []byte) bool {
	if _, ok := decodeCanonicalOffsets(b); !ok {
		return false
	}
	for _, s := range []string{",-1]", "[-1]", "[]", "-0"} {
		if bytes.Contains(b, []byte(s)) {
			return false
		}
	}
	return true
}

// outsideOwnRules reports whether t holds what only the sidecar's writer
// refuses.
func outsideOwnRules(t offsets.TableOffsets) bool {
	for _, b := range t.Buckets {
		if b.LogEndOffset < 0 || b.BucketID > MaxBucketID {
			return true
		}
	}
	return false
}

// byBucket is t's non-partitioned buckets as an array indexed by bucket id.
func byBucket(t offsets.TableOffsets, extra int) offsets.TableOffsets {
	arr := []int64{}
	for _, b := range t.Buckets {
		for int(b.BucketID) >= len(arr) {
			arr = append(arr, -1)
		}
		arr[b.BucketID] = b.LogEndOffset
	}
	for range extra {
		arr = append(arr, -1)
	}
	return offsets.TableOffsets{TableID: t.TableID, ByBucket: arr}
}

// TestEncodeByBucket: a table given as an array indexed by bucket id
// encodes to the same bytes as its list of buckets, the golden files
// included, and its refusals name the problem.
func TestEncodeByBucket(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		t    offsets.TableOffsets
		want []byte
	}{
		{"empty.json", byBucket(goldenOffsets[0].t, 0), readOffsetsGolden(t, "empty.json")},
		{"empty array", offsets.TableOffsets{TableID: 1, ByBucket: []int64{}}, readOffsetsGolden(t, "empty.json")},
		{"only -1", offsets.TableOffsets{TableID: 1, ByBucket: []int64{-1, -1}}, readOffsetsGolden(t, "empty.json")},
		{"buckets.json", byBucket(goldenOffsets[1].t, 0), readOffsetsGolden(t, "buckets.json")},
		{"buckets_holes.json", byBucket(goldenOffsets[2].t, 0), readOffsetsGolden(t, "buckets_holes.json")},
		{"trailing -1 left out", byBucket(goldenOffsets[2].t, 3), readOffsetsGolden(t, "buckets_holes.json")},
		{"negative table id, largest offset", offsets.TableOffsets{TableID: -3, ByBucket: []int64{-1, 0, 9223372036854775807}},
			[]byte(`{"version":1,"table_id":-3,"bucket_offsets":[-1,0,9223372036854775807]}`)},
		{"the last bucket id", offsets.TableOffsets{TableID: 2, ByBucket: append(make([]int64, MaxBucketID), 7)}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := EncodeTableOffsets(tt.t)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if want == nil {
				if want, err = EncodeTableOffsets(tt.t.InFileOrder()); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got %.200s, want %.200s", got, want)
			}
			if cap(got) != len(got) {
				t.Errorf("buffer of %d bytes for %d: not sized once", cap(got), len(got))
			}
			checkWriteTo(t, tt.t, got)
		})
	}
	for _, tt := range []struct {
		name    string
		t       offsets.TableOffsets
		wantErr string
	}{
		{"offset -2", offsets.TableOffsets{TableID: 9, ByBucket: []int64{1, -2}}, "bucket 1: offset -2 is negative"},
		{"too long", offsets.TableOffsets{TableID: 9, ByBucket: append(make([]int64, MaxBucketID+1), 1)}, "above the limit"},
		{"both forms", offsets.TableOffsets{TableID: 9, ByBucket: []int64{1}, Buckets: []offsets.BucketOffset{nb(1, 1)}}, "both Buckets and ByBucket"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := EncodeTableOffsets(tt.t)
			if !errors.Is(err, ErrInvalidOffsets) || !strings.Contains(err.Error(), tt.wantErr) || b != nil {
				t.Errorf("%q, %v; want no bytes and ErrInvalidOffsets containing %q", b, err, tt.wantErr)
			}
		})
	}
}

// checkWriteTo: the prepared file writes want, of the length it says,
// twice alike, in either form.
func checkWriteTo(t *testing.T, tb offsets.TableOffsets, want []byte) {
	t.Helper()
	for _, form := range []offsets.TableOffsets{tb, tb.InFileOrder()} {
		f, err := PrepareTableOffsets(form)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			var buf bytes.Buffer
			n, err := f.WriteTo(&buf)
			if err != nil || n != int64(len(want)) || f.Len() != len(want) || !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("WriteTo: %d bytes (Len %d), %v: %.200s; want %d: %.200s", n, f.Len(), err, buf.Bytes(), len(want), want)
			}
		}
	}
}

// FuzzEncodeByBucket: whatever the array, encoding it gives the bytes its
// list of buckets gives (or both refuse it), and the file reads back as
// that list.
func FuzzEncodeByBucket(f *testing.F) {
	f.Add([]byte{0, 1, 0xff, 3})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		arr := make([]int64, len(b))
		for i, v := range b {
			arr[i] = int64(int8(v)) // -128..127: -1 is "none", below refused
		}
		tb := offsets.TableOffsets{TableID: int64(len(b)), ByBucket: arr}
		got, err := EncodeTableOffsets(tb)
		if err != nil {
			if !errors.Is(err, ErrInvalidOffsets) {
				t.Fatalf("error %v", err)
			}
			return
		}
		list := tb.InFileOrder()
		want, err := EncodeTableOffsets(list)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("array %v: %s; list %+v: %s, %v", arr, got, list, want, err)
		}
		checkWriteTo(t, tb, got)
		back, err := DecodeTableOffsets(got)
		if err != nil || len(back.Buckets) != len(list.Buckets) || (len(list.Buckets) > 0 && !reflect.DeepEqual(back, list)) {
			t.Fatalf("%s read back as %+v, %v; want %+v", got, back, err, list)
		}
	})
}
