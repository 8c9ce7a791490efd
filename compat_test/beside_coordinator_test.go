package compat

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// This file puts the sidecar beside a real Fluss 0.9.1-incubating
// coordinator (internal/flusstest runs the released jars): one ZooKeeper
// root, one remote.data.dir, and requests sent to both. What a test here
// shows about the two, and every difference it pins, is listed in
// compat_test/README.md ("Beside a real coordinator").

// beside is a running 0.9.1 cluster and the ZooKeeper root and remote
// directory its coordinator keeps the registry in, which the test's
// sidecars share.
type beside struct {
	zkAddr    string
	root      string
	remoteDir string // the local folder
	remoteURL string // remote.data.dir of every server: file:// and the folder
	cluster   *flusstest.Cluster
	zk        *gozk.Conn
}

// startBeside starts ZooKeeper and a 0.9.1 cluster of a coordinator and one
// tablet server with a CLIENT listener besides the internal one, the
// coordinator's server.yaml extended by coordinatorExtra.
//
// remote.data.dir has a scheme: with a bare path a coordinator's orphan
// cleanup deletes every live file (docs/storage-format.md §8, W1).
func startBeside(t *testing.T, coordinatorExtra map[string]string) *beside {
	t.Helper()
	zks := zktest.StartT(t)
	remote := t.TempDir()
	b := &beside{zkAddr: zks.Addr, root: zktest.UniqueRoot(), remoteDir: remote, remoteURL: "file://" + remote}
	b.cluster = flusstest.StartT(t, flusstest.Config{
		Release:          flusstest.Fluss091,
		ZooKeeper:        zks.Addr,
		Root:             b.root,
		RemoteDir:        b.remoteURL,
		Listeners:        []flusstest.Listener{{Name: "CLIENT"}},
		CoordinatorExtra: coordinatorExtra,
	})
	b.zk = zktest.RawConn(t, zks.Addr)
	return b
}

// coordinator is the coordinator's CLIENT endpoint.
func (b *beside) coordinator() string { return b.cluster.Coordinator.Endpoint("CLIENT") }

// sidecar starts a sidecar in ZooKeeper mode on the cluster's root and
// remote directory, with its metrics on a loopback port; kv adds keys.
func (b *beside) sidecar(t *testing.T, kv map[string]string) *app.App {
	t.Helper()
	all := map[string]string{
		app.KeyZKRoot: b.root, app.KeyRemoteDataDir: b.remoteURL,
		app.KeyMetricsReporters: "prometheus", app.KeyPrometheusPort: "0", app.KeyMetricsHost: "127.0.0.1",
	}
	maps.Copy(all, kv)
	return apptest.StartConfig(t, apptest.Config(t, b.zkAddr, all), app.Options{})
}

// metric is the value of the sample of a sidecar's /metrics whose name and
// labels are series (as the text format writes them, e.g.
// `fluss_sidecar_cleanup_runsTotal{result="ok"}`); 0 when there is none.
func metric(t *testing.T, a *app.App, series string) float64 {
	t.Helper()
	code, body := apptest.HTTPGet(t, "http://"+a.MetricsAddr()+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics answered %d", code)
	}
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// dialFluss connects to addr and sends API_VERSIONS; the connection closes
// when the test ends.
func dialFluss(t *testing.T, addr string) *wire.Client {
	t.Helper()
	ctx := t.Context()
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// callRaw sends body under key and returns the answer: its type and body,
// all of the frame but the request id.
func callRaw(t *testing.T, c *wire.Client, key messages.Key, body []byte) wire.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := c.CallRaw(ctx, key, 0, body)
	if err != nil {
		t.Fatalf("api key %d: %v", key, err)
	}
	return r
}

// callMsg is callRaw with m encoded.
func callMsg(t *testing.T, c *wire.Client, key messages.Key, m proto.Message) wire.Response {
	t.Helper()
	body, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return callRaw(t, c, key, body)
}

func mustSucceed(t *testing.T, what string, r wire.Response) {
	t.Helper()
	if r.Type != wire.ResponseSuccess {
		t.Fatalf("%s: answer type %d: %v", what, r.Type, r.Err())
	}
}

// The coordinator requests that make tables. messages/fluss.proto holds
// only what the sidecar serves, so these bodies are written field by field,
// with the numbers of Fluss 0.9.1's FlussApi.proto.
func pbString(b []byte, num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
}

func pbBytes(b []byte, num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), v)
}

func pbVarint(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

// pbTablePath is a PbTablePath: database_name 1, table_name 2.
func pbTablePath(db, table string) []byte { return pbString(pbString(nil, 1, db), 2, table) }

// pbPartitionSpec is a PbPartitionSpec holding one PbKeyValue (key 1,
// value 2) in partition_key_values (1).
func pbPartitionSpec(key, value string) []byte {
	return pbBytes(nil, 1, pbString(pbString(nil, 1, key), 2, value))
}

// pbFields reads a message's top-level varint and length-delimited fields.
func pbFields(t *testing.T, b []byte) (varints map[protowire.Number][]uint64, lens map[protowire.Number][][]byte) {
	t.Helper()
	varints, lens = map[protowire.Number][]uint64{}, map[protowire.Number][][]byte{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag in %x", b)
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				t.Fatalf("bad varint in %x", b)
			}
			varints[num] = append(varints[num], v)
			n = m
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				t.Fatalf("bad bytes in %x", b)
			}
			lens[num] = append(lens[num], v)
			n = m
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				t.Fatalf("bad field in %x", b)
			}
		}
		b = b[n:]
	}
	return varints, lens
}

// realTables are tables the coordinator made, and the partitions of the
// partitioned one.
type realTables struct {
	events, audit int64 // log tables of logBuckets buckets
	clicks        int64 // partitioned by day, partBuckets buckets a partition
	partitions    []int64
}

const (
	logBuckets  = 64
	partBuckets = 16
)

