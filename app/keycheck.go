package app

import (
	"fmt"
	"strings"

	"github.com/fluss-sidecar/fluss-sidecar/config"
)

// CheckKeys reports keys that are probably mistakes, one WARN line each: a
// key in the sidecar's own "sidecar." namespace that it does not read, and
// any key within a small edit distance of a key it reads (a misspelling such
// as "zookeeper.adress"), naming the likely intended key. Other unknown keys
// are left alone: a Fluss server.yaml holds many the sidecar does not need.
func CheckKeys(c *config.Config) []string {
	var out []string
	for _, k := range c.Keys() {
		if IsKnownKey(k) {
			continue
		}
		if near := nearestKey(k); near != "" {
			out = append(out, fmt.Sprintf("configuration key %q is not one the sidecar reads; did you mean %q? (the value is ignored)", k, near))
			continue
		}
		if strings.HasPrefix(k, "sidecar.") {
			out = append(out, fmt.Sprintf("configuration key %q is not one the sidecar reads (the value is ignored); see docs/limits.md and README.md for the sidecar.* keys", k))
		}
	}
	return out
}

// nearestKey returns the known key closest to k if it is within the
// allowed distance: 1 edit for keys up to 10 characters, 2 for longer ones.
func nearestKey(k string) string {
	limit := 1
	if len(k) > 10 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, cand := range KnownKeys() {
		if d := editDistance(k, cand, limit); d < bestD {
			best, bestD = cand, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance (insertions,
// deletions, substitutions and adjacent transpositions) between a and b, or
// limit+1 when it is larger than limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], limit+1)
}
