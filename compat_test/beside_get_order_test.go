package compat

import (
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

var updateGetGolden = flag.Bool("update-get-golden", false,
	"rewrite "+getGoldenPath+" from the real coordinator's GET answers (TestBesideCoordinator/coordinator_order)")

// getGoldenPath holds GET answers of a real 0.9.1 coordinator with the
// snapshots they answer, for the sidecar's unit tests (package sidecar,
// TestCoordinatorOrderGolden), which need no JVM.
const getGoldenPath = "../sidecar/testdata/coordinator_get_order.json"

// GetGolden is one line of getGoldenPath.
type GetGolden struct {
	Name string `json:"name"`
	// Tables are the snapshot's offsets files in the znode's order, each as
	// the sidecar reads it (flussjson.DecodeTableOffsets).
	Tables []GoldenTable `json:"tables"`
	// Answer is the coordinator's GET answer body, in hex.
	Answer string `json:"answer"`
}

// GoldenTable is one offsets file of a GetGolden.
type GoldenTable struct {
	TableID int64          `json:"table_id"`
	Buckets []GoldenBucket `json:"buckets"`
}

// GoldenBucket is one bucket of a GoldenTable; PartitionID is absent for a
// table without partitions.
type GoldenBucket struct {
	PartitionID  *int64 `json:"partition_id,omitempty"`
	BucketID     int32  `json:"bucket_id"`
	LogEndOffset int64  `json:"log_end_offset"`
}

// besideGetOrder GETs snapshots whose answers list many tables and buckets
// through the sidecar and the coordinator and requires the same bytes:
// registered through the coordinator, and one written by hand that names a
// table twice and a table whose file holds only holes, as no register
// writes. With -update-get-golden it keeps the coordinator's answers in
// getGoldenPath.
func besideGetOrder(t *testing.T, b *beside, sc, coord *wire.Client, rt realTables) {
	var goldens []GetGolden
	record := func(name, id string, body []byte) {
		t.Helper()
		z, _, _, ok := b.readZnode(t, id)
		if !ok {
			t.Fatalf("%s: no znode", id)
		}
		g := GetGolden{Name: name, Answer: hex.EncodeToString(body)}
		for _, tab := range z.Tables {
			data, err := os.ReadFile(localPath(t, tab.OffsetsPath))
			if err != nil {
				t.Fatal(err)
			}
			to, err := flussjson.DecodeTableOffsets(data)
			if err != nil {
				t.Fatalf("%s: %v", tab.OffsetsPath, err)
			}
			gt := GoldenTable{TableID: to.TableID, Buckets: []GoldenBucket{}}
			for _, bk := range to.Buckets {
				gb := GoldenBucket{BucketID: bk.BucketID, LogEndOffset: bk.LogEndOffset}
				if bk.Partitioned {
					gb.PartitionID = &bk.PartitionID
				}
				gt.Buckets = append(gt.Buckets, gb)
			}
			g.Tables = append(g.Tables, gt)
		}
		goldens = append(goldens, g)
	}
	get := func(name, id string) {
		t.Helper()
		rs := callMsg(t, sc, messages.KeyGetProducerOffsets, getReq(id))
		rc := callMsg(t, coord, messages.KeyGetProducerOffsets, getReq(id))
		sameGet(t, name, rs, rc)
		strict(t, messages.KeyGetProducerOffsets, rc)
		record(name, id, rc.Body)
	}

	var allEvents, allClicks, manyTables []bo
	for bk := range int32(logBuckets) {
		allEvents = append(allEvents, bo{rt.events, -1, bk, int64(bk) * 7})
	}
	for _, p := range rt.partitions {
		for bk := range int32(partBuckets) {
			allClicks = append(allClicks, bo{rt.clicks, p, bk, p*100 + int64(bk)})
		}
	}
	for i := range int64(40) {
		for bk := range int32(1 + i%3) {
			manyTables = append(manyTables, bo{1000 + 13*i, -1, bk, i})
		}
	}
	for _, c := range []struct {
		name string
		offs []bo
	}{
		{"many-0", manyOffsets(rt, 0)},
		{"many-1", manyOffsets(rt, 1)},
		{"many-2", manyOffsets(rt, 2)},
		{"events-64-buckets", allEvents},
		{"clicks-3-partitions", allClicks},
		{"40-tables", manyTables},
	} {
		id := "order-" + c.name
		register(t, coord, id, c.offs, nil)
		get(c.name, id)
		mustSucceed(t, "DELETE "+id, callMsg(t, coord, messages.KeyDeleteProducerOffsets, deleteReq(id)))
	}

	// Written by hand: events twice (buckets 5-9 in both: the later file's
	// offsets), audit with holes only, an unused id, in that znode order.
	const id = "order-by-hand"
	files := []offsets.TableOffsets{
		{TableID: rt.events, ByBucket: []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{TableID: rt.audit, ByBucket: []int64{-1, -1, -1}},
		{TableID: unusedTableIDs[2], Buckets: []offsets.BucketOffset{{BucketID: 3, LogEndOffset: 33}}},
		{TableID: rt.events, ByBucket: []int64{-1, -1, -1, -1, -1, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120}},
	}
	// flussjson.EncodeSnapshot writes a table once, as a coordinator's map
	// does: this znode is written field by field.
	type ref struct {
		TableID     int64  `json:"table_id"`
		OffsetsPath string `json:"offsets_path"`
	}
	znode := struct {
		Version        int   `json:"version"`
		ExpirationTime int64 `json:"expiration_time"`
		Tables         []ref `json:"tables"`
	}{Version: 1, ExpirationTime: 1735538268000 + 365*24*3600*1000}
	for i, f := range files {
		data, err := flussjson.EncodeTableOffsets(f)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(b.remoteDir, "producers", id, fmt.Sprint(f.TableID), fmt.Sprintf("00000000-0000-4000-8000-%012d.offsets", i))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		znode.Tables = append(znode.Tables, ref{TableID: f.TableID, OffsetsPath: "file:" + path})
	}
	data, err := json.Marshal(znode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.zk.Create(b.znodePath(id), data, 0, gozk.WorldACL(gozk.PermAll)); err != nil {
		t.Fatal(err)
	}
	get("by-hand-table-twice", id)
	mustSucceed(t, "DELETE "+id, callMsg(t, coord, messages.KeyDeleteProducerOffsets, deleteReq(id)))

	if !*updateGetGolden {
		return
	}
	out, err := json.MarshalIndent(goldens, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(getGoldenPath, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d answers to %s", len(goldens), getGoldenPath)
}
