package javaorder

// GetAnswer is the order of a coordinator's GET_PRODUCER_OFFSETS answer
// (CoordinatorGetOrder).
type GetAnswer struct {
	// Tables are the answer's tables in order. Table i lists the buckets
	// Buckets[Tables[i-1].End:Tables[i].End] (from 0 for the first).
	Tables []GetTable
	// Buckets are the answer's buckets in order, each given as the index of
	// the bucket whose offset the answer carries in the concatenation of
	// the files given to CoordinatorGetOrder: a bucket held by two files
	// carries the later file's offset.
	Buckets []int
	// Exact is false when a tree bin makes the order unknowable from the
	// model (see CoordinatorGetOrder).
	Exact bool
}

// GetTable is one table of a GetAnswer.
type GetTable struct {
	ID  int64
	End int
}

// CoordinatorGetOrder returns the order in which a Fluss 0.9.1 coordinator
// on JDK 17 lists the tables and buckets of a GET_PRODUCER_OFFSETS answer,
// given the offsets files its producer znode names, in the znode's order,
// each with the buckets it holds in file order (partitions ascending, then
// bucket ids; -1 holes left out). Every bucket's TableID must be its
// file's table_id.
//
// The coordinator (CoordinatorService.getProducerOffsets and the helpers it
// calls) does this, every map a new HashMap<>():
//  1. ProducerOffsetsStore.readOffsets: each file is read into a
//     HashMap<TableBucket, Long> by put, in file order
//     (TableBucketOffsetsJsonSerde), and putAll into one map, file by file;
//     the first putAll sizes that empty map for the first file's buckets;
//  2. ServerRpcMessageUtils.groupOffsetsByTableId: walking that map, one
//     computeIfAbsent per bucket on a HashMap<Long, Map<TableBucket, Long>>
//     keyed by table id, whose new HashMap of the table gets the bucket by
//     put;
//  3. the answer lists the tables as the second map iterates, and each
//     table's buckets as its own map iterates (addTableOffsetsToResponse).
//     With an authorizer, tables are then removed, which leaves the others
//     in their order.
//
// A table without buckets is in no map and so in no answer. Exact is false
// when a tree bin of any of these maps holds two or more keys whose order
// the model does not know (see the package documentation). That takes 9
// or more buckets in one bin of at least 64, which for TableBucket keys
// means many equal hashes: (table t, partition p, bucket b) hashes as
// (t, p+31, b-1) and (t+1, p, b-31) do, so a table whose partition ids
// span a few hundred, or consecutive table ids with hundreds of buckets
// each. The order is then the model's best guess; a coordinator's own
// order then depends on System.identityHashCode and differs between runs.
//
// JDK 12 to 18 run the same HashMap code as JDK 17. JDK 11 sizes a
// non-empty map once per putAll instead of until it fits, which ends at the
// same capacity once the puts are done (unless crowded bins double it as
// well). JDK 19 and later size the first, empty map of step 1 for s
// buckets at the power of two at least ceil(s/0.75) instead of s/0.75+1:
// a smaller map when the first file holds 3·2^k buckets (3, 6, 12, 24, 48,
// ...) and the others add none beyond its threshold, which can change the
// order (coordinatorGet models both).
func CoordinatorGetOrder(files [][]Bucket) GetAnswer {
	return coordinatorGet(files, false).GetAnswer
}

// getCoordination is everything coordinatorGet works out, for tests.
type getCoordination struct {
	GetAnswer
	trees int // tree bins in every map at the end
}

