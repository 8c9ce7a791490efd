package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/authz/tables"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// handlerBody is what the GET handler's message marshals to for tables in
// the order given, the reference appendGetResponse must equal.
func handlerBody(t testing.TB, snap producer.Snapshot, keep func(int64) bool) []byte {
	t.Helper()
	resp := &messages.GetProducerOffsetsResponse{
		ProducerId:     proto.String(snap.ProducerID),
		ExpirationTime: proto.Int64(snap.ExpirationTime),
		TableOffsets:   tableOffsetsToProto(keptTables(snap.Tables, keep)),
	}
	b, err := proto.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func randomSnapshot(rnd *rand.Rand) producer.Snapshot {
	big := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, 127, 128, 1 << 35}
	pick := func() int64 {
		if rnd.IntN(3) == 0 {
			return big[rnd.IntN(len(big))]
		}
		return rnd.Int64N(1 << 40)
	}
	s := producer.Snapshot{ProducerID: "p-" + strconv.Itoa(rnd.IntN(1e6)), ExpirationTime: pick()}
	for range rnd.IntN(5) {
		t := offsets.TableOffsets{TableID: pick()}
		for range rnd.IntN(6) {
			b := offsets.BucketOffset{BucketID: int32(pick()), LogEndOffset: pick()}
			if rnd.IntN(2) == 0 {
				b.Partitioned, b.PartitionID = true, pick()
			}
			t.Buckets = append(t.Buckets, b)
		}
		s.Tables = append(s.Tables, t)
	}
	return s
}

func TestAppendGetResponseMatchesMarshal(t *testing.T) {
	even := func(id int64) bool { return id%2 == 0 }
	tests := []struct {
		name string
		snap producer.Snapshot
		keep func(int64) bool
	}{
		{name: "no tables", snap: producer.Snapshot{ProducerID: "p", ExpirationTime: 1735538268000}},
		{name: "table without buckets", snap: producer.Snapshot{ProducerID: "p", Tables: []offsets.TableOffsets{{TableID: 7}}}},
		{name: "partitioned and not", snap: producer.Snapshot{ProducerID: "job-1", ExpirationTime: 5, Tables: []offsets.TableOffsets{
			{TableID: 1, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: 10}, {BucketID: 1, LogEndOffset: 0}}},
			{TableID: 2, Buckets: []offsets.BucketOffset{{Partitioned: true, PartitionID: 0, BucketID: 3, LogEndOffset: 300}}},
		}}},
		{name: "negative values", snap: producer.Snapshot{ProducerID: "n", ExpirationTime: -1, Tables: []offsets.TableOffsets{
			{TableID: -5, Buckets: []offsets.BucketOffset{{BucketID: -1, LogEndOffset: -2, Partitioned: true, PartitionID: -3}}},
		}}},
		{name: "extremes", snap: producer.Snapshot{ProducerID: strings.Repeat("x", 200), ExpirationTime: math.MaxInt64, Tables: []offsets.TableOffsets{
			{TableID: math.MinInt64, Buckets: []offsets.BucketOffset{{BucketID: math.MaxInt32, LogEndOffset: math.MaxInt64}, {BucketID: math.MinInt32, LogEndOffset: math.MinInt64}}},
		}}},
		{name: "filtered", keep: even, snap: producer.Snapshot{ProducerID: "f", Tables: []offsets.TableOffsets{
			{TableID: 1, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: 1}}},
			{TableID: 2, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: 2}}},
		}}},
		{name: "all filtered", keep: func(int64) bool { return false }, snap: producer.Snapshot{ProducerID: "f", Tables: []offsets.TableOffsets{{TableID: 1}}}},
	}
	rnd := rand.New(rand.NewPCG(7, 11))
	for i := range 300 {
		var keep func(int64) bool
		if i%3 == 0 {
			keep = even
		}
		tests = append(tests, struct {
			name string
			snap producer.Snapshot
			keep func(int64) bool
		}{name: fmt.Sprintf("random %d", i), snap: randomSnapshot(rnd), keep: keep})
	}
	for _, tt := range tests {
		want := handlerBody(t, tt.snap, tt.keep)
		prefix := []byte("frame header")
		got := appendGetResponse(append([]byte(nil), prefix...), tt.snap, tt.keep)
		if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
			t.Fatalf("%s: appendGetResponse\n got %x\nwant %x", tt.name, got[len(prefix):], want)
		}
	}
}

