// Package javaorder models the iteration order of java.util.HashMap (JDK 8
// and later), so that the sidecar can write lists in the order a Fluss
// coordinator's maps hand them out. It is pure: no I/O, no globals, no
// randomness.
//
// The model, for a map created with new HashMap<>() (16 bins, load factor
// 0.75):
//   - a key's hashCode h is spread as h ^ (h >>> 16) and lands in bin
//     spread & (capacity-1);
//   - the bin array is allocated by the first insertion, with 16 bins and a
//     threshold of 12; a resize doubles both and splits every bin into a low
//     and a high half, each keeping the relative order of its entries;
//   - put appends a new key at the tail of its bin and then resizes if the
//     size exceeds the threshold; putting an existing key changes nothing
//     of the order;
//   - computeIfAbsent first resizes if the size already exceeds the
//     threshold (even when the key turns out to be present), then inserts a
//     new key at the head of its bin, and never resizes afterwards;
//   - a bin that reaches the tree threshold (put: a 9th entry; computeIfAbsent:
//     an 8th) makes Java double the table if it has fewer than 64 bins, and
//     otherwise turn the bin into a red-black tree;
//   - iteration visits bins in ascending order and each bin's entries in
//     list order.
//
// Tree bins are detected but not modelled: Java orders a tree bin's list by
// the tree's shape (root first, new nodes after their tree parent), and for
// keys that are not Comparable and share a hash (such as Fluss's
// TableBucket) by System.identityHashCode, which differs from run to run.
// Every entry that has been in a tree bin is marked TreeOrdered; within a
// bin such entries always form one run whose internal order is unknown (the
// model keeps them in insertion order).
package javaorder

// Java's HashMap constants.
const (
	initialCapacity    = 16
	treeifyThreshold   = 8
	untreeifyThreshold = 6
	minTreeifyCapacity = 64
)

// Map is a model of one java.util.HashMap's bins. Keys are compared with
// Go's ==, which must agree with the Java key's equals; the caller supplies
// each key's Java hashCode. The zero value is an empty map, as after
// new HashMap<>().
type Map[K comparable] struct {
	bins      []bin[K] // nil until the first insertion
	size      int
	threshold int
}

type bin[K comparable] struct {
	nodes []node[K]
	tree  bool
}

type node[K comparable] struct {
	key     K
	spread  uint32
	tainted bool
}

// Entry is one key in iteration order.
type Entry[K comparable] struct {
	Key K
	// Bin is the key's bin index at the map's current capacity.
	Bin int
	// TreeOrdered is true when the key has been in a tree bin: its position
	// among the other TreeOrdered keys of the same bin is not modelled.
	// Such keys are adjacent within their bin.
	TreeOrdered bool
}

// Spread is HashMap's hash spreading of a hashCode: h ^ (h >>> 16).
func Spread(h int32) uint32 {
	u := uint32(h)
	return u ^ (u >> 16)
}

// Len is the number of keys.
func (m *Map[K]) Len() int { return m.size }

// Capacity is the number of bins (0 before the first insertion).
func (m *Map[K]) Capacity() int { return len(m.bins) }

// Put models map.put(key, …) for a key whose hashCode is hash.
func (m *Map[K]) Put(key K, hash int32) {
	if m.bins == nil {
		m.resize()
	}
	sp := Spread(hash)
	i := m.index(sp)
	if m.find(i, key, sp) >= 0 {
		return
	}
	b := &m.bins[i]
	before := len(b.nodes)
	b.nodes = append(b.nodes, node[K]{key: key, spread: sp, tainted: b.tree})
	if !b.tree && before >= treeifyThreshold {
		m.treeifyBin(i)
	}
	m.size++
	if m.size > m.threshold {
		m.resize()
	}
}

// ComputeIfAbsent models map.computeIfAbsent(key, k -> non-null value) for a
// key whose hashCode is hash.
func (m *Map[K]) ComputeIfAbsent(key K, hash int32) {
	if m.bins == nil || m.size > m.threshold {
		m.resize()
	}
	sp := Spread(hash)
	i := m.index(sp)
	if m.find(i, key, sp) >= 0 {
		return
	}
	b := &m.bins[i]
	if b.tree {
		b.nodes = append(b.nodes, node[K]{key: key, spread: sp, tainted: true})
	} else {
		before := len(b.nodes)
		b.nodes = append([]node[K]{{key: key, spread: sp}}, b.nodes...)
		if before >= treeifyThreshold-1 {
			m.treeifyBin(i)
		}
	}
	m.size++
}

// Entries returns every key in iteration order.
func (m *Map[K]) Entries() []Entry[K] {
	out := make([]Entry[K], 0, m.size)
	for i, b := range m.bins {
		for _, n := range b.nodes {
			out = append(out, Entry[K]{Key: n.key, Bin: i, TreeOrdered: n.tainted})
		}
	}
	return out
}

// Keys returns every key in iteration order.
func (m *Map[K]) Keys() []K {
	out := make([]K, 0, m.size)
	for _, b := range m.bins {
		for _, n := range b.nodes {
			out = append(out, n.key)
		}
	}
	return out
}

// TreeBins is the number of bins that are trees now.
func (m *Map[K]) TreeBins() int {
	n := 0
	for _, b := range m.bins {
		if b.tree {
			n++
		}
	}
	return n
}

// Exact reports whether the whole iteration order is modelled, that is no
// bin holds two or more TreeOrdered keys.
func (m *Map[K]) Exact() bool {
	for _, b := range m.bins {
		t := 0
		for _, n := range b.nodes {
			if n.tainted {
				t++
			}
		}
		if t > 1 {
			return false
		}
	}
	return true
}

func (m *Map[K]) index(sp uint32) int { return int(sp & uint32(len(m.bins)-1)) }

func (m *Map[K]) find(i int, key K, sp uint32) int {
	for j, n := range m.bins[i].nodes {
		if n.spread == sp && n.key == key {
			return j
		}
	}
	return -1
}

// treeifyBin is Java's reaction to a crowded bin: double a small table, or
// turn the bin into a tree.
func (m *Map[K]) treeifyBin(i int) {
	if len(m.bins) < minTreeifyCapacity {
		m.resize()
		return
	}
	b := &m.bins[i]
	b.tree = true
	for j := range b.nodes {
		b.nodes[j].tainted = true
	}
}

// resize allocates the first 16 bins or doubles the table, splitting each
// bin into its low and high halves in order. A tree bin's half stays a tree
// only if it keeps more than 6 entries.
func (m *Map[K]) resize() {
	if m.bins == nil {
		m.bins = make([]bin[K], initialCapacity)
		m.threshold = initialCapacity * 3 / 4
		return
	}
	old := m.bins
	n := len(old)
	m.bins = make([]bin[K], 2*n)
	m.threshold *= 2
	for i, b := range old {
		var lo, hi []node[K]
		for _, nd := range b.nodes {
			if nd.spread&uint32(n) == 0 {
				lo = append(lo, nd)
			} else {
				hi = append(hi, nd)
			}
		}
		m.bins[i] = bin[K]{nodes: lo, tree: b.tree && len(lo) > untreeifyThreshold}
		m.bins[i+n] = bin[K]{nodes: hi, tree: b.tree && len(hi) > untreeifyThreshold}
	}
}