// coordinatorGet is CoordinatorGetOrder for a coordinator on JDK 17, or on
// JDK 19 and later.
//
// Exactness. A tree bin of a file's map, of the grouped map or of a
// table's map leaves its keys' order unknown, and the answer with it. A
// tree bin of the map of all buckets does too, but only where the answer
// can see it: its keys (one run in their bin) reach the grouping in an
// unknown order, which matters when two of them land in one bin of a
// table's map, or when a run is the first sight of two tables that share a
// bin of the grouped map (computeIfAbsent puts the later one first), or of
// the last table of all (whether the grouped map resizes once more).
// Eight tables with consecutive ids and hundreds of buckets each make such
// tree bins whose order the answer never sees.
func coordinatorGet(files [][]Bucket, jdk19 bool) getCoordination {
	n := 0
	for _, f := range files {
		n += len(f)
	}
	tables, fileTable := numberTables(files)

	// Step 1. Every bucket is keyed by its index among all the buckets
	// given, or, when an earlier one is equal to it (a table in two
	// files), by that one's: Map[int32] then compares keys as Java
	// compares TableBuckets, with small nodes.
	exact := true
	trees := 0
	all := Map[int32]{ceilPresize: jdk19, nodes: make([]node[int32], 0, n)}
	var f Map[int32]
	tableOf := make([]int32, n) // each bucket's table number
	var first map[Bucket]int32  // the first index of a bucket of a table in two files
	index := int32(0)
	for fi, file := range files {
		f = Map[int32]{nodes: f.nodes[:0]}
		t := fileTable[fi]
		for _, b := range file {
			k, key := b.key(), index
			if tables[t].files > 1 {
				if first == nil {
					first = make(map[Bucket]int32)
				}
				if i, ok := first[k]; ok {
					key = i
				} else {
					first[k] = index
				}
			}
			f.putSpread(key, Spread(TableBucketHash(k)), index, 0)
			tableOf[index] = int32(t)
			index++
		}
		exact = exact && f.Exact()
		trees += f.TreeBins()
		all.PutAll(&f)
	}
	trees += all.TreeBins()
	runs := all.markTreeRuns()

	// Step 2, groupOffsetsByTableId: the grouped map by computeIfAbsent,
	// and each table's own map, which gets its buckets by put in the order
	// of all.
	for i := range all.nodes {
		tables[tableOf[all.nodes[i].value]].buckets++
	}
	inner := make([]Map[int32], len(tables))
	backing := make([]node[int32], 0, len(all.nodes))
	for t := range tables {
		c := tables[t].buckets
		inner[t].nodes = backing[len(backing) : len(backing) : len(backing)+c]
		backing = backing[:len(backing)+c]
	}
	var byTable Map[int64] // values: table numbers
	var fresh [][]int64    // the tables each run sees first
	if runs > 0 {
		fresh = make([][]int64, runs+1)
	}
	var last int32 // the run of the last bucket
	for _, b := range all.bins {
		for j := b.head; j != 0; j = all.nodes[j-1].next {
			nd := &all.nodes[j-1]
			t := tableOf[nd.value]
			id := tables[t].id
			byTable.computeIfAbsent(id, Spread(LongHash(id)), t)
			if inner[t].Len() == 0 && runs > 0 {
				fresh[nd.run] = append(fresh[nd.run], id)
			}
			inner[t].putSpread(nd.key, nd.spread, nd.value, nd.run)
			last = nd.run
		}
	}
	exact = exact && byTable.Exact()
	trees += byTable.TreeBins()
	for r := 1; r <= runs && exact; r++ {
		if len(fresh[r]) < 2 {
			continue
		}
		bins := make(map[int]bool, len(fresh[r]))
		for _, id := range fresh[r] {
			bins[byTable.index(Spread(LongHash(id)))] = true
		}
		if len(bins) < len(fresh[r]) || int(last) == r || byTable.crowded {
			exact = false
		}
	}

	// Step 3: the answer.
	c := getCoordination{GetAnswer: GetAnswer{Buckets: make([]int, 0, all.Len()), Tables: make([]GetTable, 0, byTable.Len())}}
	for _, b := range byTable.bins {
		for j := b.head; j != 0; j = byTable.nodes[j-1].next {
			tn := &byTable.nodes[j-1]
			m := &inner[tn.value]
			exact = exact && m.Exact() && m.runsApart()
			trees += m.TreeBins()
			for _, ib := range m.bins {
				for k := ib.head; k != 0; k = m.nodes[k-1].next {
					c.Buckets = append(c.Buckets, int(m.nodes[k-1].value))
				}
			}
			c.Tables = append(c.Tables, GetTable{ID: tn.key, End: len(c.Buckets)})
		}
	}
	c.Exact = exact
	c.trees = trees
	return c
}

// getTable is what coordinatorGet knows of one table.
type getTable struct {
	id      int64
	files   int // files holding it
	buckets int // distinct buckets
}

// numberTables numbers the tables of files from 0 in order of first
// appearance; fileTable[i] is file i's table's number (0 for a file
// without buckets, which nothing reads).
func numberTables(files [][]Bucket) (tables []getTable, fileTable []int) {
	fileTable = make([]int, len(files))
	byID := make(map[int64]int, len(files))
	for i, f := range files {
		if len(f) == 0 {
			continue
		}
		t, ok := byID[f[0].TableID]
		if !ok {
			t = len(tables)
			byID[f[0].TableID] = t
			tables = append(tables, getTable{id: f[0].TableID})
		}
		tables[t].files++
		fileTable[i] = t
	}
	return tables, fileTable
}

// markTreeRuns gives the tree-ordered keys of each bin (one run per bin,
// see the package documentation) a run number of their own, from 1, and
// returns how many runs there are. A bin with one such key needs none.
func (m *Map[K]) markTreeRuns() int {
	runs := 0
	for _, b := range m.bins {
		n := 0
		for j := b.head; j != 0; j = m.nodes[j-1].next {
			if m.nodes[j-1].tainted {
				n++
			}
		}
		if n < 2 {
			continue
		}
		runs++
		for j := b.head; j != 0; j = m.nodes[j-1].next {
			if m.nodes[j-1].tainted {
				m.nodes[j-1].run = int32(runs)
			}
		}
	}
	return runs
}

// runsApart reports whether the order of m's keys is known although some
// were given in runs of unknown order: no two keys of one run share a bin,
// and no bin of m was ever crowded (a tree, or a doubling below 64 bins),
// since when that happens depends on the order of the keys.
func (m *Map[K]) runsApart() bool {
	any, tree := false, false
	for _, b := range m.bins {
		for j := b.head; j != 0; j = m.nodes[j-1].next {
			tree = tree || m.nodes[j-1].tainted
			r := m.nodes[j-1].run
			if r == 0 {
				continue
			}
			any = true
			for k := m.nodes[j-1].next; k != 0; k = m.nodes[k-1].next {
				if m.nodes[k-1].run == r {
					return false
				}
			}
		}
	}
	return !any || !(m.crowded || tree)
}
