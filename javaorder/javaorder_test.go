package javaorder

import (
	"bufio"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestHashes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		got  int32
		want int32
	}{
		// Values computed with Long.hashCode and Objects.hash on a JVM.
		{"Long 0", LongHash(0), 0},
		{"Long -1", LongHash(-1), 0},
		{"Long 1<<32", LongHash(1 << 32), 1},
		{"Long min", LongHash(-1 << 63), -2147483648},
		{"Long max", LongHash(1<<63 - 1), -2147483648},
		{"Long 4294967297", LongHash(4294967297), 0},
		{"Objects.hash()", ObjectsHash(), 1},
		{"TableBucket(1,null,0)", TableBucketHash(Bucket{TableID: 1}), 30752},
		{"TableBucket(1,5,2)", TableBucketHash(Bucket{TableID: 1, Partitioned: true, PartitionID: 5, BucketID: 2}), 30819},
		{"TableBucket(max,-1,max)", TableBucketHash(Bucket{TableID: 1<<63 - 1, Partitioned: true, PartitionID: -1, BucketID: 1<<31 - 1}), 29760},
		{"Spread(-1)", int32(Spread(-1)), int32(-65536)},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	// A non-partitioned bucket hashes and compares alike whatever PartitionID says.
	a, b := Bucket{TableID: 3, PartitionID: 9, BucketID: 1}, Bucket{TableID: 3, BucketID: 1}
	if TableBucketHash(a) != TableBucketHash(b) || a.key() != b.key() {
		t.Error("an unpartitioned bucket's PartitionID leaks into its identity")
	}
}

func ids(s string) []int64 {
	var out []int64
	for _, f := range strings.Fields(s) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			panic(err)
		}
		out = append(out, v)
	}
	return out
}

func TestOrders(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, fill, in, want string
		exact                bool
	}{
		{"spec example", "put", "2 17 100 200 1", "17 1 2 100 200", true},
		{"empty", "put", "", "", true},
		{"repeats keep first position", "put", "5 5 3 5 1", "1 3 5", true},
		// computeIfAbsent inserts at the head of a bin: 17 before 1.
		{"spec example by computeIfAbsent", "compute", "2 17 100 200 1", "1 17 2 100 200", true},
		// computeIfAbsent resizes only at the next call: 13 keys stay in 16
		// bins, a 14th call (even for a present key) doubles the table.
		{"lazy resize", "compute", "0 1 2 3 4 5 6 7 8 9 10 11 16", "16 0 1 2 3 4 5 6 7 8 9 10 11", true},
		{"lazy resize then a present key", "compute", "0 1 2 3 4 5 6 7 8 9 10 11 16 5", "0 1 2 3 4 5 6 7 8 9 10 11 16", true},
		// Eleven ids in one bin of 64: a tree bin, order not modelled.
		{"tree bin", "put", "0 64 128 192 256 320 384 448 512 576 640", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fill := PutOrder
			if c.fill == "compute" {
				fill = ComputeIfAbsentOrder
			}
			got, exact := fill(ids(c.in))
			if exact != c.exact {
				t.Fatalf("exact = %v, want %v", exact, c.exact)
			}
			if c.exact && !slices.Equal(got, ids(c.want)) {
				t.Fatalf("got %v, want %s", got, c.want)
			}
		})
	}
}

func TestCoordinatorTableOrder(t *testing.T) {
	t.Parallel()
	plain := func(pairs ...int64) []Bucket {
		var out []Bucket
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, Bucket{TableID: pairs[i], BucketID: int32(pairs[i+1])})
		}
		return out
	}
	cases := []struct {
		name  string
		in    []Bucket
		want  []int64
		exact bool
	}{
		{"none", nil, []int64{}, true},
		{"spec two tables", plain(100, 0, 200, 0), []int64{100, 200}, true},
		// Not the put order of docs/storage-format.md §1.2, 17,1,2,100,200: the buckets are hashed first.
		{"spec ids one bucket each", plain(2, 0, 17, 0, 100, 0, 200, 0, 1, 0), []int64{1, 17, 2, 100, 200}, true},
		{"repeated bucket counts once", plain(3, 0, 3, 0, 4, 1), []int64{3, 4}, true},
		{"partition ignored when unpartitioned", []Bucket{{TableID: 3, PartitionID: 7}, {TableID: 3}}, []int64{3}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, exact := CoordinatorTableOrder(c.in)
			if exact != c.exact || !slices.Equal(got, c.want) {
				t.Fatalf("got %v (exact %v), want %v (exact %v)", got, exact, c.want, c.exact)
			}
		})
	}
}