// createTables makes database "beside" with the log tables events and
// audit and the table clicks partitioned by day with three partitions,
// through the coordinator's own API (CREATE_DATABASE, CREATE_TABLE,
// CREATE_PARTITION), and learns their ids (GET_TABLE_INFO,
// LIST_PARTITION_INFOS).
func createTables(t *testing.T, c *wire.Client) realTables {
	t.Helper()
	const db = "beside"
	body := pbVarint(pbString(nil, 1, db), 2, 0)
	body = pbBytes(body, 3, []byte(`{"version":1,"custom_properties":{}}`))
	mustSucceed(t, "CREATE_DATABASE", callRaw(t, c, 1001, body))
	table := func(name, json string) int64 {
		body := pbVarint(pbBytes(pbBytes(nil, 1, pbTablePath(db, name)), 2, []byte(json)), 3, 0)
		mustSucceed(t, "CREATE_TABLE "+name, callRaw(t, c, 1005, body))
		r := callRaw(t, c, messages.KeyGetTableInfo, pbBytes(nil, 1, pbTablePath(db, name)))
		mustSucceed(t, "GET_TABLE_INFO "+name, r)
		v, _ := pbFields(t, r.Body)
		if len(v[1]) != 1 {
			t.Fatalf("GET_TABLE_INFO %s: no table_id in %x", name, r.Body)
		}
		return int64(v[1][0])
	}
	// The JSON of TableDescriptor: a bucket count needs a bucket key, empty
	// for a log table.
	const columns = `{"name":"id","data_type":{"type":"BIGINT"}},{"name":"payload","data_type":{"type":"STRING"}}`
	descriptor := func(partitionKey string, extraColumns string, buckets int) string {
		return fmt.Sprintf(`{"version":1,"schema":{"version":1,"columns":[%s%s]},"partition_key":[%s],"bucket_key":[],"bucket_count":%d,"properties":{},"custom_properties":{}}`,
			columns, extraColumns, partitionKey, buckets)
	}
	rt := realTables{
		events: table("events", descriptor("", "", logBuckets)),
		audit:  table("audit", descriptor("", "", logBuckets)),
		clicks: table("clicks", descriptor(`"day"`, `,{"name":"day","data_type":{"type":"STRING"}}`, partBuckets)),
	}
	days := []string{"20260101", "20260102", "20260103"}
	for _, d := range days {
		body := pbVarint(pbBytes(pbBytes(nil, 1, pbTablePath(db, "clicks")), 2, pbPartitionSpec("day", d)), 3, 0)
		mustSucceed(t, "CREATE_PARTITION "+d, callRaw(t, c, 1036, body))
	}
	r := callRaw(t, c, 1009, pbBytes(nil, 1, pbTablePath(db, "clicks")))
	mustSucceed(t, "LIST_PARTITION_INFOS", r)
	_, infos := pbFields(t, r.Body)
	for _, info := range infos[1] {
		v, _ := pbFields(t, info)
		rt.partitions = append(rt.partitions, int64(v[1][0]))
	}
	if len(rt.partitions) != len(days) {
		t.Fatalf("LIST_PARTITION_INFOS names %d partitions, want %d", len(rt.partitions), len(days))
	}
	slices.Sort(rt.partitions)
	return rt
}

// bo is one bucket's offset in a register request; partition -1 is a
// bucket of a table without partitions (no partition_id on the wire).
type bo struct {
	table     int64
	partition int64
	bucket    int32
	offset    int64
}

// key is bo without the offset.
func (o bo) key() bo { o.offset = 0; return o }

// registerRequest groups offs by table, the tables in their order of first
// appearance and each table's buckets in the order given, as a client
// sends them.
func registerRequest(id string, offs []bo) *messages.RegisterProducerOffsetsRequest {
	req := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id)}
	byTable := map[int64]*messages.PbProducerTableOffsets{}
	for _, o := range offs {
		tab := byTable[o.table]
		if tab == nil {
			tab = &messages.PbProducerTableOffsets{TableId: proto.Int64(o.table)}
			byTable[o.table] = tab
			req.TableOffsets = append(req.TableOffsets, tab)
		}
		b := &messages.PbBucketOffset{BucketId: proto.Int32(o.bucket), LogEndOffset: proto.Int64(o.offset)}
		if o.partition >= 0 {
			b.PartitionId = proto.Int64(o.partition)
		}
		tab.BucketOffsets = append(tab.BucketOffsets, b)
	}
	return req
}

func getReq(id string) *messages.GetProducerOffsetsRequest {
	return &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}
}

func deleteReq(id string) *messages.DeleteProducerOffsetsRequest {
	return &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}
}

// offsetsOf is the offsets a GET answer holds, by bucket; a bucket named
// twice fails the test.
func offsetsOf(t *testing.T, m *messages.GetProducerOffsetsResponse) map[bo]int64 {
	t.Helper()
	got := map[bo]int64{}
	for _, tab := range m.GetTableOffsets() {
		for _, b := range tab.GetBucketOffsets() {
			k := bo{table: tab.GetTableId(), partition: -1, bucket: b.GetBucketId()}
			if b.PartitionId != nil {
				k.partition = b.GetPartitionId()
			}
			if _, dup := got[k]; dup {
				t.Errorf("a GET answer names %+v twice", k)
			}
			got[k] = b.GetLogEndOffset()
		}
	}
	return got
}

func offsetsMap(offs []bo) map[bo]int64 {
	m := map[bo]int64{}
	for _, o := range offs {
		m[o.key()] = o.offset
	}
	return m
}

// unusedTableIDs are ids no table has. A 0.9.1 coordinator without an
// authorizer takes offsets of any table id (CoordinatorService's
// registerProducerOffsets looks a table up only to authorize it), and so
// does the sidecar. Their spread makes a Java HashMap's order differ from
// the ids' order.
var unusedTableIDs = []int64{200, 17, 1 << 40, 100, 1<<31 + 5}

// manyOffsets is a register's offsets over every real table and the unused
// ids: all of events' buckets, four of audit's (holes between), most
// buckets of each partition of clicks; seed varies the offsets. Tables and
// buckets come in a scrambled order.
func manyOffsets(rt realTables, seed int64) []bo {
	var offs []bo
	add := func(table, partition int64, bucket int32, offset int64) {
		offs = append(offs, bo{table, partition, bucket, offset})
	}
	add(unusedTableIDs[0], -1, 3, seed+1)
	for i := int32(logBuckets - 1); i >= 0; i-- {
		b := (i * 37) % logBuckets
		add(rt.events, -1, b, seed*1_000_000+int64(b)*1013)
	}
	add(unusedTableIDs[1], -1, 0, seed+2)
	for b := range int32(partBuckets) {
		for j, p := range rt.partitions {
			if (int(b)+j)%5 != 0 {
				add(rt.clicks, p, b, seed*1000+int64(j)*100+int64(b))
			}
		}
	}
	add(unusedTableIDs[2], -1, 1, 1<<50+seed)
	for _, b := range []int32{63, 0, 17, 3} {
		add(rt.audit, -1, b, seed+int64(b)<<33)
	}
	add(unusedTableIDs[3], -1, 2, seed)
	add(unusedTableIDs[4], -1, 5, 0)
	return offs
}

// strict decodes a SUCCESS body as key's response with every required
// field (the Rust client's rule, docs/protocol.md §8), and requires a
// REGISTER answer to set result.
func strict(t *testing.T, key messages.Key, r wire.Response) proto.Message {
	t.Helper()
	mustSucceed(t, fmt.Sprintf("api key %d", key), r)
	m := responseFor[int16(key)]()
	if err := proto.Unmarshal(r.Body, m); err != nil {
		t.Fatalf("api key %d: SUCCESS body %x fails a strict decode: %v", key, r.Body, err)
	}
	if reg, ok := m.(*messages.RegisterProducerOffsetsResponse); ok && reg.Result == nil {
		t.Fatalf("REGISTER answer without result: %x", r.Body)
	}
	return m
}

// sameAnswer fails the test unless the sidecar's and the coordinator's
// answers have the same type and body: the same frame, request ids aside.
func sameAnswer(t *testing.T, what string, side, coord wire.Response) {
	t.Helper()
	if side.Type != coord.Type || !bytes.Equal(side.Body, coord.Body) {
		t.Errorf("%s: the answers differ:\n  sidecar:     type %d %x (%v)\n  coordinator: type %d %x (%v)",
			what, side.Type, side.Body, side.Err(), coord.Type, coord.Body, coord.Err())
	}
}

