// Package javaorder models the iteration order of java.util.HashMap (JDK 8
// and later), so that the sidecar can write lists in the order a Fluss
// coordinator's maps hand them out. It is pure: no I/O, no globals, no
// randomness.
//
// The model, for a map created with new HashMap<>() (load factor 0.75):
//   - a key's hashCode h is spread as h ^ (h >>> 16) and lands in bin
//     spread & (capacity-1);
//   - the bin array is allocated by the first insertion, with 16 bins and a
//     threshold of 12, or with the capacity putAll chose for an empty map
//     (PutAll); a resize doubles the bins and splits every bin into a low
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
//
// The nodes live in one slice and are linked by index, as Java links them
// by reference, so that a map of n keys costs a few allocations, not one
// per bin.
package javaorder

// Java's HashMap constants.
const (
	initialCapacity    = 16
	treeifyThreshold   = 8
	untreeifyThreshold = 6
	minTreeifyCapacity = 64
	maximumCapacity    = 1 << 30
)

// Map is a model of one java.util.HashMap's bins. Keys are compared with
// Go's ==, which must agree with the Java key's equals; the caller supplies
// each key's Java hashCode. The zero value is an empty map, as after
// new HashMap<>().
type Map[K comparable] struct {
	nodes []node[K] // every key, in insertion order; links are indexes+1
	bins  []bin     // nil until the first insertion
	// threshold is Java's field of that name: before the first insertion
	// it holds the capacity to allocate (0: the default), as Java's does.
	threshold int
	// ceilPresize makes PutAll size an empty map as JDK 19 and later do.
	ceilPresize bool
	// crowded records that a crowded bin doubled the table (treeifyBin
	// below 64 bins), which happens at a moment that depends on the order
	// of the keys.
	crowded bool
}

type bin struct {
	head int32 // index+1 of the first node, 0 when empty
	tree bool
}

type node[K comparable] struct {
	key    K
	spread uint32
	next   int32 // index+1 of the next node of the bin, 0 at its end
	value  int32 // what the caller stored with the key (PutValue)
	// run names the run of keys, given one after the other, whose order
	// among themselves the caller does not know (0: none); see get.go.
	run     int32
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
	// Value is the value last stored with the key by PutValue (0 for Put
	// and ComputeIfAbsent).
	Value int32
}

// Spread is HashMap's hash spreading of a hashCode: h ^ (h >>> 16).
func Spread(h int32) uint32 {
	u := uint32(h)
	return u ^ (u >> 16)
}

// Len is the number of keys.
func (m *Map[K]) Len() int { return len(m.nodes) }

// Capacity is the number of bins (0 before the first insertion).
func (m *Map[K]) Capacity() int { return len(m.bins) }

// Put models map.put(key, …) for a key whose hashCode is hash.
func (m *Map[K]) Put(key K, hash int32) { m.putSpread(key, Spread(hash), 0, 0) }

// PutValue is Put storing value with the key, as Java's put replaces the
// value of a present key without moving it; Entries reports the last one.
func (m *Map[K]) PutValue(key K, hash int32, value int32) {
	m.putSpread(key, Spread(hash), value, 0)
}

// PutAll models m.putAll(src) for another modelled map: src's keys in its
// iteration order, each put with its value. An empty m is first sized for
// src as Java's putMapEntries sizes it (JDK 8 to 18: the power of two at
// least src.size()/0.75+1, computed in float; see presize), a non-empty
// one doubled until its threshold holds src.size() (JDK 12 and later; JDK
// 8 and 11 double it at most once, and the puts double it further).
func (m *Map[K]) PutAll(src *Map[K]) {
	s := src.Len()
	if s == 0 {
		return
	}
	if m.bins == nil {
		if t := presize(s, m.ceilPresize); t > m.threshold {
			m.threshold = tableSizeFor(t)
		}
	} else {
		for s > m.threshold && len(m.bins) < maximumCapacity {
			m.resize()
		}
	}
	for _, b := range src.bins {
		for i := b.head; i != 0; i = src.nodes[i-1].next {
			n := &src.nodes[i-1]
			m.putSpread(n.key, n.spread, n.value, 0)
		}
	}
}

// presize is the capacity Java's putMapEntries asks an empty map for, to
// hold s keys: (int)((float)s / 0.75f + 1.0f) up to JDK 18,
// (int)Math.ceil(s / 0.75) from JDK 19 on (JDK-8281631).
func presize(s int, ceil bool) int {
	if ceil {
		// s/0.75 = 4s/3 exactly in rationals: ceil is (4s+2)/3.
		t := (4*int64(s) + 2) / 3
		return int(min(t, maximumCapacity))
	}
	ft := float32(float32(s)/float32(0.75)) + float32(1)
	if ft >= maximumCapacity {
		return maximumCapacity
	}
	return int(ft)
}

// tableSizeFor is Java's HashMap.tableSizeFor: the least power of two at
// least c (1 for c <= 1), at most 1<<30.
func tableSizeFor(c int) int {
	n := 1
	for n < c && n < maximumCapacity {
		n <<= 1
	}
	return n
}