func TestGetRequestID(t *testing.T) {
	tag := func(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(tag(num, protowire.BytesType), s)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name   string
		body   []byte
		wantID string
		wantOK bool
	}{
		{name: "as clients send it", body: str(1, "job-7"), wantID: "job-7", wantOK: true},
		{name: "empty id", body: str(1, ""), wantID: "", wantOK: true}, // the registry refuses it
		{name: "empty body", body: nil},
		{name: "field twice", body: cat(str(1, "a"), str(1, "b"))},
		{name: "unknown field after", body: cat(str(1, "a"), str(2, "b"))},
		{name: "unknown field before", body: cat(str(2, "b"), str(1, "a"))},
		{name: "varint instead of bytes", body: protowire.AppendVarint(tag(1, protowire.VarintType), 5)},
		{name: "truncated length", body: cat(tag(1, protowire.BytesType), []byte{10, 'a'})},
		{name: "bad tag", body: []byte{0xff}},
		// The generated decoder reads it as field 1 as well.
		{name: "non-minimal tag", body: cat([]byte{0x8a, 0x00}, []byte{1, 'a'}), wantID: "a", wantOK: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := getRequestID(tt.body)
			if ok != tt.wantOK || string(id) != tt.wantID {
				t.Fatalf("got %q %v, want %q %v", id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
}

// FuzzGetRequestID: whatever getRequestID accepts, the generated decoder
// reads as a request with the same id and nothing else, so the handler
// would have served exactly this request.
func FuzzGetRequestID(f *testing.F) {
	f.Add(protowire.AppendString([]byte{0x0a}, "job-1"))
	f.Add([]byte{0x0a, 0x00})
	f.Add([]byte{0x8a, 0x00, 0x01, 'a'})
	f.Add([]byte{0x0a, 0x01, 'a', 0x12, 0x00})
	f.Fuzz(func(t *testing.T, body []byte) {
		id, ok := getRequestID(body)
		if !ok {
			return
		}
		var req messages.GetProducerOffsetsRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Fatalf("accepted %x, which the decoder refuses: %v", body, err)
		}
		if req.GetProducerId() != string(id) {
			t.Fatalf("accepted id %q, the decoder reads %q", id, req.GetProducerId())
		}
		if len(req.ProtoReflect().GetUnknown()) != 0 {
			t.Fatalf("accepted %x, which holds unknown fields", body)
		}
	})
}

// cachedMem is a memstore that also answers the registry's cache lookups,
// as snapcache does, counting the snapshot lookups that it answered.
type cachedMem struct {
	*memstore.Store
	hits atomic.Int64
}

// The token is the znode's creation zxid and version: memstore gives each
// state its own pair.
func (c *cachedMem) CachedSnapshot(id string) (offsets.Snapshot, uint64, bool, bool) {
	s, inc, found, err := c.GetSnapshot(context.Background(), id)
	if err != nil {
		return offsets.Snapshot{}, 0, false, false
	}
	c.hits.Add(1)
	return s, uint64(inc.Czxid)<<32 | uint64(uint32(inc.Version)), found, true
}

func (c *cachedMem) HoldsSnapshot(string) bool { return true }

func (c *cachedMem) CachedOffsets(path string) (offsets.TableOffsets, bool) {
	t, err := c.ReadOffsets(context.Background(), path)
	return t, err == nil
}

// evenTables: tables below 100 exist; READ is allowed on even ones, WRITE
// on all.
type evenTables struct{}

func (evenTables) Lookup(id int64) (tables.Path, bool) {
	return tables.Path{Database: "db", Table: "t" + strconv.FormatInt(id, 10)}, id >= 0 && id < 100
}

func (evenTables) Authorize(s *wire.Session, op authz.Operation, r authz.Resource) error {
	n, _ := strconv.Atoi(strings.TrimPrefix(r.Name, "db.t"))
	if op == authz.OpRead && n%2 == 1 {
		return authz.DenialError(authz.User("u"), op, r)
	}
	return nil
}

// TestQuickGetAnswersAsTheHandler serves one registry twice, with the Quick
// hook and without it, and checks that every GET gets the same bytes from
// both: found, absent, filtered by authorization, and refused.
func TestQuickGetAnswersAsTheHandler(t *testing.T) {
	for _, authorize := range []bool{false, true} {
		t.Run(fmt.Sprintf("authorization=%v", authorize), func(t *testing.T) {
			store := &cachedMem{Store: memstore.New(memstore.Options{})}
			snaps, files := storage.CheckedSnapshots(store), storage.CheckedFilesAndOrphans(store)
			reg, err := producer.New(producer.Config{Snapshots: snaps, Files: files, FastPaths: storage.FastPathsOf(snaps, files)})
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Registry: reg, Advertised: []config.Listener{{Name: "FLUSS", Host: "127.0.0.1", Port: 1}}}
			if authorize {
				cfg.Authorizer, cfg.Tables = evenTables{}, evenTables{}
			}
			sc, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			quick := dialServer(t, sc.Mux())
			slow := dialServer(t, sc.Mux().WithoutQuick())
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			rnd := rand.New(rand.NewPCG(3, 5))
			ids := []string{"absent", "", "bad id!", strings.Repeat("y", 300)}
			for i := range 40 {
				id := fmt.Sprintf("p%d", i)
				req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id)}
				for _, table := range rnd.Perm(100)[:rnd.IntN(4)] {
					tb := &messages.PbProducerTableOffsets{TableId: proto.Int64(int64(table))}
					partitioned := rnd.IntN(2) == 0
					for bucket := range rnd.IntN(4) + 1 {
						b := &messages.PbBucketOffset{BucketId: proto.Int32(int32(bucket)), LogEndOffset: proto.Int64(rnd.Int64N(1 << 40))}
						if partitioned {
							b.PartitionId = proto.Int64(rnd.Int64N(9))
						}
						tb.BucketOffsets = append(tb.BucketOffsets, b)
					}
					req.TableOffsets = append(req.TableOffsets, tb)
				}
				resp := &messages.RegisterProducerOffsetsResponse{}
				if err := slow.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil || resp.GetResult() != 0 {
					t.Fatalf("register %s: %v %v", id, err, resp)
				}
				ids = append(ids, id)
			}
			// Twice: the second pass is answered from the memo, as bytes
			// without authorization, as ordered tables with it.
			// The memo is direct-mapped: in the second pass an id whose
			// slot another id holds is built (and stored) again. Replay
			// the pass on the slots as the first pass left them.
			var memoMisses int64
			countMisses := func() {
				holder := map[*atomic.Pointer[memoAnswer]]string{}
				for _, id := range ids[4:] { // the registered ones
					slot := sc.memo.slot(id)
					h, seen := holder[slot]
					if !seen {
						if a := slot.Load(); a != nil {
							h = a.id
						}
					}
					if h != id {
						memoMisses++
					}
					holder[slot] = id
				}
			}
			for pass := range 2 {
				if pass == 1 {
					countMisses()
				}
				before := store.hits.Load()
				for _, id := range ids {
					a, b := getBoth(t, ctx, quick, slow, id)
					if a.Type != b.Type || !bytes.Equal(a.Body, b.Body) {
						t.Fatalf("pass %d, GET %.20q: quick %v %x, handler %v %x", pass, id, a.Type, a.Body, b.Type, b.Body)
					}
				}
				// Every valid id went through Quick (40 registered, one
				// absent): one lookup each, and one more to build a found
				// answer not yet in the memo. The slow server has no Quick.
				want := int64(81)
				if pass == 1 {
					want = 41 + memoMisses
				}
				if got := store.hits.Load() - before; got != want {
					t.Fatalf("pass %d: Quick looked up %d snapshots, want %d", pass, got, want)
				}
			}

			// A snapshot replaced in place (expired, so a register
			// replaces it) or deleted and registered again is a new state:
			// the memo must not answer with the old one.
			register := func(id string, ttl int64, off int64) {
				t.Helper()
				req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TtlMs: proto.Int64(ttl),
					TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(2), BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(off)}}}}}
				resp := &messages.RegisterProducerOffsetsResponse{}
				if err := slow.Call(ctx, messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil || resp.GetResult() != 0 {
					t.Fatalf("register %s: %v %v", id, err, resp)
				}
			}
			check := func(id string, off int64) {
				t.Helper()
				for range 2 {
					a, b := getBoth(t, ctx, quick, slow, id)
					got := &messages.GetProducerOffsetsResponse{}
					if err := proto.Unmarshal(a.Body, got); err != nil || !bytes.Equal(a.Body, b.Body) ||
						got.TableOffsets[0].BucketOffsets[0].GetLogEndOffset() != off {
						t.Fatalf("GET %s: quick %x, handler %x, want offset %d", id, a.Body, b.Body, off)
					}
				}
			}
			register("changing", -1, 1) // born expired
			check("changing", 1)
			register("changing", 60000, 2) // replaces the expired one in place
			check("changing", 2)
			del := &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String("changing")}
			if err := slow.Call(ctx, messages.KeyDeleteProducerOffsets, 0, del, &messages.DeleteProducerOffsetsResponse{}); err != nil {
				t.Fatal(err)
			}
			if a, _ := getBoth(t, ctx, quick, slow, "changing"); len(a.Body) != 0 {
				t.Fatalf("GET after delete: %x, want an empty answer", a.Body)
			}
			register("changing", 60000, 3)
			check("changing", 3)
		})
	}
}