// sortedGet is a GET answer's body with its lists in one order: tables by
// id, a table's buckets by partition and bucket.
func sortedGet(t *testing.T, body []byte) []byte {
	t.Helper()
	m := &messages.GetProducerOffsetsResponse{}
	if err := proto.Unmarshal(body, m); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(m.TableOffsets, func(a, b *messages.PbProducerTableOffsets) int { return cmp.Compare(a.GetTableId(), b.GetTableId()) })
	for _, tab := range m.TableOffsets {
		slices.SortFunc(tab.BucketOffsets, func(a, b *messages.PbBucketOffset) int {
			return cmp.Or(cmp.Compare(a.GetPartitionId(), b.GetPartitionId()), cmp.Compare(a.GetBucketId(), b.GetBucketId()))
		})
	}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameGet compares the GET answers of the sidecar and the coordinator: the
// same bytes, tables and buckets in the coordinator's order (the order of
// its Java HashMaps, docs/storage-format.md §7.3). When only that order
// differs, it says so.
func sameGet(t *testing.T, what string, side, coord wire.Response) {
	t.Helper()
	if side.Type == wire.ResponseSuccess && coord.Type == wire.ResponseSuccess && !bytes.Equal(side.Body, coord.Body) &&
		bytes.Equal(sortedGet(t, side.Body), sortedGet(t, coord.Body)) {
		t.Errorf("%s: the answers list the same offsets in another order:\n  sidecar:     %x\n  coordinator: %x", what, side.Body, coord.Body)
		return
	}
	sameAnswer(t, what, side, coord)
}

// zeroExpiration is a GET answer's body with expiration_time (field 2) set
// to 0 and every other byte kept: for answers about two snapshots made at
// different moments.
func zeroExpiration(t *testing.T, body []byte) []byte {
	t.Helper()
	var out []byte
	for b := body; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if n < 0 || m < 0 {
			t.Fatalf("bad field in %x", body)
		}
		if num == 2 && typ == protowire.VarintType {
			out = pbVarint(out, 2, 0)
		} else {
			out = append(out, b[:n+m]...)
		}
		b = b[n+m:]
	}
	return out
}

// register registers offs under id through c (ttl nil: the default) and
// fails unless the answer is CREATED; it returns the window in which the
// expiration was taken.
func register(t *testing.T, c *wire.Client, id string, offs []bo, ttl *int64) (before, after int64) {
	t.Helper()
	req := registerRequest(id, offs)
	req.TtlMs = ttl
	before = time.Now().UnixMilli()
	r := callMsg(t, c, messages.KeyRegisterProducerOffsets, req)
	after = time.Now().UnixMilli()
	if res := strict(t, messages.KeyRegisterProducerOffsets, r).(*messages.RegisterProducerOffsetsResponse); res.GetResult() != 0 {
		t.Fatalf("REGISTER %s: result %d, want 0 (CREATED)", id, res.GetResult())
	}
	return before, after
}

// getBoth sends GET id to the sidecar and the coordinator, requires the
// same bytes and returns the sidecar's answer decoded.
func getBoth(t *testing.T, side, coord *wire.Client, id string) *messages.GetProducerOffsetsResponse {
	t.Helper()
	rs := callMsg(t, side, messages.KeyGetProducerOffsets, getReq(id))
	rc := callMsg(t, coord, messages.KeyGetProducerOffsets, getReq(id))
	sameGet(t, "GET "+id, rs, rc)
	strict(t, messages.KeyGetProducerOffsets, rc)
	return strict(t, messages.KeyGetProducerOffsets, rs).(*messages.GetProducerOffsetsResponse)
}

// checkGet requires a GET answer to hold id, an expiration in [from, to]
// and exactly offs.
func checkGet(t *testing.T, got *messages.GetProducerOffsetsResponse, id string, from, to int64, offs []bo) {
	t.Helper()
	if got.GetProducerId() != id {
		t.Errorf("GET %s names %q", id, got.GetProducerId())
	}
	if e := got.GetExpirationTime(); e < from || e > to {
		t.Errorf("GET %s: expiration_time %d is outside [%d, %d]", id, e, from, to)
	}
	if g, w := offsetsOf(t, got), offsetsMap(offs); !maps.Equal(g, w) {
		t.Errorf("GET %s: offsets %v, registered %v", id, g, w)
	}
}

// stored is one producer's snapshot as ZooKeeper and the remote directory
// hold it.
type stored struct {
	znode []byte
	stat  *gozk.Stat
	acl   []gozk.ACL
	// files are the named files' bytes and modes by table id.
	files map[int64][]byte
	modes map[int64]fs.FileMode
	// tree is every file and folder under producers/<id> with its mode,
	// UUIDs masked (relative paths).
	tree map[string]fs.FileMode
}

// znodeJSON is what the test reads of a producer znode with its own
// decoder.
type znodeJSON struct {
	Version        int   `json:"version"`
	ExpirationTime int64 `json:"expiration_time"`
	Tables         []struct {
		TableID     int64  `json:"table_id"`
		OffsetsPath string `json:"offsets_path"`
	} `json:"tables"`
}

func (b *beside) znodePath(id string) string { return b.root + "/producers/" + id }

// readZnode returns id's znode decoded; ok is false without one.
func (b *beside) readZnode(t *testing.T, id string) (z znodeJSON, data []byte, stat *gozk.Stat, ok bool) {
	t.Helper()
	data, stat, err := b.zk.Get(b.znodePath(id))
	if errors.Is(err, gozk.ErrNoNode) {
		return z, nil, nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &z); err != nil {
		t.Fatalf("znode of %s: %v: %s", id, err, data)
	}
	return z, data, stat, true
}

// localPath is the local file an offsets_path names; every path is
// qualified (file:/...).
func localPath(t *testing.T, offsetsPath string) string {
	t.Helper()
	p, ok := strings.CutPrefix(offsetsPath, "file:/")
	if !ok || strings.HasPrefix(p, "/") {
		t.Fatalf("offsets_path %q is not of the form file:/<path>", offsetsPath)
	}
	return "/" + p
}

// snapshot reads what is stored for id; ok is false without a znode.
func (b *beside) snapshot(t *testing.T, id string) (s stored, ok bool) {
	t.Helper()
	z, data, stat, ok := b.readZnode(t, id)
	if !ok {
		return s, false
	}
	s.znode, s.stat = data, stat
	var err error
	if s.acl, _, err = b.zk.GetACL(b.znodePath(id)); err != nil {
		t.Fatal(err)
	}
	s.files, s.modes = map[int64][]byte{}, map[int64]fs.FileMode{}
	for _, tab := range z.Tables {
		local := localPath(t, tab.OffsetsPath)
		body, err := os.ReadFile(local)
		if err != nil {
			t.Fatalf("the znode of %s names %s: %v", id, tab.OffsetsPath, err)
		}
		fi, err := os.Stat(local)
		if err != nil {
			t.Fatal(err)
		}
		s.files[tab.TableID], s.modes[tab.TableID] = body, fi.Mode()
	}
	s.tree = b.tree(t, id)
	return s, true
}

// asText shows files by table id as text.
func asText(files map[int64][]byte) map[int64]string {
	m := map[int64]string{}
	for k, v := range files {
		m[k] = string(v)
	}
	return m
}