func (m *Map[K]) putSpread(key K, sp uint32, value, run int32) {
	if m.bins == nil {
		m.resize()
	}
	i := m.index(sp)
	b := &m.bins[i]
	count := 0
	var tail int32
	for j := b.head; j != 0; j = m.nodes[j-1].next {
		n := &m.nodes[j-1]
		if n.spread == sp && n.key == key {
			n.value = value
			return
		}
		count++
		tail = j
	}
	m.nodes = append(m.nodes, node[K]{key: key, spread: sp, value: value, run: run, tainted: b.tree})
	id := int32(len(m.nodes))
	if tail == 0 {
		b.head = id
	} else {
		m.nodes[tail-1].next = id
	}
	if !b.tree && count >= treeifyThreshold {
		m.treeifyBin(i)
	}
	if len(m.nodes) > m.threshold {
		m.resize()
	}
}

// ComputeIfAbsent models map.computeIfAbsent(key, k -> non-null value) for a
// key whose hashCode is hash.
func (m *Map[K]) ComputeIfAbsent(key K, hash int32) { m.computeIfAbsent(key, Spread(hash), 0) }

// computeIfAbsent is ComputeIfAbsent storing value with a new key.
func (m *Map[K]) computeIfAbsent(key K, sp uint32, value int32) {
	if m.bins == nil || len(m.nodes) > m.threshold {
		m.resize()
	}
	i := m.index(sp)
	b := &m.bins[i]
	count := 0
	for j := b.head; j != 0; j = m.nodes[j-1].next {
		n := &m.nodes[j-1]
		if n.spread == sp && n.key == key {
			return
		}
		count++
	}
	if b.tree {
		// Java puts it into the tree (putTreeVal); its list position
		// follows the tree and is not modelled: at the end of the bin.
		m.nodes = append(m.nodes, node[K]{key: key, spread: sp, value: value, tainted: true})
		id := int32(len(m.nodes))
		j := b.head
		for m.nodes[j-1].next != 0 {
			j = m.nodes[j-1].next
		}
		m.nodes[j-1].next = id
		return
	}
	m.nodes = append(m.nodes, node[K]{key: key, spread: sp, value: value, next: b.head})
	b.head = int32(len(m.nodes))
	if count >= treeifyThreshold-1 {
		m.treeifyBin(i)
	}
}

// Entries returns every key in iteration order.
func (m *Map[K]) Entries() []Entry[K] {
	out := make([]Entry[K], 0, len(m.nodes))
	for i, b := range m.bins {
		for j := b.head; j != 0; j = m.nodes[j-1].next {
			n := &m.nodes[j-1]
			out = append(out, Entry[K]{Key: n.key, Bin: i, TreeOrdered: n.tainted, Value: n.value})
		}
	}
	return out
}

// Keys returns every key in iteration order.
func (m *Map[K]) Keys() []K {
	out := make([]K, 0, len(m.nodes))
	for _, b := range m.bins {
		for j := b.head; j != 0; j = m.nodes[j-1].next {
			out = append(out, m.nodes[j-1].key)
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
		for j := b.head; j != 0; j = m.nodes[j-1].next {
			if m.nodes[j-1].tainted {
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

// treeifyBin is Java's reaction to a crowded bin: double a small table, or
// turn the bin into a tree.
func (m *Map[K]) treeifyBin(i int) {
	if len(m.bins) < minTreeifyCapacity {
		m.crowded = true
		m.resize()
		return
	}
	b := &m.bins[i]
	b.tree = true
	for j := b.head; j != 0; j = m.nodes[j-1].next {
		m.nodes[j-1].tainted = true
	}
}

// resize allocates the first bins or doubles the table, splitting each bin
// into its low and high halves in order, as Java's resize does (thresholds
// included). A tree bin's half stays a tree only if it keeps more than 6
// entries.
func (m *Map[K]) resize() {
	if m.bins == nil {
		c := m.threshold
		if c == 0 {
			c = initialCapacity
		}
		m.bins = make([]bin, c)
		m.threshold = int(float32(c) * 0.75)
		return
	}
	old := m.bins
	n := len(old)
	if n >= maximumCapacity {
		m.threshold = 1<<31 - 1
		return
	}
	if n >= initialCapacity {
		m.threshold <<= 1
	} else {
		m.threshold = int(float32(2*n) * 0.75)
	}
	m.bins = make([]bin, 2*n)
	for i, b := range old {
		var loHead, loTail, hiHead, hiTail int32
		lo, hi := 0, 0
		for j := b.head; j != 0; {
			nd := &m.nodes[j-1]
			next := nd.next
			nd.next = 0
			if nd.spread&uint32(n) == 0 {
				if loTail == 0 {
					loHead = j
				} else {
					m.nodes[loTail-1].next = j
				}
				loTail = j
				lo++
			} else {
				if hiTail == 0 {
					hiHead = j
				} else {
					m.nodes[hiTail-1].next = j
				}
				hiTail = j
				hi++
			}
			j = next
		}
		m.bins[i] = bin{head: loHead, tree: b.tree && lo > untreeifyThreshold}
		m.bins[i+n] = bin{head: hiHead, tree: b.tree && hi > untreeifyThreshold}
	}
}