// TestGetLeavesOutTablesWithoutBuckets: a table whose offsets file holds no
// bucket (a coordinator writes one of holes only for log end offsets of -1)
// gets no entry in a GET answer, as a coordinator answers, on the quick
// path and the handler's, with and without authorization; the tables
// around it keep their order.
func TestGetLeavesOutTablesWithoutBuckets(t *testing.T) {
	for _, authorize := range []bool{false, true} {
		t.Run(fmt.Sprintf("authorization=%v", authorize), func(t *testing.T) {
			ctx := t.Context()
			store := &cachedMem{Store: memstore.New(memstore.Options{})}
			snaps, files := storage.CheckedSnapshots(store), storage.CheckedFilesAndOrphans(store)
			reg, err := producer.New(producer.Config{Snapshots: snaps, Files: files, FastPaths: storage.FastPathsOf(snaps, files)})
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Registry: reg, Advertised: []config.Listener{{Name: "FLUSS", Host: "127.0.0.1", Port: 1}}}
			if authorize {
				cfg.Authorizer, cfg.Tables = evenTables{}, evenTables{}
			}
			sc, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			const id = "holes"
			var snap offsets.Snapshot
			snap.ExpirationTime = 1735538268000
			for _, tb := range []offsets.TableOffsets{
				{TableID: 4, Buckets: []offsets.BucketOffset{{BucketID: 1, LogEndOffset: 7}}},
				{TableID: 6},
				{TableID: 8, Buckets: []offsets.BucketOffset{{Partitioned: true, PartitionID: 3, BucketID: 0, LogEndOffset: 9}}},
			} {
				path, err := store.WriteOffsets(ctx, id, tb)
				if err != nil {
					t.Fatal(err)
				}
				snap.Tables = append(snap.Tables, offsets.FileRef{TableID: tb.TableID, OffsetsPath: path})
			}
			if created, err := store.CreateSnapshot(ctx, id, snap); err != nil || !created {
				t.Fatalf("create: %v %v", created, err)
			}
			want, err := proto.Marshal(&messages.GetProducerOffsetsResponse{
				ProducerId: proto.String(id), ExpirationTime: proto.Int64(snap.ExpirationTime),
				TableOffsets: []*messages.PbProducerTableOffsets{
					{TableId: proto.Int64(4), BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(1), LogEndOffset: proto.Int64(7)}}},
					{TableId: proto.Int64(8), BucketOffsets: []*messages.PbBucketOffset{{PartitionId: proto.Int64(3), BucketId: proto.Int32(0), LogEndOffset: proto.Int64(9)}}},
				}})
			if err != nil {
				t.Fatal(err)
			}
			a, b := getBoth(t, ctx, dialServer(t, sc.Mux()), dialServer(t, sc.Mux().WithoutQuick()), id)
			for name, r := range map[string]wire.Response{"quick": a, "handler": b} {
				if r.Type != wire.ResponseSuccess || !bytes.Equal(r.Body, want) {
					t.Errorf("%s: answer %v %x, want %x", name, r.Type, r.Body, want)
				}
			}
		})
	}
}

