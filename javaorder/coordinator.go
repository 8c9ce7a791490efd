package javaorder

// LongHash is Java's Long.hashCode(v): the two halves of v xor-ed, as an
// int32.
func LongHash(v int64) int32 {
	u := uint64(v)
	return int32(uint32(u ^ (u >> 32)))
}

// ObjectsHash is java.util.Objects.hash (Arrays.hashCode) over the hashCodes
// of its arguments, 0 standing for null: starting from 1, each step
// multiplies by 31 and adds the next hashCode, wrapping as int32.
func ObjectsHash(hashes ...int32) int32 {
	h := int32(1)
	for _, x := range hashes {
		h = 31*h + x
	}
	return h
}

// Bucket is one bucket offset of a register request, as the coordinator
// keys it: TableBucket(tableId, partitionId or null, bucket).
type Bucket struct {
	TableID     int64
	Partitioned bool
	PartitionID int64 // ignored unless Partitioned
	BucketID    int32
}

// key is Bucket with the partition cleared when not partitioned, so that ==
// matches TableBucket.equals.
func (b Bucket) key() Bucket {
	if !b.Partitioned {
		b.PartitionID = 0
	}
	return b
}

// TableBucketHash is Fluss's TableBucket.hashCode(): Objects.hash over
// (tableId, bucket, partitionId), a null partition hashing to 0.
func TableBucketHash(b Bucket) int32 {
	var p int32
	if b.Partitioned {
		p = LongHash(b.PartitionID)
	}
	return ObjectsHash(LongHash(b.TableID), b.BucketID, p)
}

// CoordinatorTableOrder returns the table ids of a register request in the
// order a Fluss coordinator lists them in the producer znode, given the
// request's bucket offsets in wire order (every table entry's buckets in
// turn, table entries in turn).
//
// The coordinator does two things, both modelled here:
//  1. it puts every bucket into a HashMap<TableBucket, Long>, in request
//     order (a repeated bucket keeps its first position);
//  2. it walks that map and, once per bucket, calls computeIfAbsent on a
//     HashMap<Long, …> keyed by table id; the znode lists the tables in
//     that second map's iteration order.
//
// exact is false when a tree bin makes the order unknowable from the model:
// a tree bin of the first map holding the first bucket of two or more tables,
// or a tree bin of the second map holding two or more tables. A tree bin
// needs 8 or more keys in one bin of a table of at least 64 bins; for
// buckets that means equal hashes, which happens when a table has many
// partitions (hash steps of 31 per bucket collide with steps of 1 per
// partition id). In the first map a real coordinator then breaks ties with
// System.identityHashCode, so even two coordinators may disagree.
func CoordinatorTableOrder(buckets []Bucket) (tables []int64, exact bool) {
	c := coordinate(buckets)
	return c.tables, c.exact
}

// coordination is everything CoordinatorTableOrder works out, for tests.
type coordination struct {
	tables  []int64
	buckets []Bucket // the first map's iteration order
	exact   bool
	trees   int // tree bins in both maps
}

func coordinate(buckets []Bucket) coordination {
	var byBucket Map[Bucket]
	for _, b := range buckets {
		k := b.key()
		byBucket.Put(k, TableBucketHash(k))
	}
	exact := true
	var byTable Map[int64]
	entries := byBucket.Entries()
	seen := make(map[int64]bool)
	for i := 0; i < len(entries); {
		e := entries[i]
		if !e.TreeOrdered {
			seen[e.Key.TableID] = true
			byTable.ComputeIfAbsent(e.Key.TableID, LongHash(e.Key.TableID))
			i++
			continue
		}
		// A run of tree-ordered keys in one bin: their order is unknown, so
		// it must not introduce more than one new table.
		j, fresh := i, 0
		for ; j < len(entries) && entries[j].TreeOrdered && entries[j].Bin == e.Bin; j++ {
			if id := entries[j].Key.TableID; !seen[id] {
				seen[id] = true
				fresh++
			}
			byTable.ComputeIfAbsent(entries[j].Key.TableID, LongHash(entries[j].Key.TableID))
		}
		if fresh > 1 {
			exact = false
		}
		i = j
	}
	c := coordination{tables: byTable.Keys(), exact: exact && byTable.Exact(), trees: byBucket.TreeBins() + byTable.TreeBins()}
	for _, e := range entries {
		c.buckets = append(c.buckets, e.Key)
	}
	return c
}

// PutOrder returns the distinct ids in the order a HashMap<Long, …> filled by
// put in the given order iterates them, and whether that order is exact
// (no tree bin holds two or more of them). This is the order of docs/storage-format.md
// §1.2's example: {2,17,100,200,1} → 17,1,2,100,200.
func PutOrder(ids []int64) (order []int64, exact bool) {
	var m Map[int64]
	for _, id := range ids {
		m.Put(id, LongHash(id))
	}
	return m.Keys(), m.Exact()
}

// ComputeIfAbsentOrder is PutOrder for a map filled by computeIfAbsent, one
// call per id given (an id may repeat).
func ComputeIfAbsentOrder(ids []int64) (order []int64, exact bool) {
	var m Map[int64]
	for _, id := range ids {
		m.ComputeIfAbsent(id, LongHash(id))
	}
	return m.Keys(), m.Exact()
}

// TableOrderByBins is CoordinatorTableOrder for the common case where the
// answer does not depend on the buckets: given the request's distinct table
// ids (each once, any order), if the coordinator's second map, keyed by
// table id, ends with every table alone in its bin at the capacity its size
// implies, it iterates them by bin index whatever order they were inserted
// in, so the first map (one entry per bucket, the costly part to model)
// does not matter. ok is false otherwise; then call CoordinatorTableOrder.
//
// No bin is crowded at any earlier, smaller capacity either: keys alone in
// their bins at capacity C share a bin at most C/c at capacity c, and while
// the map is that small it holds too few keys to crowd a bin into a resize
// or a tree before reaching C.
func TableOrderByBins(tables []int64) (order []int64, ok bool) {
	if len(tables) == 0 {
		return nil, true
	}
	var m Map[int64]
	for _, id := range tables {
		m.ComputeIfAbsent(id, LongHash(id))
	}
	natural := 16
	for float64(m.Len()) > 0.75*float64(natural) {
		natural *= 2
	}
	if m.Capacity() != natural || m.TreeBins() > 0 {
		return nil, false
	}
	entries := m.Entries()
	for i := 1; i < len(entries); i++ {
		if entries[i].Bin == entries[i-1].Bin {
			return nil, false
		}
	}
	return m.Keys(), true
}
