package embedded_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// The parity test runs one script of requests, over the wire, against two
// whole sidecars started by app.Start from the same configuration: one on a
// real ZooKeeper with a file:// remote.data.dir, one with sidecar.embedded:
// true. Only the store differs. Every answer must be what the script
// expects, and the two sidecars' answers must be byte-identical.

// parityStart is the clock at the start of the script.
const parityStart = 1735538268000

// parityClock is the registry clock of both sidecars; steps move it.
type parityClock struct{ ms atomic.Int64 }

func (c *parityClock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

// expect is what one request must get.
type expect struct {
	code   flusserr.Code // an ERROR with this code; 0: SUCCESS
	result int32         // REGISTER: 0 CREATED, 1 ALREADY_EXISTS
	found  *bool         // GET: whether a snapshot came back
	closed bool          // the connection ends without an answer
}

var (
	yes = func() *bool { b := true; return &b }()
	no  = func() *bool { b := false; return &b }()
)

// preq is one request of a step.
type preq struct {
	key  messages.Key
	ver  int16
	body []byte
	want expect
	// storeText: see storeText.
	storeText bool
}

// pstep sends its requests together (pipelined, all written before any
// answer is read) on connection conn, after moving the clock by advance.
type pstep struct {
	name    string
	conn    int
	advance time.Duration
	// plant, if set, writes data into the store directly before the
	// requests, as another writer or a corruption would leave it.
	plant func(planter)
	reqs  []preq
}

// planter writes into one sidecar's store behind its back.
type planter interface {
	// znode stores data as the producer's znode, creating it.
	znode(producerID string, data []byte)
	// file stores data at the offsets path of producer and table and
	// returns that path, as a znode names it.
	file(producerID string, table int64, data []byte) string
	// missing returns an offsets path of producer and table where no file
	// is.
	missing(producerID string, table int64) string
}

const plantedUUID = "00000000-0000-0000-0000-00000000beef"

// zkPlanter plants into ZooKeeper and the file:// remote directory.
type zkPlanter struct {
	t   *testing.T
	zc  *zk.Client
	dir string
}

func (p zkPlanter) znode(id string, data []byte) {
	if _, err := p.zc.Create(p.t.Context(), zkstore.ProducersPath+"/"+id, data, zk.Persistent); err != nil {
		p.t.Fatal(err)
	}
}

func (p zkPlanter) file(id string, table int64, data []byte) string {
	dir := filepath.Join(p.dir, "producers", id, strconv.FormatInt(table, 10))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	name := filepath.Join(dir, plantedUUID+".offsets")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		p.t.Fatal(err)
	}
	return "file:" + name
}

func (p zkPlanter) missing(id string, table int64) string {
	return "file:" + filepath.Join(p.dir, "producers", id, strconv.FormatInt(table, 10), plantedUUID+".offsets")
}

// memPlanter plants into an embedded sidecar's memstore.
type memPlanter struct{ st *memstore.Store }

func (p memPlanter) znode(id string, data []byte) { p.st.SetRawSnapshot(id, data) }

func (p memPlanter) file(id string, table int64, data []byte) string {
	path := p.missing(id, table)
	p.st.SetRawFile(path, data)
	return path
}

func (p memPlanter) missing(id string, table int64) string {
	return "mem:/producers/" + id + "/" + strconv.FormatInt(table, 10) + "/" + plantedUUID + ".offsets"
}

// plantedSnapshot is a valid znode naming one file per table, expiring at
// the start of the script plus a day.
func plantedSnapshot(refs ...offsets.FileRef) []byte {
	return flussjson.EncodeSnapshot(offsets.Snapshot{ExpirationTime: parityStart + 24*3600*1000, Tables: refs})
}

func body(m proto.Message) []byte {
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

func regReq(id string, ttl *int64, tables ...*messages.PbProducerTableOffsets) []byte {
	return body(&messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TableOffsets: tables, TtlMs: ttl})
}

func table(id int64, buckets ...*messages.PbBucketOffset) *messages.PbProducerTableOffsets {
	return &messages.PbProducerTableOffsets{TableId: proto.Int64(id), BucketOffsets: buckets}
}

