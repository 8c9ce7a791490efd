package sidecar

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// coordinatorGolden is one answer of testdata/coordinator_get_order.json:
// a real Fluss 0.9.1 coordinator (JDK 17) answering a GET of the snapshot
// whose offsets files, in znode order, are Tables, written by
// compat_test's TestBesideCoordinator/coordinator_order
// (-update-get-golden).
type coordinatorGolden struct {
	Name   string `json:"name"`
	Tables []struct {
		TableID int64 `json:"table_id"`
		Buckets []struct {
			PartitionID  *int64 `json:"partition_id"`
			BucketID     int32  `json:"bucket_id"`
			LogEndOffset int64  `json:"log_end_offset"`
		} `json:"buckets"`
	} `json:"tables"`
	Answer string `json:"answer"`
}

// snapshot returns the golden's producer id and expiration (from its
// answer) and its tables as the registry reads them.
func (g coordinatorGolden) snapshot(t testing.TB) (producer.Snapshot, []byte) {
	t.Helper()
	body, err := hex.DecodeString(g.Answer)
	if err != nil {
		t.Fatal(err)
	}
	var resp messages.GetProducerOffsetsResponse
	if err := proto.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	s := producer.Snapshot{ProducerID: resp.GetProducerId(), ExpirationTime: resp.GetExpirationTime()}
	for _, gt := range g.Tables {
		tab := offsets.TableOffsets{TableID: gt.TableID}
		for _, gb := range gt.Buckets {
			b := offsets.BucketOffset{BucketID: gb.BucketID, LogEndOffset: gb.LogEndOffset}
			if gb.PartitionID != nil {
				b.Partitioned, b.PartitionID = true, *gb.PartitionID
			}
			tab.Buckets = append(tab.Buckets, b)
		}
		s.Tables = append(s.Tables, tab)
	}
	return s, body
}

func loadCoordinatorGoldens(t testing.TB) []coordinatorGolden {
	t.Helper()
	data, err := os.ReadFile("testdata/coordinator_get_order.json")
	if err != nil {
		t.Fatal(err)
	}
	var gs []coordinatorGolden
	if err := json.Unmarshal(data, &gs); err != nil {
		t.Fatal(err)
	}
	if len(gs) < 7 {
		t.Fatalf("%d golden answers", len(gs))
	}
	return gs
}

// TestCoordinatorOrderGolden: for every snapshot a real coordinator
// answered, the sidecar's answer is byte for byte the coordinator's: built
// by coordinatorAnswer and appendGetResponse, and served by the quick path
// (twice: built, then from the memo) and by the handler, from a store
// holding the snapshot's files in its znode order. A store writes a table
// once per znode, as a coordinator does: the golden znode that names a
// table twice (written by hand in compat_test) is checked the first way
// only.
func TestCoordinatorOrderGolden(t *testing.T) {
	for _, g := range loadCoordinatorGoldens(t) {
		t.Run(g.Name, func(t *testing.T) {
			snap, want := g.snapshot(t)
			answer := snap
			answer.Tables = coordinatorAnswer(snap.Tables)
			if got := appendGetResponse(nil, answer, nil); !bytes.Equal(got, want) {
				t.Fatalf("coordinatorAnswer:\n got %x\nwant %x", got, want)
			}
			seen := map[int64]bool{}
			for _, tab := range snap.Tables {
				if seen[tab.TableID] {
					return
				}
				seen[tab.TableID] = true
			}
			store := &cachedMem{Store: memstore.New(memstore.Options{})}
			var zn offsets.Snapshot
			zn.ExpirationTime = snap.ExpirationTime
			for _, tab := range snap.Tables {
				path, err := store.WriteOffsets(t.Context(), snap.ProducerID, tab)
				if err != nil {
					t.Fatal(err)
				}
				zn.Tables = append(zn.Tables, offsets.FileRef{TableID: tab.TableID, OffsetsPath: path})
			}
			if created, err := store.CreateSnapshot(t.Context(), snap.ProducerID, zn); err != nil || !created {
				t.Fatalf("create: %v %v", created, err)
			}
			snaps, files := storage.CheckedSnapshots(store), storage.CheckedFilesAndOrphans(store)
			reg, err := producer.New(producer.Config{Snapshots: snaps, Files: files, FastPaths: storage.FastPathsOf(snaps, files)})
			if err != nil {
				t.Fatal(err)
			}
			sc, err := New(Config{Registry: reg, Advertised: []config.Listener{{Name: "FLUSS", Host: "127.0.0.1", Port: 1}}})
			if err != nil {
				t.Fatal(err)
			}
			quick, slow := dialServer(t, sc.Mux()), dialServer(t, sc.Mux().WithoutQuick())
			for pass := range 2 {
				a, b := getBoth(t, t.Context(), quick, slow, snap.ProducerID)
				for name, r := range map[string]wire.Response{"quick": a, "handler": b} {
					if r.Type != wire.ResponseSuccess || !bytes.Equal(r.Body, want) {
						t.Errorf("pass %d, %s: %v\n got %x\nwant %x", pass, name, r.Type, r.Body, want)
					}
				}
			}
		})
	}
}