// javaCase is one line of testdata/java_order.txt, written by
// testdata/java/OrderOracle.java on a real JVM.
type javaCase struct {
	mode, args string
	order      []int64
	buckets    []string // request only
	trees      int
}

func loadJavaCases(t testing.TB) []javaCase {
	f, err := os.Open("testdata/java_order.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []javaCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		in, ans, ok := strings.Cut(sc.Text(), " -> ")
		ans, trees, ok2 := strings.Cut(ans, " trees=")
		if !ok || !ok2 {
			t.Fatalf("bad line %q", sc.Text())
		}
		var c javaCase
		c.mode, c.args, _ = strings.Cut(in, " ")
		c.trees, err = strconv.Atoi(trees)
		if err != nil {
			t.Fatal(err)
		}
		tables, buckets, _ := strings.Cut(ans, "|")
		c.order = ids(tables)
		c.buckets = strings.Fields(buckets)
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func parseBuckets(t testing.TB, s string) []Bucket {
	var out []Bucket
	for _, f := range strings.Fields(s) {
		p := strings.Split(f, ":")
		var n []int64
		for _, x := range p {
			v, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				t.Fatalf("%q: %v", f, err)
			}
			n = append(n, v)
		}
		if len(n) == 2 {
			out = append(out, Bucket{TableID: n[0], BucketID: int32(n[1])})
		} else {
			out = append(out, Bucket{TableID: n[0], Partitioned: true, PartitionID: n[1], BucketID: int32(n[2])})
		}
	}
	return out
}

func (b Bucket) String() string {
	if b.Partitioned {
		return fmt.Sprintf("%d:%d:%d", b.TableID, b.PartitionID, b.BucketID)
	}
	return fmt.Sprintf("%d:%d", b.TableID, b.BucketID)
}

// TestAgainstJava replays every case a real java.util.HashMap answered. The
// number of tree bins at the end must always agree; the order must agree whenever the model
// says it is exact, and hold the same keys otherwise.
func TestAgainstJava(t *testing.T) {
	t.Parallel()
	cases := loadJavaCases(t)
	modes := map[string]int{}
	inexact := 0
	for i, c := range cases {
		modes[c.mode]++
		t.Run(fmt.Sprintf("%d_%s", i, c.mode), func(t *testing.T) {
			var got []int64
			var gotBuckets []string
			var exact, bucketsExact bool
			var trees int
			switch c.mode {
			case "put", "compute":
				var m Map[int64]
				for _, id := range ids(c.args) {
					if c.mode == "put" {
						m.Put(id, LongHash(id))
					} else {
						m.ComputeIfAbsent(id, LongHash(id))
					}
				}
				got, exact, trees = m.Keys(), m.Exact(), m.TreeBins()
			case "request":
				co := coordinate(parseBuckets(t, c.args))
				got, exact, trees = co.tables, co.exact, co.trees
				for _, b := range co.buckets {
					gotBuckets = append(gotBuckets, b.String())
				}
				bucketsExact = trees == 0
			default:
				t.Fatalf("unknown mode %q", c.mode)
			}
			if trees != c.trees {
				t.Errorf("tree bins: model %d, Java %d", trees, c.trees)
			}
			if !exact {
				// A bin may have been a tree earlier and be a list again
				// after a resize (Java then keeps the tree's order), so
				// c.trees can be 0 here.
				inexact++
				if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(c.order))) {
					t.Errorf("keys differ:\n model %v\n java  %v", got, c.order)
				}
				return
			}
			if !slices.Equal(got, c.order) && !(len(got) == 0 && len(c.order) == 0) {
				t.Errorf("order:\n model %v\n java  %v", got, c.order)
			}
			if bucketsExact && !reflect.DeepEqual(gotBuckets, c.buckets) && len(c.buckets) > 0 {
				t.Errorf("bucket order:\n model %v\n java  %v", gotBuckets, c.buckets)
			}
		})
	}
	if modes["put"] < 20 || modes["compute"] < 20 || modes["request"] < 40 {
		t.Fatalf("too few Java cases: %v", modes)
	}
	if inexact == 0 || inexact == len(cases) {
		t.Fatalf("%d of %d cases inexact: the tree-bin cases are missing", inexact, len(cases))
	}
}
