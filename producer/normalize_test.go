package producer

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// sameAsBefore reports how normalize and normalizeBefore differ on in, or
// "" when they do not: the same error code and message, or the same tables
// with the same buckets in the same order, the same list capacities, and
// an array handed on as the entry's own array exactly when it was before.
func sameAsBefore(in []TableInput) string {
	want, wantErr := normalizeBefore("p", in)
	got, gotErr := normalize("p", in)
	if (gotErr == nil) != (wantErr == nil) {
		return fmt.Sprintf("error %v, before %v", gotErr, wantErr)
	}
	if gotErr != nil {
		if gotErr.Code != wantErr.Code || gotErr.Message != wantErr.Message {
			return fmt.Sprintf("error %d %q, before %d %q", gotErr.Code, gotErr.Message, wantErr.Code, wantErr.Message)
		}
		return ""
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("tables %+v, before %+v", got, want)
	}
	for i := range got {
		if cap(got[i].Buckets) != cap(want[i].Buckets) {
			return fmt.Sprintf("table %d: list capacity %d, before %d", got[i].TableID, cap(got[i].Buckets), cap(want[i].Buckets))
		}
		if len(got[i].ByBucket) > 0 && (&got[i].ByBucket[0] == &want[i].ByBucket[0]) != sharesInput(in, want[i].ByBucket) {
			return fmt.Sprintf("table %d: the array is shared with an input entry differently than before", got[i].TableID)
		}
	}
	return ""
}

// sharesInput reports whether arr is (a prefix of) an input entry's array.
func sharesInput(in []TableInput, arr []int64) bool {
	for _, t := range in {
		if len(t.ByBucket) > 0 && len(arr) > 0 && &t.ByBucket[0] == &arr[0] {
			return true
		}
	}
	return false
}

// randomLargeTables makes requests whose tables grow past linearDupCheck
// buckets, so the indexed duplicate check runs too: plain or partitioned
// tables of up to 120 buckets over several entries, sometimes a duplicate,
// a bucket of the other kind, or an entry as an array among lists.
func randomLargeTables(rnd *rand.Rand) []TableInput {
	var in []TableInput
	partitioned := map[int64]bool{}
	for range 1 + rnd.IntN(5) {
		t := TableInput{TableID: int64(rnd.IntN(3))}
		if _, ok := partitioned[t.TableID]; !ok {
			partitioned[t.TableID] = rnd.IntN(3) == 0
		}
		n := rnd.IntN(120)
		for j := range n {
			off := int64(rnd.IntN(1000))
			b := BucketInput{BucketID: int32(rnd.IntN(400)), LogEndOffset: &off}
			if partitioned[t.TableID] {
				p := int64(rnd.IntN(4))
				b.PartitionID = &p
			}
			switch rnd.IntN(400) {
			case 0: // the other kind
				if b.PartitionID == nil {
					b.PartitionID = new(int64)
				} else {
					b.PartitionID = nil
				}
			case 1:
				b.LogEndOffset = nil
			case 2:
				b.BucketID = MaxBucketID + 1 + int32(rnd.IntN(3))
			case 3:
				b.BucketID = MaxBucketID
			}
			if j > 0 && rnd.IntN(200) == 0 { // a duplicate of the previous bucket
				b.BucketID, b.PartitionID = t.Buckets[j-1].BucketID, t.Buckets[j-1].PartitionID
			}
			t.Buckets = append(t.Buckets, b)
		}
		if rnd.IntN(3) == 0 {
			t = sortedUnique(t)
			if a, ok := asArray(t); ok {
				t = a
			}
		}
		in = append(in, t)
	}
	return in
}

// sortedUnique keeps the plain buckets of t in ascending id order, one
// per id, so asArray can take them.
func sortedUnique(t TableInput) TableInput {
	byID := map[int32]BucketInput{}
	for _, b := range t.Buckets {
		if b.PartitionID == nil {
			byID[b.BucketID] = b
		}
	}
	out := TableInput{TableID: t.TableID}
	for id := range int32(400) {
		if b, ok := byID[id]; ok {
			out.Buckets = append(out.Buckets, b)
		}
	}
	return out
}

// TestNormalizeSameAsBefore: over random requests of small and large
// tables, lists and arrays, normalize accepts and refuses exactly what
// normalizeBefore did, with the same code and message, and returns the
// same tables.
func TestNormalizeSameAsBefore(t *testing.T) {
	counts := map[string]int{}
	for seed := range uint64(6000) {
		rnd := rand.New(rand.NewPCG(seed, 42))
		var in []TableInput
		if seed%2 == 0 {
			in = randomTables(rnd)
			for i := range in {
				if a, ok := asArray(in[i]); ok && rnd.IntN(3) > 0 {
					in[i] = a
				}
			}
		} else {
			in = randomLargeTables(rnd)
		}
		if d := sameAsBefore(in); d != "" {
			t.Fatalf("seed %d: %s", seed, d)
		}
		counts[outcome(in)]++
	}
	// The requests must reach every rule and both duplicate checks.
	for _, k := range []string{"accepted", "accepted, indexed", "accepted, indexed partitioned", "accepted, array kept",
		"accepted, arrays merged", "no log_end_offset", "negative log_end_offset", "negative bucket id", "exceeds the maximum",
		"appears more than once", "appears more than once, indexed", "partition appears more than once", "mixes"} {
		if counts[k] < 10 {
			t.Errorf("only %d requests %q; outcomes %v", counts[k], k, counts)
		}
	}
	t.Logf("outcomes: %v", counts)
}

