package producer

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// asArray gives an entry in the ByBucket form when it can take it: plain
// buckets in ascending id order, each with an offset of at least 0 and an
// id in range.
func asArray(t TableInput) (TableInput, bool) {
	if t.ByBucket != nil || len(t.Buckets) == 0 {
		return t, false
	}
	for i, b := range t.Buckets {
		if b.PartitionID != nil || b.LogEndOffset == nil || *b.LogEndOffset < 0 || b.BucketID < 0 || b.BucketID > MaxBucketID ||
			(i > 0 && b.BucketID <= t.Buckets[i-1].BucketID) {
			return t, false
		}
	}
	arr := make([]int64, t.Buckets[len(t.Buckets)-1].BucketID+1)
	for i := range arr {
		arr[i] = -1
	}
	for _, b := range t.Buckets {
		arr[b.BucketID] = *b.LogEndOffset
	}
	return TableInput{TableID: t.TableID, ByBucket: arr}, true
}

// randomTables makes a request's tables: a few table ids, entries that
// repeat them, mostly plain ascending buckets, sometimes a partitioned
// bucket, a bad offset, an id out of range, or an overlap with another
// entry of the same table.
func randomTables(rnd *rand.Rand) []TableInput {
	var in []TableInput
	for range 1 + rnd.IntN(6) {
		t := TableInput{TableID: int64(rnd.IntN(4))}
		// Entries of one table overlap only when they start in the same
		// block of ids.
		id := int32(rnd.IntN(5) + 200*rnd.IntN(4))
		for range rnd.IntN(50) {
			off := int64(rnd.IntN(1000))
			b := BucketInput{BucketID: id, LogEndOffset: &off}
			switch rnd.IntN(300) {
			case 0:
				p := int64(rnd.IntN(3))
				b.PartitionID = &p
			case 1:
				b.LogEndOffset = nil
			case 2:
				off = -1 - int64(rnd.IntN(3))
			case 3:
				b.BucketID = MaxBucketID + 1
			case 4:
				b.BucketID = -b.BucketID - 1
			case 5:
				id -= int32(rnd.IntN(3)) // out of order, maybe repeated
			}
			t.Buckets = append(t.Buckets, b)
			id += 1 + int32(rnd.IntN(3))
		}
		in = append(in, t)
	}
	return in
}

func describeTables(ts []offsets.TableOffsets) string {
	s := ""
	for _, t := range ts {
		s += fmt.Sprintf("[t%d %v]", t.TableID, t.InFileOrder().Buckets)
	}
	return s
}

// TestNormalizeByBucketSameAsList: a request whose entries come as arrays
// by bucket id is accepted or refused exactly as the same request as lists
// of buckets (the same error code and text, the same tables with the same
// buckets in the same znode order), and the arrays are not modified.
func TestNormalizeByBucketSameAsList(t *testing.T) {
	var accepted, refused, merged int
	defer func() {
		// The cases must cover what they claim to.
		if accepted < 100 || refused < 100 || merged < 50 {
			t.Errorf("%d accepted, %d refused, %d with a table in several entries as arrays: too few", accepted, refused, merged)
		}
	}()
	for seed := range uint64(3000) {
		rnd := rand.New(rand.NewPCG(seed, 29))
		lists := randomTables(rnd)
		arrays := slices.Clone(lists)
		var originals [][]int64
		converted := 0
		for i := range arrays {
			if a, ok := asArray(arrays[i]); ok && rnd.IntN(4) > 0 {
				arrays[i] = a
				originals = append(originals, slices.Clone(a.ByBucket))
				converted++
			}
		}
		want, wantErr := normalize("p", lists)
		got, gotErr := normalize("p", arrays)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || (gotErr != nil && gotErr.Code != wantErr.Code) {
			t.Fatalf("seed %d (%d entries as arrays): error %v, want %v", seed, converted, gotErr, wantErr)
		}
		if converted == 0 {
			continue
		}
		if wantErr != nil {
			refused++
			continue
		}
		accepted++
		perTable := map[int64]int{}
		for _, a := range arrays {
			if a.ByBucket != nil {
				if perTable[a.TableID]++; perTable[a.TableID] == 2 {
					merged++
				}
			}
		}
		wantOrdered, wantExact := coordinatorOrder(lists, want)
		gotOrdered, gotExact := coordinatorOrder(arrays, got)
		if g, w := describeTables(gotOrdered), describeTables(wantOrdered); g != w || gotExact != wantExact {
			t.Fatalf("seed %d (%d entries as arrays):\n got %s (exact %v)\nwant %s (exact %v)", seed, converted, g, gotExact, w, wantExact)
		}
		k := 0
		for _, a := range arrays {
			if a.ByBucket != nil {
				if !slices.Equal(a.ByBucket, originals[k]) {
					t.Fatalf("seed %d: normalize modified an entry's array: %v, was %v", seed, a.ByBucket, originals[k])
				}
				k++
			}
		}
	}
}

// TestNormalizeKeepsTheArray: a table sent once as an array is handed on
// as that array, not a copy; a bucket refused in an array is refused with
// the list form's message.
func TestNormalizeKeepsTheArray(t *testing.T) {
	arr := []int64{5, -1, 7, -1}
	out, err := normalize("p", []TableInput{{TableID: 3, ByBucket: arr}, {TableID: 4, ByBucket: []int64{-1}}})
	if err != nil || len(out) != 1 || len(out[0].ByBucket) == 0 || &out[0].ByBucket[0] != &arr[0] || out[0].Buckets != nil {
		t.Fatalf("normalize = %+v, %v; want table 3 holding the entry's own array, table 4 dropped", out, err)
	}
	for _, tt := range []struct {
		name string
		in   []TableInput
		want string
	}{
		{"negative offset", []TableInput{{TableID: 3, ByBucket: []int64{1, -2}}},
			"Invalid producer offsets for producer p: table 3 bucket 1 has negative log_end_offset -2"},
		{"id out of range", []TableInput{{TableID: 3, ByBucket: append(make([]int64, MaxBucketID+1), 1)}},
			"Invalid producer offsets for producer p: table 3 bucket id 131072 exceeds the maximum 131071"},
		{"twice", []TableInput{{TableID: 3, ByBucket: []int64{1, 2}}, {TableID: 3, ByBucket: []int64{-1, 4}}},
			"Invalid producer offsets for producer p: table 3 bucket 1 appears more than once"},
		{"mixed", []TableInput{{TableID: 3, Buckets: []BucketInput{{PartitionID: new(int64), LogEndOffset: new(int64)}}}, {TableID: 3, ByBucket: []int64{1}}},
			"Invalid producer offsets for producer p: table 3 mixes partitioned and non-partitioned buckets"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := normalize("p", tt.in); err == nil || err.Message != tt.want {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