// getBoth GETs id from the server with Quick and from the one without.
func getBoth(t *testing.T, ctx context.Context, quick, slow *wire.Client, id string) (wire.Response, wire.Response) {
	t.Helper()
	body, _ := proto.Marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)})
	a, err := quick.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := slow.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, body)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func TestGetMemo(t *testing.T) {
	m := newGetMemo()
	body := []byte("answer")
	m.store("a", 7, producer.Snapshot{}, body)
	body[0] = 'X' // the memo keeps its own copy
	tests := []struct {
		id     string
		token  uint64
		want   string
		wantOK bool
	}{
		{"a", 7, "answer", true},
		{"a", 8, "", false}, // another state of the znode
		{"b", 7, "", false}, // another id, whatever its slot
	}
	for _, tt := range tests {
		a, ok := m.lookup(tt.id, tt.token)
		if ok != tt.wantOK || ok && (string(a.body) != tt.want || a.ordered) {
			t.Errorf("lookup(%q, %d) = %v %v, want %q %v", tt.id, tt.token, a, ok, tt.want, tt.wantOK)
		}
	}
	// Ids that share a slot replace each other; neither is ever answered
	// with the other's bytes.
	var other string
	for i := 0; other == ""; i++ {
		if id := fmt.Sprint("id-", i); m.slot(id) == m.slot("a") {
			other = id
		}
	}
	m.store(other, 7, producer.Snapshot{}, []byte("other"))
	if a, ok := m.lookup("a", 7); ok {
		t.Errorf("after its slot was taken, lookup(a) = %q", a.body)
	}
	if a, ok := m.lookup(other, 7); !ok || string(a.body) != "other" {
		t.Errorf("lookup(%s) = %v %v", other, a, ok)
	}
}