// outcome names what normalizeBefore made of in, for the coverage check.
func outcome(in []TableInput) string {
	out, err := normalizeBefore("p", in)
	large := map[int64]int{}
	arrays := map[int64]int{}
	for _, t := range in {
		if t.ByBucket != nil {
			arrays[t.TableID]++
		} else {
			large[t.TableID] += len(t.Buckets)
		}
	}
	indexed := false
	for _, n := range large {
		indexed = indexed || n > linearDupCheck
	}
	if err != nil {
		for _, k := range []string{"no log_end_offset", "negative log_end_offset", "negative bucket id", "exceeds the maximum", "mixes"} {
			if strings.Contains(err.Message, k) {
				return k
			}
		}
		switch {
		case strings.Contains(err.Message, "partition"):
			return "partition appears more than once"
		case indexed:
			return "appears more than once, indexed"
		}
		return "appears more than once"
	}
	for _, t := range out {
		if t.ByBucket != nil && arrays[t.TableID] > 1 {
			return "accepted, arrays merged"
		}
	}
	for _, t := range out {
		if t.ByBucket != nil && sharesInput(in, t.ByBucket) {
			return "accepted, array kept"
		}
	}
	for _, t := range out {
		if len(t.Buckets) > linearDupCheck && t.Buckets[0].Partitioned {
			return "accepted, indexed partitioned"
		}
	}
	if indexed {
		return "accepted, indexed"
	}
	return "accepted"
}

// tablesFromBytes reads a request from fuzz bytes, three at a time: the
// first byte chooses the step, the other two its argument.
func tablesFromBytes(data []byte) []TableInput {
	var in []TableInput
	for len(data) >= 3 {
		op, arg := data[0], binary.BigEndian.Uint16(data[1:3])
		data = data[3:]
		if op%8 == 0 || len(in) == 0 { // a new entry
			in = append(in, TableInput{TableID: int64(arg % 4)})
			if op%16 == 8 {
				in[len(in)-1].ByBucket = []int64{}
			}
		}
		t := &in[len(in)-1]
		id := int32(arg % 512)
		switch op % 8 {
		case 7:
			id = MaxBucketID - 1 + int32(arg%4)
		case 6:
			id = -int32(arg%3) - 1
		}
		off := int64(arg % 7)
		switch op / 8 % 8 {
		case 6:
			off = -1
		case 7:
			off = -2
		}
		if t.ByBucket != nil {
			if int(id) >= 0 && int(id) < 600 {
				for len(t.ByBucket) <= int(id) {
					t.ByBucket = append(t.ByBucket, -1)
				}
				t.ByBucket[id] = off
			}
			continue
		}
		n := 1
		if op/64 == 3 { // a run of buckets, to reach the indexed check
			n = 1 + int(arg%40)
		}
		for j := range n {
			o := off
			b := BucketInput{BucketID: id + int32(j), LogEndOffset: &o}
			if op/64 == 1 {
				b.LogEndOffset = nil
			}
			if op/64 == 2 || (op/64 == 3 && arg%2 == 1) {
				p := int64(arg % 3)
				b.PartitionID = &p
			}
			t.Buckets = append(t.Buckets, b)
		}
	}
	return in
}

// FuzzNormalizeSameAsBefore: whatever the request, normalize answers as
// normalizeBefore did.
func FuzzNormalizeSameAsBefore(f *testing.F) {
	f.Add([]byte{0, 0, 1, 1, 0, 2, 1, 0, 2})
	f.Add([]byte{8, 0, 1, 1, 0, 2, 8, 0, 1, 1, 0, 2})
	f.Add([]byte{0, 0, 1, 192, 0, 39, 192, 0, 39, 0, 0, 1, 193, 0, 41})
	f.Add([]byte{0, 0, 1, 128, 0, 5, 1, 0, 5})
	f.Add([]byte{0, 0, 1, 7, 0, 3, 56, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := tablesFromBytes(data)
		if d := sameAsBefore(in); d != "" {
			t.Fatalf("%+v: %s", in, d)
		}
	})
}

// BenchmarkNormalize measures normalize on the shapes a register takes:
// a few small tables as lists, tables as arrays (how Fluss clients send
// them once decoded), one table in several array entries, and large plain
// and partitioned lists (the indexed duplicate check).
func BenchmarkNormalize(b *testing.B) {
	list := func(table int64, n int, partitions int) TableInput {
		t := TableInput{TableID: table}
		for i := range n {
			off := int64(i)
			bi := BucketInput{BucketID: int32(i / max(partitions, 1)), LogEndOffset: &off}
			if partitions > 0 {
				p := int64(i % partitions)
				bi.PartitionID = &p
			}
			t.Buckets = append(t.Buckets, bi)
		}
		return t
	}
	array := func(table int64, from, to int) TableInput {
		arr := make([]int64, to)
		for i := range arr {
			arr[i] = -1
			if i >= from {
				arr[i] = int64(i)
			}
		}
		return TableInput{TableID: table, ByBucket: arr}
	}
	for _, bc := range []struct {
		name string
		in   []TableInput
	}{
		{"small lists", []TableInput{list(1, 3, 0), list(2, 8, 0), list(3, 4, 2), list(1, 0, 0)}},
		{"arrays", []TableInput{array(1, 0, 16), array(2, 0, 128), array(3, 0, 4)}},
		{"arrays merged", []TableInput{array(1, 0, 64), array(1, 64, 128), array(2, 0, 8)}},
		{"large plain list", []TableInput{list(1, 4096, 0)}},
		{"large partitioned list", []TableInput{list(1, 4096, 16)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var err *flusserr.Error
			var out []offsets.TableOffsets
			for b.Loop() {
				out, err = normalize("p", bc.in)
			}
			if err != nil || len(out) == 0 {
				b.Fatal(out, err)
			}
		})
	}
}
