package javaorder

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTableOrderByBinsAgreesWithTheFullModel: whenever the shortcut
// answers, it gives the full model's order, on the Java-verified requests
// and on random ones (table ids chosen to collide often).
func TestTableOrderByBinsAgreesWithTheFullModel(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, buckets []Bucket) (answered bool) {
		t.Helper()
		var ids []int64
		seen := map[int64]bool{}
		for _, b := range buckets {
			if !seen[b.TableID] {
				seen[b.TableID] = true
				ids = append(ids, b.TableID)
			}
		}
		got, ok := TableOrderByBins(ids)
		if !ok {
			return false
		}
		want, exact := CoordinatorTableOrder(buckets)
		if !exact {
			t.Fatalf("shortcut answered %v where the full model is inexact", got)
		}
		if !slices.Equal(got, want) && len(want) > 0 {
			t.Fatalf("tables %v: shortcut %v, full model %v", ids, got, want)
		}
		return true
	}
	answered := 0
	for _, c := range loadJavaCases(t) {
		if c.mode == "request" && check(t, parseBuckets(t, c.args)) {
			answered++
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 3000; i++ {
		n := 1 + rng.IntN(40)
		var buckets []Bucket
		for j := 0; j < n; j++ {
			id := int64(rng.IntN(64)) << (rng.IntN(3) * 16)
			for k := 0; k < 1+rng.IntN(4); k++ {
				b := Bucket{TableID: id, BucketID: int32(rng.IntN(50))}
				if rng.IntN(3) == 0 {
					b.Partitioned, b.PartitionID = true, int64(rng.IntN(5))
				}
				buckets = append(buckets, b)
			}
		}
		rng.Shuffle(len(buckets), func(a, b int) { buckets[a], buckets[b] = buckets[b], buckets[a] })
		if check(t, buckets) {
			answered++
		}
	}
	if answered < 100 {
		t.Fatalf("the shortcut answered only %d requests", answered)
	}
	t.Logf("the shortcut answered %d requests", answered)
}