// TestCoordinatorAnswer pins coordinatorAnswer's rules on small snapshots:
// the coordinator's order, tables without buckets left out, a table named
// twice merged with the later file's offsets, and keptTables filtering
// after ordering.
func TestCoordinatorAnswer(t *testing.T) {
	b := func(bucket int32, leo int64) offsets.BucketOffset {
		return offsets.BucketOffset{BucketID: bucket, LogEndOffset: leo}
	}
	pb := func(partition int64, bucket int32, leo int64) offsets.BucketOffset {
		return offsets.BucketOffset{Partitioned: true, PartitionID: partition, BucketID: bucket, LogEndOffset: leo}
	}
	tab := func(id int64, buckets ...offsets.BucketOffset) offsets.TableOffsets {
		return offsets.TableOffsets{TableID: id, Buckets: buckets}
	}
	cases := []struct {
		name string
		in   []offsets.TableOffsets
		keep func(int64) bool
		want []offsets.TableOffsets
	}{
		{"nothing", nil, nil, nil},
		{"only empty tables", []offsets.TableOffsets{tab(4), tab(5)}, nil, nil},
		// Table 1's buckets 0, 1, 2 land in bins 0, 15 and 14 of its map.
		{"one table", []offsets.TableOffsets{tab(1, b(0, 10), b(1, 11), b(2, 12))}, nil,
			[]offsets.TableOffsets{tab(1, b(0, 10), b(2, 12), b(1, 11))}},
		// Tables 2 and 1 are alone in bins 2 and 1 of the grouped map.
		{"tables by bin", []offsets.TableOffsets{tab(2, b(0, 20)), tab(6), tab(1, b(0, 10))}, nil,
			[]offsets.TableOffsets{tab(1, b(0, 10)), tab(2, b(0, 20))}},
		// Tables 0 and 16 share bin 0; computeIfAbsent puts the table met
		// later first.
		{"computeIfAbsent head", []offsets.TableOffsets{tab(0, b(0, 1)), tab(16, b(0, 2))}, nil,
			[]offsets.TableOffsets{tab(16, b(0, 2)), tab(0, b(0, 1))}},
		{"a table twice", []offsets.TableOffsets{tab(5, b(3, 1), b(4, 2)), tab(5, b(3, 9))}, nil,
			[]offsets.TableOffsets{tab(5, b(4, 2), b(3, 9))}},
		// Hashes 32674+31b+p land in bins 9, 8 and 10 of 16.
		{"partitions", []offsets.TableOffsets{tab(3, pb(7, 0, 70), pb(7, 1, 71), pb(8, 0, 80))}, nil,
			[]offsets.TableOffsets{tab(3, pb(7, 1, 71), pb(7, 0, 70), pb(8, 0, 80))}},
		{"filtered after ordering", []offsets.TableOffsets{tab(0, b(0, 1)), tab(16, b(0, 2)), tab(3, b(0, 3))},
			func(id int64) bool { return id != 16 },
			[]offsets.TableOffsets{tab(0, b(0, 1)), tab(3, b(0, 3))}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := cloneTables(c.in)
			got := keptTables(coordinatorAnswer(in), c.keep)
			if !tablesEqual(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			if !tablesEqual(in, c.in) {
				t.Fatalf("the input changed: %v", in)
			}
		})
	}
}

func cloneTables(ts []offsets.TableOffsets) []offsets.TableOffsets {
	out := slices.Clone(ts)
	for i := range out {
		out[i].Buckets = slices.Clone(out[i].Buckets)
	}
	return out
}