// TestGetMemoOrdered: an answer too long to keep as bytes, or one that
// authorization filters (no body), is kept as its ordered tables, within
// memoMaxOrdered for all slots together; a replaced answer gives its share
// back.
func TestGetMemoOrdered(t *testing.T) {
	m := newGetMemo()
	table := func(buckets int) producer.Snapshot {
		return producer.Snapshot{ProducerID: "p", Tables: []offsets.TableOffsets{{TableID: 1, Buckets: make([]offsets.BucketOffset, buckets)}}}
	}
	size := func(buckets int) int64 { return memoTableBytes + memoBucketBytes*int64(buckets) }

	m.store("big", 1, table(100), make([]byte, memoMaxBody+1))
	a, ok := m.lookup("big", 1)
	if !ok || a.body != nil || !a.ordered || len(a.answer.Tables[0].Buckets) != 100 || m.ordered.Load() != size(100) {
		t.Fatalf("an answer over memoMaxBody: %v %v, %d bytes counted", a, ok, m.ordered.Load())
	}
	m.store("big", 2, table(10), nil) // authorization: no body
	if a, ok := m.lookup("big", 2); !ok || !a.ordered || m.ordered.Load() != size(10) {
		t.Fatalf("the next state: %v %v, %d bytes counted, want %d", a, ok, m.ordered.Load(), size(10))
	}
	m.store("small", 1, table(1), []byte("answer")) // as bytes: counts nothing
	if m.ordered.Load() != size(10) {
		t.Fatalf("%d bytes counted, want %d", m.ordered.Load(), size(10))
	}
	huge := int((memoMaxOrdered - size(10)) / memoBucketBytes)
	m.store("huge", 1, table(huge), nil)
	if _, ok := m.lookup("huge", 1); ok || m.ordered.Load() != size(10) {
		t.Fatalf("an answer beyond the bound was kept (%d bytes counted)", m.ordered.Load())
	}
	m.store("fits", 1, table(huge-10), nil)
	if _, ok := m.lookup("fits", 1); !ok || m.ordered.Load() > memoMaxOrdered {
		t.Fatalf("an answer within the bound was not kept (%d bytes counted)", m.ordered.Load())
	}
}

func dialServer(t *testing.T, mux *wire.Mux) *wire.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := wire.NewServer(wire.ServerConfig{Mux: mux, ListenerName: "FLUSS"})
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	c, err := wire.Dial(context.Background(), ln.Addr().String(), wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
