package javaorder

import (
	"slices"
	"testing"
)

// FuzzMap drives the model with arbitrary put/computeIfAbsent sequences over
// keys with deliberately colliding hashes and checks what must hold whatever
// Java's exact order: every key once, each in its own bin, bins ascending,
// the load factor respected, tree-ordered keys adjacent within a bin.
func FuzzMap(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
	f.Add([]byte{0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0x81, 0x91, 0xa1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var m Map[uint16]
		want := map[uint16]bool{}
		hash := func(k uint16) int32 { return int32(k&0x3f) << 6 } // 64 distinct hashes, many keys each
		for i, op := range ops {
			k := uint16(op&0x7f) | uint16(i%4)<<7
			if op&0x80 == 0 {
				before := m.Len()
				m.Put(k, hash(k))
				// computeIfAbsent may leave the map over its threshold; a put
				// that adds a key never does.
				if m.Len() > before && m.Len() > m.Capacity()*3/4 {
					t.Fatalf("after put: %d keys in %d bins", m.Len(), m.Capacity())
				}
			} else {
				m.ComputeIfAbsent(k, hash(k))
			}
			want[k] = true
		}
		if m.Len() != len(want) {
			t.Fatalf("Len %d, want %d", m.Len(), len(want))
		}
		entries := m.Entries()
		if len(entries) != len(want) {
			t.Fatalf("%d entries, want %d", len(entries), len(want))
		}
		seen := map[uint16]bool{}
		runs := map[int]int{} // bin → runs of tree-ordered keys
		for i, e := range entries {
			if seen[e.Key] || !want[e.Key] {
				t.Fatalf("key %d listed twice or never put", e.Key)
			}
			seen[e.Key] = true
			if e.Bin != int(Spread(hash(e.Key))&uint32(m.Capacity()-1)) {
				t.Fatalf("key %d in bin %d", e.Key, e.Bin)
			}
			if i > 0 && entries[i-1].Bin > e.Bin {
				t.Fatalf("bins out of order at %d", i)
			}
			if e.TreeOrdered && (i == 0 || !entries[i-1].TreeOrdered || entries[i-1].Bin != e.Bin) {
				runs[e.Bin]++
			}
		}
		for bin, n := range runs {
			if n > 1 {
				t.Fatalf("bin %d has %d separate runs of tree-ordered keys", bin, n)
			}
		}
		keys := m.Keys()
		if !slices.Equal(keys, func() []uint16 {
			var out []uint16
			for _, e := range entries {
				out = append(out, e.Key)
			}
			return out
		}()) {
			t.Fatal("Keys and Entries disagree")
		}
		if m.Len() > 0 && (m.Capacity() < 16 || m.Capacity()&(m.Capacity()-1) != 0) {
			t.Fatalf("capacity %d", m.Capacity())
		}
		if m.TreeBins() > 0 && m.Exact() {
			t.Fatal("a tree bin with one key cannot exist")
		}
	})
}

// FuzzCoordinatorGetOrder drives the GET model with arbitrary files (tables
// repeated across files, colliding hashes, partitions) and checks what must
// hold whatever Java's order: every bucket answered once, under its table,
// with the last file's offset, each table once (checkGetAnswer), on both
// JDK models.
func FuzzCoordinatorGetOrder(f *testing.F) {
	f.Add([]byte{1, 0, 1, 1, 0x82, 0, 0x81, 5})
	f.Add([]byte{0x80, 64, 0x80, 128, 0x80, 192, 3, 3, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Two bytes a bucket: table (high bit: a new file) and bucket
		// (high bit: partitioned, partition id from bits 5-6).
		var files [][]Bucket
		seen := map[Bucket]bool{}
		for i := 0; i+1 < len(data); i += 2 {
			table := int64(data[i]&0x7f) << (8 * (data[i] & 3))
			if len(files) == 0 || data[i]&0x80 != 0 || files[len(files)-1][0].TableID != table {
				files = append(files, nil)
				clear(seen)
			}
			b := Bucket{TableID: table, BucketID: int32(data[i+1] & 0x1f)}
			if data[i+1]&0x80 != 0 {
				b.Partitioned, b.PartitionID = true, int64(data[i+1]>>5&3)*31
			}
			if seen[b.key()] {
				continue // a file holds a bucket once
			}
			seen[b.key()] = true
			files[len(files)-1] = append(files[len(files)-1], b)
		}
		for _, jdk19 := range []bool{false, true} {
			checkGetAnswer(t, files, coordinatorGet(files, jdk19).GetAnswer)
		}
	})
}