func bucket(b int32, off int64) *messages.PbBucketOffset {
	return &messages.PbBucketOffset{BucketId: proto.Int32(b), LogEndOffset: proto.Int64(off)}
}

func pbucket(p int64, b int32, off int64) *messages.PbBucketOffset {
	return &messages.PbBucketOffset{PartitionId: proto.Int64(p), BucketId: proto.Int32(b), LogEndOffset: proto.Int64(off)}
}

func reg(id string, want expect, tables ...*messages.PbProducerTableOffsets) preq {
	return preq{key: messages.KeyRegisterProducerOffsets, body: regReq(id, nil, tables...), want: want}
}

func regTTL(id string, ttl int64, want expect, tables ...*messages.PbProducerTableOffsets) preq {
	return preq{key: messages.KeyRegisterProducerOffsets, body: regReq(id, &ttl, tables...), want: want}
}

func getReq(id string, found *bool) preq {
	return preq{key: messages.KeyGetProducerOffsets, body: body(&messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}), want: expect{found: found}}
}

func delReq(id string) preq {
	return preq{key: messages.KeyDeleteProducerOffsets, body: body(&messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)})}
}

// failing sets the error code r must get.
func failing(r preq, code flusserr.Code) preq {
	r.want = expect{code: code}
	return r
}

func errReq(key messages.Key, b []byte, code flusserr.Code) preq {
	return preq{key: key, body: b, want: expect{code: code}}
}

func authReq(token string, code flusserr.Code) preq {
	return preq{key: messages.KeyAuthenticate, body: body(&messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: []byte(token)}), want: expect{code: code}}
}

// manyTables is a register whose znode cannot fit under ZooKeeper's
// default jute.maxbuffer (1 MiB): 20000 tables of one bucket.
func manyTables() []*messages.PbProducerTableOffsets {
	out := make([]*messages.PbProducerTableOffsets, 20000)
	for i := range out {
		out[i] = table(int64(i+1), bucket(0, 1))
	}
	return out
}