func tablesEqual(a, b []offsets.TableOffsets) bool {
	return slices.EqualFunc(a, b, func(x, y offsets.TableOffsets) bool {
		return x.TableID == y.TableID && slices.Equal(x.Buckets, y.Buckets)
	})
}

// FuzzCoordinatorAnswer: whatever the snapshot, the answer holds every
// bucket once, under its table, with the offset of the last file holding
// it, each table once and with buckets, and is encoded as the handler's
// message marshals.
func FuzzCoordinatorAnswer(f *testing.F) {
	f.Add([]byte{1, 0, 0, 1, 1, 2, 0, 16, 3})
	f.Add([]byte{0x85, 7, 1, 0x85, 7, 2, 0x86, 8, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Three bytes a bucket: table (high bit: a new file), bucket,
		// offset; partitioned when the bucket byte's high bit is set.
		var tables []offsets.TableOffsets
		for i := 0; i+2 < len(data); i += 3 {
			id := int64(data[i] & 0x7f)
			if len(tables) == 0 || data[i]&0x80 != 0 || tables[len(tables)-1].TableID != id {
				tables = append(tables, offsets.TableOffsets{TableID: id})
			}
			bk := offsets.BucketOffset{BucketID: int32(data[i+1] & 0x3f), LogEndOffset: int64(data[i+2])}
			if data[i+1]&0x80 != 0 {
				bk.Partitioned, bk.PartitionID = true, int64(data[i+1]>>6&1)
			}
			t := &tables[len(tables)-1]
			if slices.ContainsFunc(t.Buckets, func(o offsets.BucketOffset) bool {
				return o.BucketID == bk.BucketID && o.Partitioned == bk.Partitioned && o.PartitionID == bk.PartitionID
			}) {
				continue // a file holds a bucket once
			}
			t.Buckets = append(t.Buckets, bk)
		}
		type key struct {
			table       int64
			partitioned bool
			partition   int64
			bucket      int32
		}
		want := map[key]int64{}
		for _, t := range tables {
			for _, b := range t.Buckets {
				want[key{t.TableID, b.Partitioned, b.PartitionID, b.BucketID}] = b.LogEndOffset
			}
		}
		got := coordinatorAnswer(tables)
		seen := map[int64]bool{}
		n := 0
		for _, tab := range got {
			if seen[tab.TableID] || len(tab.Buckets) == 0 {
				t.Fatalf("table %d twice or empty in %v", tab.TableID, got)
			}
			seen[tab.TableID] = true
			for _, b := range tab.Buckets {
				k := key{tab.TableID, b.Partitioned, b.PartitionID, b.BucketID}
				if leo, ok := want[k]; !ok || leo != b.LogEndOffset {
					t.Fatalf("answer holds %+v at %d, want %d (present %v)", k, b.LogEndOffset, leo, ok)
				}
				delete(want, k)
				n++
			}
		}
		if len(want) != 0 {
			t.Fatalf("buckets missing from the answer: %v", want)
		}
		snap := producer.Snapshot{ProducerID: "p", ExpirationTime: int64(n), Tables: got}
		if a, b := appendGetResponse(nil, snap, nil), handlerBody(t, snap, nil); !bytes.Equal(a, b) {
			t.Fatalf("encoded %x, the handler's message %x", a, b)
		}
	})
}

// BenchmarkCoordinatorAnswer is the cost of working out the coordinator's
// order once per cached snapshot (the memo keeps the result), for a
// snapshot as in compat_test: 8 tables, 112 buckets, and for 1,000 and
// 100,000 buckets.
func BenchmarkCoordinatorAnswer(b *testing.B) {
	var many []offsets.TableOffsets
	for _, g := range loadCoordinatorGoldens(b) {
		if g.Name == "many-0" {
			s, _ := g.snapshot(b)
			many = s.Tables
		}
	}
	wide := func(tables, buckets int) []offsets.TableOffsets {
		var out []offsets.TableOffsets
		for i := range tables {
			t := offsets.TableOffsets{TableID: int64(i)}
			for k := range buckets {
				t.Buckets = append(t.Buckets, offsets.BucketOffset{BucketID: int32(k), LogEndOffset: int64(k)})
			}
			out = append(out, t)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		tables []offsets.TableOffsets
	}{{"compat-many", many}, {"4x250", wide(4, 250)}, {"100x1000", wide(100, 1000)}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				coordinatorAnswer(c.tables)
			}
		})
	}
}