var (
	uuidFile   = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.offsets`)
	expiration = regexp.MustCompile(`"expiration_time":-?[0-9]+`)
)

// masked is a znode with its clock and random parts replaced: the
// expiration by E, each version 4 UUID file name by U.offsets.
func masked(znode []byte) string {
	s := expiration.ReplaceAllString(string(znode), `"expiration_time":E`)
	return uuidFile.ReplaceAllString(s, "U.offsets")
}

// tree lists every file and folder under producers/<id> with its mode,
// UUID file names masked; nil when the folder does not exist.
func (b *beside) tree(t *testing.T, id string) map[string]fs.FileMode {
	t.Helper()
	dir := filepath.Join(b.remoteDir, "producers", id)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	m := map[string]fs.FileMode{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m[uuidFile.ReplaceAllString(rel, "U.offsets")] = fi.Mode()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// filesUnder lists the regular files under dir, recursively.
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// namedFiles requires the files under producers/<id> to be exactly those
// id's znode names, and returns them.
func (b *beside) namedFiles(t *testing.T, id string) []string {
	t.Helper()
	var named []string
	if z, _, _, ok := b.readZnode(t, id); ok {
		for _, tab := range z.Tables {
			named = append(named, localPath(t, tab.OffsetsPath))
		}
	}
	slices.Sort(named)
	have := filesUnder(t, filepath.Join(b.remoteDir, "producers", id))
	slices.Sort(have)
	if !slices.Equal(named, have) {
		t.Errorf("producer %s: the znode names %v, the directory holds %v", id, named, have)
	}
	return named
}

// TestBesideCoordinator runs a real 0.9.1 coordinator and a sidecar on one
// ZooKeeper root and remote directory (one cluster shared by the subtests)
// and shows that either reads what the other writes, the same bytes
// stored for equal input, one CREATED of two racing registers, deletes seen
// by both, and proxy mode answering as the coordinator does.
func TestBesideCoordinator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Fluss 0.9.1 cluster (JVMs) for about 20 s")
	}
	t.Parallel()
	b := startBeside(t, nil)
	side := b.sidecar(t, nil)
	coord := dialFluss(t, b.coordinator())
	sc := dialFluss(t, side.Addr())
	rt := createTables(t, coord)
	ttl := (24 * time.Hour).Milliseconds() // coordinator.producer-offsets.ttl on both
	writers := []struct {
		name string
		c    *wire.Client
	}{{"sidecar", sc}, {"coordinator", coord}}
	one := []bo{{rt.events, -1, 9, 12345}}

	// Register through one, GET through both: the same answer, the
	// registered offsets, the writer's expiration.
	t.Run("either_reads_the_other", func(t *testing.T) {
		for _, w := range writers {
			for _, in := range []struct {
				name string
				offs []bo
			}{{"many", manyOffsets(rt, int64(len(w.name)))}, {"one", one}, {"none", nil}} {
				id := in.name + "-by-" + w.name
				before, after := register(t, w.c, id, in.offs, nil)
				got := getBoth(t, sc, coord, id)
				checkGet(t, got, id, before+ttl, after+ttl, in.offs)
				b.namedFiles(t, id)
			}
		}
	})

	// The same input registered through each under one producer id (the
	// paths name it): the same znode and files but for the expiration, the
	// UUIDs and the znode's data version.
	t.Run("same_bytes_for_equal_input", func(t *testing.T) {
		for _, in := range []struct {
			name string
			offs []bo
		}{{"many", manyOffsets(rt, 7)}, {"one", one}, {"none", nil}} {
			id := "equal-input-" + in.name
			var got [2]stored
			for i, w := range writers {
				before, after := register(t, w.c, id, in.offs, nil)
				s, ok := b.snapshot(t, id)
				if !ok {
					t.Fatalf("%s: no znode after CREATED through the %s", id, w.name)
				}
				got[i] = s
				var z znodeJSON
				if err := json.Unmarshal(s.znode, &z); err != nil {
					t.Fatal(err)
				}
				if z.ExpirationTime < before+ttl || z.ExpirationTime > after+ttl {
					t.Errorf("%s through the %s: expiration_time %d is outside [%d, %d]", id, w.name, z.ExpirationTime, before+ttl, after+ttl)
				}
				if n := len(uuidFile.FindAll(s.znode, -1)); n != len(z.Tables) {
					t.Errorf("%s through the %s: %d of %d offsets_path end in a version 4 UUID: %s", id, w.name, n, len(z.Tables), s.znode)
				}
				mustSucceed(t, "DELETE "+id, callMsg(t, w.c, messages.KeyDeleteProducerOffsets, deleteReq(id)))
				if _, ok := b.snapshot(t, id); ok {
					t.Fatalf("%s: the znode outlives a DELETE through the %s", id, w.name)
				}
				if left := filesUnder(t, filepath.Join(b.remoteDir, "producers", id)); len(left) > 0 {
					t.Errorf("%s: a DELETE through the %s leaves %v", id, w.name, left)
				}
			}
			s, c := got[0], got[1]
			if masked(s.znode) != masked(c.znode) {
				t.Errorf("%s: the znodes differ beyond expiration and UUIDs:\n  sidecar:     %s\n  coordinator: %s", id, s.znode, c.znode)
			}
			if !maps.EqualFunc(s.files, c.files, bytes.Equal) {
				t.Errorf("%s: the offsets files differ:\n  sidecar:     %v\n  coordinator: %v", id, asText(s.files), asText(c.files))
			}
			if !maps.Equal(s.modes, c.modes) || !maps.Equal(s.tree, c.tree) {
				t.Errorf("%s: the directories differ:\n  sidecar:     %v %v\n  coordinator: %v %v", id, s.modes, s.tree, c.modes, c.tree)
			}
			if !slices.Equal(s.acl, c.acl) || s.stat.EphemeralOwner != 0 || c.stat.EphemeralOwner != 0 {
				t.Errorf("%s: znode ACLs %v and %v, ephemeral owners %d and %d", id, s.acl, c.acl, s.stat.EphemeralOwner, c.stat.EphemeralOwner)
			}
			// A coordinator never sets a producer znode's data: its
			// snapshots are at data version 0. The sidecar's are born at a
			// version in [1, 16], so that a coordinator's stale delete of
			// version 0 misses them (docs/semantics.md, W3; finding 2).
			if c.stat.Version != 0 || s.stat.Version < 1 || s.stat.Version > 16 {
				t.Errorf("%s: data versions %d (sidecar) and %d (coordinator), want 1-16 and 0", id, s.stat.Version, c.stat.Version)
			}
		}
	})

	// One REGISTER of an id through each at once, thirty ids: exactly one
	// CREATED, both encoding result the same way, and the winner's offsets
	// read back through both, its files alone left on disk.
	t.Run("racing_registers", func(t *testing.T) {
		const rounds = 30
		wins := map[string]int{}
		for i := range rounds {
			id := fmt.Sprintf("race-%02d", i)
			// The side with the larger input writes more files first: the
			// sizes alternate so that either may win.
			small := []bo{{rt.events, -1, int32(i % logBuckets), 1000 + int64(i)}}
			offs := map[string][]bo{"sidecar": small, "coordinator": manyOffsets(rt, int64(i))}
			if i%2 == 1 {
				offs["sidecar"], offs["coordinator"] = offs["coordinator"], small
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			var answers [2]wire.Response
			for j, w := range writers {
				body, err := proto.Marshal(registerRequest(id, offs[w.name]))
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					<-start
					r, err := w.c.CallRaw(ctx, messages.KeyRegisterProducerOffsets, 0, body)
					if err != nil {
						t.Errorf("REGISTER %s through the %s: %v", id, w.name, err)
					}
					answers[j] = r
				})
			}
			close(start)
			wg.Wait()
			if t.Failed() {
				t.FailNow()
			}
			winner := ""
			for j, w := range writers {
				switch r := answers[j]; {
				case r.Type == wire.ResponseSuccess && bytes.Equal(r.Body, []byte{0x08, 0x00}): // result 0
					if winner != "" {
						t.Errorf("%s: CREATED through both", id)
					}
					winner = w.name
				case r.Type == wire.ResponseSuccess && bytes.Equal(r.Body, []byte{0x08, 0x01}): // result 1
				default:
					t.Errorf("%s through the %s: answer %d %x (%v), want result 0 or 1", id, w.name, r.Type, r.Body, r.Err())
				}
			}
			if winner == "" {
				t.Fatalf("%s: no CREATED", id)
			}
			wins[winner]++
			got := getBoth(t, sc, coord, id)
			if g, w := offsetsOf(t, got), offsetsMap(offs[winner]); !maps.Equal(g, w) {
				t.Errorf("%s: GET holds %v, the winner (%s) registered %v", id, g, winner, w)
			}
			b.namedFiles(t, id)
		}
		t.Logf("CREATED of %d head-on races: %v", rounds, wins)
	})

	// A DELETE through either removes the snapshot for both: GETs through
	// both say not found (the sidecar's cache included, warmed by a GET
	// first), the znode and every file are gone.
	t.Run("deletes", func(t *testing.T) {
		for _, c := range []struct{ writer, deleter int }{{0, 1}, {1, 0}} {
			id := "delete-by-" + writers[c.deleter].name
			register(t, writers[c.writer].c, id, manyOffsets(rt, 3), nil)
			getBoth(t, sc, coord, id)
			r := callMsg(t, writers[c.deleter].c, messages.KeyDeleteProducerOffsets, deleteReq(id))
			if r.Type != wire.ResponseSuccess || len(r.Body) != 0 {
				t.Errorf("DELETE %s: answer %d %x, want an empty SUCCESS", id, r.Type, r.Body)
			}
			if got := getBoth(t, sc, coord, id); got.ProducerId != nil {
				t.Errorf("GET %s after its DELETE found %v", id, got)
			}
			if _, ok := b.snapshot(t, id); ok {
				t.Errorf("%s: the znode outlives its DELETE", id)
			}
			if left := filesUnder(t, filepath.Join(b.remoteDir, "producers", id)); len(left) > 0 {
				t.Errorf("%s: the DELETE leaves %v", id, left)
			}
		}
		rs := callMsg(t, sc, messages.KeyDeleteProducerOffsets, deleteReq("never-registered"))
		rc := callMsg(t, coord, messages.KeyDeleteProducerOffsets, deleteReq("never-registered"))
		sameAnswer(t, "DELETE never-registered", rs, rc)
	})

	// Snapshots of many tables and buckets, one written by hand: the same
	// bytes from both (and the golden answers of package sidecar).
	t.Run("coordinator_order", func(t *testing.T) { besideGetOrder(t, b, sc, coord, rt) })

	t.Run("proxy", func(t *testing.T) { besideProxy(t, b, coord, rt) })
}

// besideProxy starts a sidecar in proxy mode in front of the cluster's
// coordinator (found through ZooKeeper, its CLIENT listener) and sends the
// same calls through it and straight to the coordinator.
func besideProxy(t *testing.T, b *beside, coord *wire.Client, rt realTables) {
	px := b.sidecar(t, map[string]string{app.KeyMode: app.ModeProxy, app.KeyUpstreamListenerName: "CLIENT"})
	pc := dialFluss(t, px.Addr())
	ttl := (24 * time.Hour).Milliseconds()
	one := []bo{{rt.events, -1, 9, 12345}}
	reg := func(id string, offs []bo, ttl *int64) *messages.RegisterProducerOffsetsRequest {
		r := registerRequest(id, offs)
		r.TtlMs = ttl
		return r
	}
	del := func(id string) {
		t.Helper()
		mustSucceed(t, "DELETE "+id, callMsg(t, coord, messages.KeyDeleteProducerOffsets, deleteReq(id)))
	}

	// Answers that change nothing: invalid producer ids on every key.
	t.Run("invalid_ids", func(t *testing.T) {
		for _, id := range []string{"", ".", "..", "a b", strings.Repeat("x", 201), "ü", "a/b", "tab\t"} {
			for _, m := range []struct {
				key messages.Key
				req proto.Message
			}{
				{messages.KeyRegisterProducerOffsets, reg(id, one, nil)},
				{messages.KeyGetProducerOffsets, getReq(id)},
				{messages.KeyDeleteProducerOffsets, deleteReq(id)},
			} {
				rp, rc := callMsg(t, pc, m.key, m.req), callMsg(t, coord, m.key, m.req)
				sameAnswer(t, fmt.Sprintf("api key %d, id %.20q", m.key, id), rp, rc)
				if e := rc.Err(); rc.Type != wire.ResponseError || !strings.Contains(e.Error(), "(63)") {
					t.Errorf("api key %d, id %.20q: the coordinator answers %v, want 63", m.key, id, e)
				}
			}
		}
	})

	// The same state, the same call, through each: the same answer. Each
	// case runs through the proxy, its snapshot is deleted, then it runs
	// against the coordinator.
	t.Run("same_answers", func(t *testing.T) {
		// A step's want is the hex of the SUCCESS body both must answer
		// ("" empty), or "?" for an answer only compared.
		type step struct {
			key  messages.Key
			req  proto.Message
			want string
		}
		const (
			created       = "0800"
			alreadyExists = "0801"
			empty         = ""
			compared      = "?"
		)
		registerKey, getKey, deleteKey := messages.KeyRegisterProducerOffsets, messages.KeyGetProducerOffsets, messages.KeyDeleteProducerOffsets
		twice := reg("same-table-twice", []bo{{rt.audit, -1, 1, 5}}, nil)
		twice.TableOffsets = append(twice.TableOffsets, registerRequest("", []bo{{rt.audit, -1, 2, 6}}).TableOffsets...)
		emptyTable := reg("same-empty-table", nil, nil)
		emptyTable.TableOffsets = []*messages.PbProducerTableOffsets{{TableId: proto.Int64(rt.events)}}
		cases := []struct {
			name  string
			id    string
			setup []proto.Message // registers through the coordinator first
			steps []step
		}{
			{"new, again, get, delete, get", "same-new", nil, []step{
				{registerKey, reg("same-new", one, nil), created},
				{registerKey, reg("same-new", one, nil), alreadyExists},
				{getKey, getReq("same-new"), compared},
				{deleteKey, deleteReq("same-new"), empty},
				{getKey, getReq("same-new"), empty},
				{deleteKey, deleteReq("same-new"), empty},
			}},
			{"over a live snapshot", "same-live", []proto.Message{reg("same-live", one, nil)}, []step{
				{registerKey, reg("same-live", manyOffsets(rt, 1), nil), alreadyExists},
				{getKey, getReq("same-live"), compared},
			}},
			{"over an expired snapshot", "same-expired", []proto.Message{reg("same-expired", manyOffsets(rt, 2), proto.Int64(-1000))}, []step{
				{getKey, getReq("same-expired"), compared},
				{registerKey, reg("same-expired", one, proto.Int64(3_600_000)), created},
				{getKey, getReq("same-expired"), compared},
			}},
			{"born expired, ttl 0", "same-ttl-zero", nil, []step{
				{registerKey, reg("same-ttl-zero", one, proto.Int64(0)), created},
				{registerKey, reg("same-ttl-zero", one, proto.Int64(0)), created},
			}},
			{"a table without buckets", "same-empty-table", nil, []step{
				{registerKey, emptyTable, created},
				{getKey, getReq("same-empty-table"), compared},
			}},
			{"one table in two entries", "same-table-twice", nil, []step{
				{registerKey, twice, created},
				{getKey, getReq("same-table-twice"), compared},
			}},
			{"get missing, delete missing", "same-missing", nil, []step{
				{getKey, getReq("same-missing"), empty},
				{deleteKey, deleteReq("same-missing"), empty},
			}},
		}
		for _, c := range cases {
			var answers [2][]wire.Response
			for i, through := range []*wire.Client{pc, coord} {
				for _, m := range c.setup {
					mustSucceed(t, c.name+": setup", callMsg(t, coord, messages.KeyRegisterProducerOffsets, m))
				}
				for _, s := range c.steps {
					r := callMsg(t, through, s.key, s.req)
					if s.key == messages.KeyGetProducerOffsets && r.Type == wire.ResponseSuccess {
						// The two runs' snapshots were made at different
						// moments; the expiration subtest checks the field.
						r.Body = zeroExpiration(t, r.Body)
					}
					answers[i] = append(answers[i], r)
				}
				del(c.id)
			}
			for j, s := range c.steps {
				what := fmt.Sprintf("%s, step %d (api key %d)", c.name, j, s.key)
				sameGet(t, what, answers[0][j], answers[1][j])
				if r := answers[1][j]; s.want != compared && (r.Type != wire.ResponseSuccess || fmt.Sprintf("%x", r.Body) != s.want) {
					t.Errorf("%s: the coordinator answers %d %x, want SUCCESS %s", what, r.Type, r.Body, s.want)
				}
			}
		}
	})

	// A REGISTER through the proxy takes the coordinator's default TTL (24 h
	// on both): the GET of either shows an expiration inside the call's
	// window, and both read the same znode.
	t.Run("expiration", func(t *testing.T) {
		for _, w := range []struct {
			name string
			c    *wire.Client
		}{{"proxy", pc}, {"coordinator", coord}} {
			id := "expiry-through-" + w.name
			before, after := register(t, w.c, id, one, nil)
			got := getBoth(t, pc, coord, id)
			checkGet(t, got, id, before+ttl, after+ttl, one)
			del(id)
		}
	})

	// Inputs the sidecar refuses up front and a 0.9.1 coordinator takes or
	// fails on late (docs/semantics.md, "Input Fluss accepts badly"). Each
	// side's answer is pinned; what the coordinator stored is read back
	// through the proxy as the coordinator reads it, offsets below -1 and
	// bucket ids past 131071 included (finding 4 in compat_test/README.md).
	t.Run("documented_differences", func(t *testing.T) {
		noOffset := reg("diff-no-offset", nil, nil)
		noOffset.TableOffsets = []*messages.PbProducerTableOffsets{{TableId: proto.Int64(rt.events),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0)}}}}
		for _, c := range []struct {
			name    string
			req     *messages.RegisterProducerOffsetsRequest
			sidecar int32 // the sidecar's error code
			// coordinator: "" when it answers CREATED, else the start of
			// the message of its -1 answer.
			coordinator string
			// golden: the file of offsets/flussjson/testdata/offsets the
			// coordinator's one offsets file must equal byte for byte.
			golden string
		}{
			{name: "no log_end_offset", req: noOffset, sidecar: -1,
				coordinator: "org.apache.fluss.exception.UnknownServerException: Failed to register producer offsets for producer diff-no-offset\nCaused by: java.lang.IllegalStateException: Field 'log_end_offset' is not set"},
			{name: "negative offset", req: reg("diff-negative-offset", []bo{{rt.events, -1, 1, -5}}, nil), sidecar: -1},
			{name: "offsets below -1", req: reg("diff-offsets-below", []bo{{5, -1, 0, -1}, {5, -1, 1, -5}, {5, -1, 2, 7}, {5, -1, 3, math.MinInt64}}, nil), sidecar: -1,
				golden: "negative_offsets.json"},
			{name: "partitioned offsets below -1", req: reg("diff-offsets-below-partitioned", []bo{{6, 1, 0, -2}, {6, 3, 1, -1}, {6, 3, 2, 3}}, nil), sidecar: -1,
				golden: "negative_offsets_partitioned.json"},
			{name: "offset -1", req: reg("diff-offset-minus-one", []bo{{rt.events, -1, 1, -1}}, nil), sidecar: -1},
			{name: "offset -1 after an offset", req: reg("diff-offset-minus-one-last", []bo{{5, -1, 0, 3}, {5, -1, 1, -1}}, nil), sidecar: -1,
				golden: "offset_minus_one_last.json"},
			{name: "negative bucket", req: reg("diff-negative-bucket", []bo{{rt.events, -1, -1, 5}}, nil), sidecar: -1},
			{name: "bucket id 131072", req: reg("diff-bucket-past-limit", []bo{{5, -1, 131072, 9}}, nil), sidecar: 49, golden: "bucket_past_limit.json"},
			{name: "bucket id past 131071", req: reg("diff-huge-bucket", []bo{{rt.events, -1, 200_000, 5}}, nil), sidecar: 49},
			{name: "the same bucket twice", req: reg("diff-same-bucket", []bo{{rt.events, -1, 1, 5}, {rt.events, -1, 1, 6}}, nil), sidecar: -1},
			{name: "partitioned and not in one table", req: reg("diff-mixed", []bo{{rt.clicks, -1, 1, 5}, {rt.clicks, rt.partitions[0], 1, 6}}, nil), sidecar: -1,
				coordinator: "org.apache.fluss.exception.UnknownServerException: Failed to register producer offsets for producer diff-mixed\nCaused by: java.lang.IllegalStateException: partitionBuckets must be empty when nonPartitionBuckets is not empty"},
			{name: "ttl overflowing the expiration", req: reg("diff-ttl-overflow", one, proto.Int64(math.MaxInt64)), sidecar: -1},
		} {
			id := c.req.GetProducerId()
			rp := callMsg(t, pc, messages.KeyRegisterProducerOffsets, c.req)
			if code, _ := errorCode(rp); rp.Type != wire.ResponseError || code != c.sidecar {
				t.Errorf("%s through the proxy: %d %v, want error %d", c.name, rp.Type, rp.Err(), c.sidecar)
			}
			if tree := b.tree(t, id); tree != nil {
				t.Errorf("%s: the sidecar's refusal left %v", c.name, tree)
			}
			rc := callMsg(t, coord, messages.KeyRegisterProducerOffsets, c.req)
			if c.coordinator == "" {
				if res := strict(t, messages.KeyRegisterProducerOffsets, rc).(*messages.RegisterProducerOffsetsResponse); res.GetResult() != 0 {
					t.Errorf("%s: the coordinator answers result %d, want CREATED", c.name, res.GetResult())
				}
				if c.golden != "" {
					checkGoldenFile(t, b, id, c.golden)
				}
				// What it stored reads back through the proxy as it reads
				// it itself: a -1 offset as no bucket, a negative bucket as
				// bucket 0, every other offset and bucket id as it is.
				getBoth(t, pc, coord, id)
				del(id)
				continue
			}
			var m messages.ErrorResponse
			if err := proto.Unmarshal(rc.Body, &m); err != nil || rc.Type != wire.ResponseError || m.GetErrorCode() != -1 ||
				!strings.HasPrefix(m.GetErrorMessage(), c.coordinator) {
				t.Errorf("%s: the coordinator answers %d %v, want -1 starting %q", c.name, rc.Type, rc.Err(), c.coordinator)
			}
			if _, ok := b.snapshot(t, id); ok || len(filesUnder(t, filepath.Join(b.remoteDir, "producers", id))) > 0 {
				t.Errorf("%s: the coordinator's failure left a znode or files: %v", c.name, b.tree(t, id))
			}
		}
	})

	// What answered: the proxy answers API_VERSIONS with the coordinator's
	// bytes, and serves the producer-offsets keys itself (answered, never
	// forwarded), while it forwards GET_METADATA.
	t.Run("served_locally", func(t *testing.T) {
		av := &messages.ApiVersionsRequest{ClientSoftwareName: proto.String("fluss"), ClientSoftwareVersion: proto.String("0.1.0")}
		sameAnswer(t, "API_VERSIONS", callMsg(t, pc, messages.KeyAPIVersions, av), callMsg(t, coord, messages.KeyAPIVersions, av))
		// Fluss 0.9.1 has no GET_CLUSTER_HEALTH (1062): its coordinator does
		// not list it, so neither does the proxy in front of it, which
		// forwards the key rather than answer for the cluster. A release
		// that lists it needs its answer compared with ours here.
		coordAV := strict(t, messages.KeyAPIVersions, callMsg(t, coord, messages.KeyAPIVersions, av)).(*messages.ApiVersionsResponse)
		for _, v := range coordAV.GetApiVersions() {
			if v.GetApiKey() == int32(messages.KeyGetClusterHealth) {
				t.Errorf("the 0.9.1 coordinator lists GET_CLUSTER_HEALTH %d-%d: compare its answer's layout with the sidecar's", v.GetMinVersion(), v.GetMaxVersion())
			}
		}
		series := func(kind, request string) string {
			return `fluss_sidecar_` + kind + `{request="` + request + `"}`
		}
		keys := map[string]messages.Key{
			"registerProducerOffsets": messages.KeyRegisterProducerOffsets,
			"getProducerOffsets":      messages.KeyGetProducerOffsets,
			"deleteProducerOffsets":   messages.KeyDeleteProducerOffsets,
			"apiKey1012":              messages.KeyGetMetadata,
		}
		before := map[string][2]float64{}
		for name := range keys {
			before[name] = [2]float64{metric(t, px, series("request_requestsTotal", name)), metric(t, px, series("proxy_forwardedRequestsTotal", name))}
		}
		register(t, pc, "served-here", one, nil)
		strict(t, messages.KeyGetProducerOffsets, callMsg(t, pc, messages.KeyGetProducerOffsets, getReq("served-here")))
		mustSucceed(t, "DELETE", callMsg(t, pc, messages.KeyDeleteProducerOffsets, deleteReq("served-here")))
		md := strict(t, messages.KeyGetMetadata, callMsg(t, pc, messages.KeyGetMetadata, &messages.MetadataRequest{})).(*messages.MetadataResponse)
		if len(md.GetTabletServers()) != 1 {
			t.Errorf("GET_METADATA through the proxy names %d tablet servers, want 1", len(md.GetTabletServers()))
		}
		for name := range keys {
			served := metric(t, px, series("request_requestsTotal", name)) - before[name][0]
			fwd := metric(t, px, series("proxy_forwardedRequestsTotal", name)) - before[name][1]
			want := [2]float64{1, 0}
			if name == "apiKey1012" {
				want = [2]float64{1, 1} // answered counts forwarded answers too
			}
			if served != want[0] || fwd != want[1] {
				t.Errorf("%s: %v answered by the proxy, %v forwarded; want %v and %v", name, served, fwd, want[0], want[1])
			}
		}
	})
}

// checkGoldenFile requires id's snapshot to name one offsets file, the
// coordinator's bytes in offsets/flussjson/testdata/offsets/<golden>: the
// golden files the sidecar's reader is tested with are what a 0.9.1
// coordinator writes.
func checkGoldenFile(t *testing.T, b *beside, id, golden string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("..", "offsets", "flussjson", "testdata", "offsets", golden))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := b.snapshot(t, id)
	if !ok || len(s.files) != 1 {
		t.Fatalf("%s: the coordinator stored %v files (znode %v), want one", id, len(s.files), ok)
	}
	for _, got := range s.files {
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the coordinator wrote\n  %.300s\nand %s holds\n  %.300s", id, got, golden, want)
		}
	}
}

// TestBesideCoordinatorCleanup runs the coordinator's cleanup beside the
// sidecar's over one registry, with a short default TTL on both: first the
// coordinator's alone, then both together. Expired snapshots written by
// either go with their files, orphan files go, and live snapshots of either
// keep every file, even files old enough for the sidecar's grace period not
// to protect them.
func TestBesideCoordinatorCleanup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Fluss 0.9.1 cluster (JVMs) and waits for its cleanup runs, about 35 s")
	}
	t.Parallel()
	const (
		ttl = 3 * time.Second // coordinator.producer-offsets.ttl on both
		// The coordinator's cleanup runs at this fixed rate, first one
		// interval after its start. The test registers right after a run,
		// well inside one interval: a run deletes the files of a register
		// in flight (W2).
		coordInterval = 5 * time.Second
	)
	b := startBeside(t, map[string]string{
		"coordinator.producer-offsets.ttl":              ttl.String(),
		"coordinator.producer-offsets.cleanup-interval": coordInterval.String(),
	})
	started := fmt.Sprintf("Started producer snapshot manager with TTL=%d ms, cleanup interval=%d ms", ttl.Milliseconds(), coordInterval.Milliseconds())
	if log, err := os.ReadFile(b.cluster.Coordinator.LogPath()); err != nil || !bytes.Contains(log, []byte(started)) {
		t.Fatalf("the coordinator's log does not say %q (%v): the keys are not 0.9.1's", started, err)
	}
	// The first sidecar writes but does not clean up within the test.
	writer := b.sidecar(t, map[string]string{
		"coordinator.producer-offsets.ttl":              ttl.String(),
		"coordinator.producer-offsets.cleanup-interval": "1h",
	})
	coord := dialFluss(t, b.coordinator())
	rt := createTables(t, coord)
	producers := filepath.Join(b.remoteDir, "producers")
	longAgo := time.Now().Add(-2 * time.Hour)

	// plant writes a file under producers/ that no znode names; old sets
	// its modification time past the sidecar's grace period.
	plant := func(rel string, old bool) string {
		t.Helper()
		p := filepath.Join(producers, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{"version":1,"table_id":5,"bucket_offsets":[1]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if old {
			if err := os.Chtimes(p, longAgo, longAgo); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	gone := func(p string) bool { _, err := os.Stat(p); return errors.Is(err, fs.ErrNotExist) }
	markers := 0
	// coordinatorRun waits for a coordinator cleanup run that starts after
	// the call: only a coordinator removes a fresh orphan (the sidecars'
	// grace period is an hour).
	coordinatorRun := func(what string) {
		t.Helper()
		m := plant(fmt.Sprintf("marker-%d/5/00000000-0000-4000-8000-%012d.offsets", markers, markers), false)
		markers++
		eventually.True(t, what, func() bool { return gone(m) })
	}

	type snap struct {
		id   string
		offs []bo
	}
	var live []snap
	liveFiles := map[string][]byte{}
	hour := time.Hour.Milliseconds()
	// phase registers three live snapshots (an hour) and three expiring
	// ones (the default TTL) through the sidecar sc and through the
	// coordinator, and plants old orphans: one in a live producer's table
	// folder, one in a folder of a producer without a znode. It returns
	// the expiring ids and the orphans.
	phase := func(name string, sc *wire.Client) (expiring, orphans []string) {
		t.Helper()
		start := time.Now()
		for i, w := range []*wire.Client{sc, coord} {
			by := []string{"sidecar", "coordinator"}[i]
			for j := range 3 {
				l := snap{fmt.Sprintf("%s-live-%s-%d", name, by, j), manyOffsets(rt, int64(10*i+j))}
				register(t, w, l.id, l.offs, &hour)
				live = append(live, l)
				id := fmt.Sprintf("%s-expiring-%s-%d", name, by, j)
				before, after := register(t, w, id, manyOffsets(rt, int64(20*i+j)), nil)
				if z, _, _, ok := b.readZnode(t, id); ok && (z.ExpirationTime < before+ttl.Milliseconds() || z.ExpirationTime > after+ttl.Milliseconds()) {
					t.Errorf("%s through the %s: expiration_time %d is outside [%d, %d]: the default TTL is not %v",
						id, by, z.ExpirationTime, before+ttl.Milliseconds(), after+ttl.Milliseconds(), ttl)
				}
				expiring = append(expiring, id)
			}
		}
		if took := time.Since(start); took > coordInterval/2 {
			t.Logf("registering took %v, more than half the coordinator's cleanup interval: a run may have overlapped it (W2)", took)
		}
		// Old enough that the sidecar's grace period does not protect
		// them: only their names do.
		for _, l := range live {
			for _, p := range b.namedFiles(t, l.id) {
				body, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				liveFiles[p] = body
				if err := os.Chtimes(p, longAgo, longAgo); err != nil {
					t.Fatal(err)
				}
			}
		}
		orphans = []string{
			plant(name+"-live-sidecar-0/0/11111111-1111-4111-8111-111111111111.offsets", true),
			plant(name+"-live-coordinator-0/17/22222222-2222-4222-8222-222222222222.offsets", true),
			plant(name+"-ghost/5/33333333-3333-4333-8333-333333333333.offsets", true),
		}
		return expiring, orphans
	}
	// settled waits until the expiring snapshots and the orphans are gone,
	// then requires every live snapshot intact: read back through both,
	// every file unchanged, no file that no znode names, no folder of a
	// producer without a znode.
	settled := func(sc *wire.Client, expiring, orphans []string) {
		t.Helper()
		eventually.Nil(t, "the expired snapshots and the orphans to go", func() error {
			for _, id := range expiring {
				if _, _, _, ok := b.readZnode(t, id); ok {
					return fmt.Errorf("%s is still there", id)
				}
			}
			for _, o := range orphans {
				if !gone(o) {
					return fmt.Errorf("orphan %s is still there", o)
				}
			}
			return nil
		})
		for _, l := range live {
			got := getBoth(t, sc, coord, l.id)
			if g, w := offsetsOf(t, got), offsetsMap(l.offs); !maps.Equal(g, w) {
				t.Errorf("%s after cleanup: offsets %v, registered %v", l.id, g, w)
			}
			b.namedFiles(t, l.id)
		}
		for p, body := range liveFiles {
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, body) {
				t.Errorf("live file %s after cleanup: %q, %v", p, got, err)
			}
		}
		if all := filesUnder(t, producers); len(all) != len(liveFiles) {
			t.Errorf("%d files under producers/, the live snapshots name %d: %v", len(all), len(liveFiles), all)
		}
		eventually.Nil(t, "no folder of a producer without a snapshot", func() error {
			entries, err := os.ReadDir(producers)
			if err != nil {
				return err
			}
			var names, want []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			for _, l := range live {
				want = append(want, l.id)
			}
			slices.Sort(want)
			if !slices.Equal(names, want) {
				return fmt.Errorf("producers/ holds %v, want %v", names, want)
			}
			return nil
		})
	}

	// Phase 1, the coordinator's cleanup alone, over snapshots the sidecar
	// wrote too.
	t.Run("coordinator_alone", func(t *testing.T) {
		sc := dialFluss(t, writer.Addr())
		coordinatorRun("a coordinator cleanup run")
		expiring, orphans := phase("one", sc)
		coordinatorRun("a coordinator cleanup run after the snapshots were made")
		settled(sc, expiring, orphans)
		for _, series := range []string{"fluss_sidecar_cleanup_expiredSnapshotsRemovedTotal", "fluss_sidecar_cleanup_orphanFilesRemovedTotal"} {
			if v := metric(t, writer, series); v != 0 {
				t.Errorf("%s is %v: the sidecar cleaned up in the coordinator's phase", series, v)
			}
		}
	})

	// Phase 2, both cleanups: a sidecar cleaning every 300 ms (the writer
	// stops, so that the new one leads the sidecars' cleanup).
	t.Run("together", func(t *testing.T) {
		writer.Close()
		cleaner := b.sidecar(t, map[string]string{
			"coordinator.producer-offsets.ttl":              ttl.String(),
			"coordinator.producer-offsets.cleanup-interval": "300ms",
			"sidecar.orphan-cleanup.grace-period":           "1h",
		})
		sc := dialFluss(t, cleaner.Addr())
		eventually.True(t, "the new sidecar to lead cleanup", func() bool {
			return metric(t, cleaner, "fluss_sidecar_cleanup_leader") == 1
		})
		coordinatorRun("a coordinator cleanup run")
		expiring, orphans := phase("two", sc)
		runs := metric(t, cleaner, `fluss_sidecar_cleanup_runsTotal{result="ok"}`)
		coordinatorRun("a coordinator cleanup run after the snapshots were made")
		eventually.True(t, "two sidecar cleanup rounds after the snapshots were made", func() bool {
			return metric(t, cleaner, `fluss_sidecar_cleanup_runsTotal{result="ok"}`) >= runs+2
		})
		settled(sc, expiring, orphans)
		t.Logf("the sidecar removed %v expired snapshots and %v orphan files",
			metric(t, cleaner, "fluss_sidecar_cleanup_expiredSnapshotsRemovedTotal"),
			metric(t, cleaner, "fluss_sidecar_cleanup_orphanFilesRemovedTotal"))
	})
	t.Logf("the coordinator's cleanup reports:\n%s", strings.Join(cleanupLines(t, b.cluster.Coordinator.LogPath()), "\n"))
}

// cleanupLines are the coordinator log's reports of its cleanup runs.
func cleanupLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if strings.Contains(line, "Producer snapshot cleanup: removed") || strings.Contains(line, "Found orphan producer directory") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}