var parityScript = []pstep{
	// Connection 0: SASL/PLAIN, before and after a failed login.
	{name: "api versions before login", reqs: []preq{{key: messages.KeyAPIVersions, body: body(&messages.ApiVersionsRequest{ClientSoftwareName: proto.String("fluss"), ClientSoftwareVersion: proto.String("0.1.0")})}}},
	{name: "metadata before login is refused", reqs: []preq{{key: messages.KeyGetMetadata, body: nil, want: expect{code: flusserr.AuthenticateException}}}},
	{name: "wrong password", reqs: []preq{authReq("\x00alice\x00nope", flusserr.AuthenticateException)}},
	// Connection 1: logged in; the registry's behaviours.
	{name: "login", conn: 1, reqs: []preq{authReq("\x00alice\x00a-pw", 0)}},
	{name: "metadata", conn: 1, reqs: []preq{{key: messages.KeyGetMetadata, body: nil}}},
	{name: "register", conn: 1, reqs: []preq{reg("job-1", expect{}, table(100, bucket(0, 42), bucket(1, 7)), table(200, pbucket(5, 0, 9)))}},
	{name: "register again", conn: 1, reqs: []preq{reg("job-1", expect{result: 1}, table(100, bucket(0, 1)))}},
	{name: "get", conn: 1, reqs: []preq{getReq("job-1", yes)}},
	{name: "get missing", conn: 1, reqs: []preq{getReq("job-missing", no)}},
	{name: "delete", conn: 1, reqs: []preq{delReq("job-1")}},
	{name: "get deleted", conn: 1, reqs: []preq{getReq("job-1", no)}},
	{name: "delete missing", conn: 1, reqs: []preq{delReq("job-1")}},
	{name: "register after delete", conn: 1, reqs: []preq{reg("job-1", expect{}, table(100, bucket(0, 43)))}},
	{name: "empty snapshot", conn: 1, reqs: []preq{reg("job-empty", expect{})}},
	{name: "get empty snapshot", conn: 1, reqs: []preq{getReq("job-empty", yes)}},
	// Expiry: a 1 s ttl, then the clock moves past it.
	{name: "register with ttl", conn: 1, reqs: []preq{regTTL("job-ttl", 1000, expect{}, table(300, bucket(0, 1)))}},
	{name: "live before expiry", conn: 1, reqs: []preq{regTTL("job-ttl", 1000, expect{result: 1}, table(300, bucket(0, 2)))}},
	{name: "get before expiry", conn: 1, reqs: []preq{getReq("job-ttl", yes)}},
	{name: "expired: get", conn: 1, advance: 2 * time.Second, reqs: []preq{getReq("job-ttl", nil)}},
	{name: "expired: register replaces", conn: 1, reqs: []preq{regTTL("job-ttl", 1000, expect{}, table(300, bucket(0, 3)))}},
	{name: "expired: get the new one", conn: 1, reqs: []preq{getReq("job-ttl", yes)}},
	{name: "born expired (ttl 0)", conn: 1, reqs: []preq{regTTL("job-born-expired", 0, expect{})}},
	// Expired means past the expiration time, so at the same millisecond
	// the ttl-0 snapshot still stands, and one millisecond later it does not.
	{name: "born expired, same millisecond", conn: 1, reqs: []preq{regTTL("job-born-expired", 0, expect{result: 1})}},
	{name: "born expired, replaced", conn: 1, advance: time.Millisecond, reqs: []preq{regTTL("job-born-expired", 0, expect{})}},
	{name: "negative ttl", conn: 1, reqs: []preq{regTTL("job-negative-ttl", -5000, expect{})}},
	// Pipelining: written together, answered by id; requests on one
	// producer id would race (they run concurrently), so each names its own.
	{name: "pipelined", conn: 1, reqs: []preq{
		reg("job-p1", expect{}, table(1, bucket(0, 1))),
		reg("job-p2", expect{}, table(2, pbucket(-1, 3, 4), pbucket(7, 0, 1))),
		reg("job-empty", expect{result: 1}),
		getReq("job-1", yes),
		getReq("job-missing", no),
		delReq("job-missing-2"),
		reg(".", expect{code: flusserr.InvalidProducerID}),
		errReq(1001, nil, flusserr.UnsupportedVersion),
		errReq(messages.KeyRegisterProducerOffsets, []byte{0x0a}, flusserr.CorruptMessage),
	}},
	{name: "pipelined reads", conn: 1, reqs: []preq{getReq("job-p1", yes), getReq("job-p2", yes), getReq("job-empty", yes)}},
	// Every error code the registry answers.
	{name: "invalid producer ids (63)", conn: 1, reqs: []preq{
		failing(getReq("a b", nil), flusserr.InvalidProducerID),
		reg("", expect{code: flusserr.InvalidProducerID}),
		failing(delReq(".."), flusserr.InvalidProducerID),
		failing(getReq(strings.Repeat("x", 201), nil), flusserr.InvalidProducerID),
		failing(getReq("caf\u00e9", nil), flusserr.InvalidProducerID),
		reg("a/b", expect{code: flusserr.InvalidProducerID}),
	}},
	{name: "missing producer id (3)", conn: 1, reqs: []preq{errReq(messages.KeyGetProducerOffsets, body(&messages.GetProducerOffsetsRequest{}), flusserr.CorruptMessage)}},
	{name: "unsupported version (2)", conn: 1, reqs: []preq{failing(preq{key: messages.KeyGetProducerOffsets, ver: 1, body: body(&messages.GetProducerOffsetsRequest{ProducerId: proto.String("job-1")})}, flusserr.UnsupportedVersion)}},
	{name: "corrupt body (3)", conn: 1, reqs: []preq{errReq(messages.KeyRegisterProducerOffsets, []byte{0xff, 0xff, 0xff}, flusserr.CorruptMessage)}},
	{name: "bad offsets (-1)", conn: 1, reqs: []preq{
		reg("job-bad", expect{code: flusserr.UnknownServerError}, table(1, bucket(0, -5))),
		reg("job-bad", expect{code: flusserr.UnknownServerError}, table(1, bucket(-1, 5))),
		reg("job-bad", expect{code: flusserr.UnknownServerError}, table(1, bucket(0, 5), bucket(0, 6))),
		reg("job-bad", expect{code: flusserr.UnknownServerError}, table(1, bucket(0, 5), pbucket(1, 1, 6))),
		reg("job-bad", expect{code: flusserr.UnknownServerError}, table(1, &messages.PbBucketOffset{BucketId: proto.Int32(0)})),
		regTTL("job-bad", math.MaxInt64, expect{code: flusserr.UnknownServerError}),
	}},
	{name: "bucket id too large (49)", conn: 1, reqs: []preq{reg("job-big-bucket", expect{code: 49}, table(1, bucket(1<<20, 5)))}},
	{name: "snapshot too large for a znode (13)", conn: 1, reqs: []preq{storeText(reg("job-huge", expect{code: flusserr.RecordTooLarge}, manyTables()...))}},
	{name: "nothing stored by the errors", conn: 1, reqs: []preq{getReq("job-bad", no), getReq("job-big-bucket", no), getReq("job-huge", no)}},
	// What another writer or a corruption leaves in the store.
	{name: "corrupt znode", conn: 1, plant: func(p planter) { p.znode("job-corrupt", []byte("not json")) }, reqs: []preq{
		storeText(failing(getReq("job-corrupt", nil), flusserr.UnknownServerError)),
	}},
	{name: "corrupt znode: register", conn: 1, reqs: []preq{storeText(reg("job-corrupt", expect{code: flusserr.UnknownServerError}, table(1, bucket(0, 1))))}},
	{name: "corrupt znode: delete", conn: 1, reqs: []preq{storeText(failing(delReq("job-corrupt"), flusserr.UnknownServerError))}},
	{name: "znode naming a missing file", conn: 1, plant: func(p planter) {
		p.znode("job-nofile", plantedSnapshot(offsets.FileRef{TableID: 5, OffsetsPath: p.missing("job-nofile", 5)}))
	}, reqs: []preq{storeText(failing(getReq("job-nofile", nil), flusserr.UnknownServerError))}},
	{name: "znode naming a missing file: delete", conn: 1, reqs: []preq{delReq("job-nofile")}},
	{name: "znode naming a missing file: gone", conn: 1, reqs: []preq{getReq("job-nofile", no)}},
	{name: "corrupt offsets file", conn: 1, plant: func(p planter) {
		p.znode("job-badfile", plantedSnapshot(offsets.FileRef{TableID: 6, OffsetsPath: p.file("job-badfile", 6, []byte("{\"version\":1,"))}))
	}, reqs: []preq{storeText(failing(getReq("job-badfile", nil), flusserr.UnknownServerError))}},
	{name: "another writer's valid snapshot", conn: 1, plant: func(p planter) {
		p.znode("job-other", plantedSnapshot(offsets.FileRef{TableID: 7, OffsetsPath: p.file("job-other", 7, []byte(`{"version":1,"table_id":7,"bucket_offsets":[10,-1,12]}`))}))
	}, reqs: []preq{getReq("job-other", yes), reg("job-other", expect{result: 1})}},
	// A coordinator's file for input the sidecar refuses on REGISTER:
	// offsets below -1 (and -1 dropped), read as the coordinator reads it.
	{name: "a coordinator's offsets below -1", conn: 1, plant: func(p planter) {
		p.znode("job-negative", plantedSnapshot(offsets.FileRef{TableID: 5, OffsetsPath: p.file("job-negative", 5,
			[]byte(`{"version":1,"table_id":5,"bucket_offsets":[-1,-5,7,-9223372036854775808]}`))}))
	}, reqs: []preq{getReq("job-negative", yes), getReq("job-negative", yes)}},
	{name: "a coordinator's offsets below -1: register", conn: 1, reqs: []preq{reg("job-negative", expect{result: 1})}},
	{name: "a coordinator's offsets below -1: delete", conn: 1, reqs: []preq{delReq("job-negative")}},
	{name: "a coordinator's offsets below -1: gone", conn: 1, reqs: []preq{getReq("job-negative", no)}},
	{name: "another writer's snapshot: delete", conn: 1, reqs: []preq{delReq("job-other"), delReq("job-badfile")}},
	{name: "clean up", conn: 1, reqs: []preq{delReq("job-1"), delReq("job-p1"), delReq("job-p2"), delReq("job-empty"), delReq("job-ttl")}},
	{name: "all gone", conn: 1, reqs: []preq{getReq("job-1", no), getReq("job-p1", no), getReq("job-p2", no), getReq("job-empty", no), getReq("job-ttl", no)}},
}

