package javaorder

import (
	"math/rand/v2"
	"testing"
)

// scenario describes a family of register requests: tables with
// consecutive or random ids, each with buckets 0..buckets-1 in every one of
// its partitions (none when partitions is 0).
type scenario struct {
	name       string
	tables     int
	randomIDs  bool
	buckets    int
	partitions int
}

func (s scenario) request(r *rand.Rand) []Bucket {
	var out []Bucket
	base := int64(r.IntN(1000))
	for i := 0; i < s.tables; i++ {
		t := base + int64(i)
		if s.randomIDs {
			t = r.Int64N(1 << 20)
		}
		pbase := int64(r.IntN(1000))
		if s.partitions == 0 {
			for b := 0; b < s.buckets; b++ {
				out = append(out, Bucket{TableID: t, BucketID: int32(b)})
			}
			continue
		}
		for p := 0; p < s.partitions; p++ {
			for b := 0; b < s.buckets; b++ {
				out = append(out, Bucket{TableID: t, Partitioned: true, PartitionID: pbase + int64(p), BucketID: int32(b)})
			}
		}
	}
	return out
}

// TestTreeBinRarity measures how often a register request makes the
// coordinator's order leave the model (a tree bin holding several tables),
// and pins the scenarios where it never or always happens. Run with -v to
// see the table.
func TestTreeBinRarity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		scenario
		want string // "never", "always" or "" (only measured)
	}{
		{scenario{"1 table, 16 buckets", 1, false, 16, 0}, "never"},
		{scenario{"10 tables, 8 buckets", 10, false, 8, 0}, "never"},
		{scenario{"100 tables, 1 bucket", 100, false, 1, 0}, "never"},
		{scenario{"50 tables, 31 buckets", 50, false, 31, 0}, "never"},
		{scenario{"1 table, 4096 buckets", 1, false, 4096, 0}, "never"},
		{scenario{"30 random-id tables, 64 buckets", 30, true, 64, 0}, ""},
		{scenario{"20 tables, 256 buckets", 20, false, 256, 0}, ""},
		{scenario{"4 tables, 512 buckets", 4, false, 512, 0}, ""},
		{scenario{"1 table, 30 partitions x 8 buckets", 1, false, 8, 30}, "never"},
		{scenario{"3 tables, 30 partitions x 8 buckets", 3, false, 8, 30}, ""},
		{scenario{"2 tables, 365 partitions x 16 buckets", 2, false, 16, 365}, ""},
	}
	r := rand.New(rand.NewPCG(1, 2))
	const runs = 40
	for _, c := range cases {
		inexact, trees := 0, 0
		for i := 0; i < runs; i++ {
			co := coordinate(c.request(r))
			if !co.exact {
				inexact++
			}
			if co.trees > 0 {
				trees++
			}
		}
		t.Logf("%-40s inexact %2d/%d, tree bins at the end %2d/%d", c.name, inexact, runs, trees, runs)
		switch {
		case c.want == "never" && inexact != 0, c.want == "always" && inexact != runs:
			t.Errorf("%s: inexact %d of %d, want %s", c.name, inexact, runs, c.want)
		}
	}
}
