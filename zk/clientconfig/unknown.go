package clientconfig

import (
	"fmt"
	"strings"
)

// A property that no rule names is one of two kinds, decided here and
// nowhere else.
//
// A near miss of a property the sidecar acts on (the same name in other
// letter case, or at most maxNearMissEdits edits away: a character added,
// dropped or changed, or two neighbours swapped) is refused with "did you
// mean". ZooKeeper's Java client would keep such a key and never look at
// it, so the setting that was meant (TLS on, a trust store, the JAAS
// section, OCSP) would be lost without a word, in the coordinator as in
// the sidecar.
//
// Any other property is accepted, with a start-up line saying it has no
// effect. That is what ZooKeeper's Java client does with it: its
// configuration stores every entry of the file and the client only looks
// up the names it reads, all of which are in rules. Server settings
// (zookeeper.ssl.quorum.*, zookeeper.authProvider.*), other programs' keys
// and java.security.auth.login.config, which ZooKeeper takes from the JVM's
// system property only, change nothing for a client.

// maxNearMissEdits is the largest edit distance, letter case aside, at
// which an unknown key counts as a misspelling of a known one. The
// shortest key the sidecar acts on, zookeeper.ssl.crl, has 17 characters,
// and no property of ZooKeeper 3.8 is this close to one the sidecar acts on
// (testdata/zookeeper-3.8-properties.txt).
const maxNearMissEdits = 2

// ignoredByZooKeeper is the reason given for an accepted unknown property.
const ignoredByZooKeeper = "ZooKeeper's Java client does not read it, so it has no effect here either"

// unknownProperty checks a property no rule names: an error for a near
// miss, else the reason it has no effect.
func unknownProperty(p Property, opts Options) (string, error) {
	if near := nearMiss(p.Key); near != "" {
		hint := "did you mean " + near + "?"
		if strings.EqualFold(near, p.Key) {
			hint += " (names are case-sensitive)"
		}
		return "", fmt.Errorf("%s: property %s is not a ZooKeeper client property the sidecar knows; %s A misspelling of a property the sidecar reads is refused, not ignored", p.where(), p.Key, hint)
	}
	if p.Key != JAASProperty {
		return ignoredByZooKeeper, nil
	}
	why := "ZooKeeper takes the JAAS file from the JVM option -D" + JAASProperty + " only, never from this file; "
	switch {
	case opts.JAASPath == "":
		return why + "the sidecar uses no JAAS file", nil
	case strings.TrimPrefix(p.Value, "=") == opts.JAASPath:
		why += "the sidecar uses that same file, " + opts.JAASPath
	default:
		why += "the sidecar uses JAAS file " + opts.JAASPath + ", not the one named here"
	}
	if opts.JAASFrom != "" {
		why += ", from " + opts.JAASFrom
	}
	return why, nil
}

// nearMiss returns the property the sidecar acts on (one that is not
// merely without effect) of which key is a near miss, or "". Of several,
// the closest wins, then the first by name.
func nearMiss(key string) string {
	lower := strings.ToLower(key)
	best, bestEdits := "", maxNearMissEdits+1
	for known, rule := range rules {
		if rule.how == noEffect {
			continue
		}
		d := editDistance(lower, strings.ToLower(known), bestEdits+1)
		if d < bestEdits || d == bestEdits && best != "" && known < best {
			best, bestEdits = known, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b
// (insertions, deletions, substitutions and swaps of neighbours, each one
// edit), or limit when it is at least limit. Strings whose lengths differ
// by limit or more are not compared, so a long key costs nothing.
func editDistance(a, b string, limit int) int {
	if len(a)-len(b) >= limit || len(b)-len(a) >= limit {
		return limit
	}
	// Three rows: two back (for swaps), the previous and the current.
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
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
			rowMin = min(rowMin, d)
		}
		if rowMin >= limit {
			return limit
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], limit)
}