// storeText marks an error whose message ends with the store's own words
// (the ZooKeeper or in-memory store's reason, paths and sizes, which differ
// because the stored offsets paths differ): the answers are compared up to
// that cause (withoutCause).
func storeText(r preq) preq {
	r.storeText = true
	return r
}

// answer is one request's outcome, comparable across sidecars.
type answer struct {
	Type   wire.ResponseType
	Body   []byte
	Closed bool
}

func (a answer) String() string {
	if a.Closed {
		return "connection closed"
	}
	if a.Type != wire.ResponseSuccess {
		return fmt.Sprintf("%v %v", a.Type, wire.Response{Type: a.Type, Body: a.Body}.Err())
	}
	return fmt.Sprintf("SUCCESS % x", a.Body)
}

// runScript runs script, connection n on addr(n), and returns every answer
// in script order, checking each against its expectation.
func runScript(t *testing.T, script []pstep, addr func(conn int) string, clock *parityClock, plant planter) [][]answer {
	t.Helper()
	ctx := t.Context()
	conns := map[int]*wire.Client{}
	var out [][]answer
	for _, st := range script {
		clock.ms.Add(st.advance.Milliseconds())
		if st.plant != nil {
			st.plant(plant)
		}
		c := conns[st.conn]
		if c == nil {
			c = dial(t, addr(st.conn))
			conns[st.conn] = c
		}
		got := make([]answer, len(st.reqs))
		var wg sync.WaitGroup
		for i, r := range st.reqs {
			wg.Add(1)
			if err := c.Queue(r.key, r.ver, r.body, int64(i), func(tag int64, resp wire.Response, err error) {
				defer wg.Done()
				if err != nil {
					got[tag] = answer{Closed: true}
					return
				}
				got[tag] = answer{Type: resp.Type, Body: append([]byte(nil), resp.Body...)}
			}); err != nil {
				t.Fatalf("%s: send: %v", st.name, err)
			}
		}
		c.Flush()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
			t.Fatalf("%s: no answer", st.name)
		}
		for i, r := range st.reqs {
			if err := check(r, got[i]); err != nil {
				t.Errorf("%s: request %d (api key %d): %v", st.name, i, r.key, err)
			}
		}
		out = append(out, got)
	}
	return out
}

func check(r preq, a answer) error {
	w := r.want
	switch {
	case w.closed || a.Closed:
		if w.closed != a.Closed {
			return fmt.Errorf("got %v, want closed=%v", a, w.closed)
		}
		return nil
	case w.code != 0:
		fe, ok := flusserr.From(wire.Response{Type: a.Type, Body: a.Body}.Err())
		if a.Type != wire.ResponseError || !ok || fe.Code != w.code {
			return fmt.Errorf("got %v, want error code %d", a, w.code)
		}
		return nil
	case a.Type != wire.ResponseSuccess:
		return fmt.Errorf("got %v, want SUCCESS", a)
	}
	switch r.key {
	case messages.KeyRegisterProducerOffsets:
		var m messages.RegisterProducerOffsetsResponse
		if err := proto.Unmarshal(a.Body, &m); err != nil || m.Result == nil || m.GetResult() != w.result {
			return fmt.Errorf("got %v (%v), want result %d", a, err, w.result)
		}
	case messages.KeyGetProducerOffsets:
		var m messages.GetProducerOffsetsResponse
		if err := proto.Unmarshal(a.Body, &m); err != nil {
			return err
		}
		if w.found != nil && (m.ProducerId != nil) != *w.found {
			return fmt.Errorf("got %v, want found=%v", a, *w.found)
		}
	}
	return nil
}

// withoutCause keeps the sidecar's own words of an error message, "Failed
// to <op> producer offsets for producer <id>: <what went wrong>", and drops
// the store's cause after them.
func withoutCause(a answer) answer {
	fe, ok := flusserr.From(wire.Response{Type: a.Type, Body: a.Body}.Err())
	if !ok {
		return a
	}
	parts := strings.SplitN(fe.Message, ": ", 3)
	if len(parts) < 3 {
		return a
	}
	a.Body = wire.AppendErrorResponse(nil, fe.Code, parts[0]+": "+parts[1])
	return a
}

// TestParityZooKeeperAndEmbedded is the parity table: the same
// registry behaviours, through the wire, on both stores, with identical
// answers.
func TestParityZooKeeperAndEmbedded(t *testing.T) {
	zks := zktest.StartT(t)
	common := map[string]string{
		"security.protocol.map":                      "FLUSS:SASL",
		"security.sasl.plain.jaas.config":            `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_alice="a-pw";`,
		"advertised.listeners":                       "FLUSS://127.0.0.1:9123",
		"sidecar.tablet-server.advertised.listeners": "FLUSS://127.0.0.1:9124",
		"coordinator.producer-offsets.ttl":           "1 h",
	}
	start := func(c *config.Config, clock *parityClock) *app.App {
		return apptest.StartConfig(t, c, app.Options{Now: clock.now})
	}
	zkClock, memClock := &parityClock{}, &parityClock{}
	zkClock.ms.Store(parityStart)
	memClock.ms.Store(parityStart)

	zkCfg := apptest.Config(t, zks.Addr, common)
	memCfg := config.New()
	for k, v := range common {
		memCfg.Set(k, v)
	}
	memCfg.Set("bind.listeners", "FLUSS://127.0.0.1:0")
	memCfg.Set(app.KeyEmbedded, "true")

	var zkAnswers, memAnswers [][]answer
	t.Run("zookeeper", func(t *testing.T) {
		a := start(zkCfg, zkClock)
		root, _ := zkCfg.Lookup("zookeeper.path.root")
		dir, _ := zkCfg.Lookup("remote.data.dir")
		zc, err := zk.Connect(t.Context(), zk.Config{Address: zks.Addr, Root: root, ConnectionTimeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer zc.Close()
		zkAnswers = runScript(t, parityScript, firstAddr(a), zkClock, zkPlanter{t: t, zc: zc, dir: strings.TrimPrefix(dir, "file://")})
	})
	t.Run("embedded", func(t *testing.T) {
		a := start(memCfg, memClock)
		memAnswers = runScript(t, parityScript, firstAddr(a), memClock, memPlanter{st: a.EmbeddedStore()})
	})
	compareAnswers(t, parityScript, zkAnswers, memAnswers)
}

func firstAddr(a *app.App) func(int) string {
	return func(int) string { return a.Addr() }
}

// compareAnswers requires the two runs of script to have answered alike.
func compareAnswers(t *testing.T, script []pstep, zkAnswers, memAnswers [][]answer) {
	t.Helper()
	if len(zkAnswers) != len(script) || len(memAnswers) != len(script) {
		t.Fatalf("a script run stopped early: %d and %d of %d steps", len(zkAnswers), len(memAnswers), len(script))
	}
	for i, st := range script {
		for j := range st.reqs {
			z, m := zkAnswers[i][j], memAnswers[i][j]
			if st.reqs[j].storeText {
				z, m = withoutCause(z), withoutCause(m)
			}
			if z.Closed != m.Closed || z.Type != m.Type || !bytes.Equal(z.Body, m.Body) {
				t.Errorf("%s: request %d differs:\n zookeeper %v\n embedded  %v", st.name, j, z, m)
			}
		}
	}
}
