package sidecar_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

func bo(bucket int32, offset int64) *messages.PbBucketOffset {
	return &messages.PbBucketOffset{BucketId: proto.Int32(bucket), LogEndOffset: proto.Int64(offset)}
}

func pbo(partition int64, bucket int32, offset int64) *messages.PbBucketOffset {
	return &messages.PbBucketOffset{PartitionId: proto.Int64(partition), BucketId: proto.Int32(bucket), LogEndOffset: proto.Int64(offset)}
}

func tbl(id int64, buckets ...*messages.PbBucketOffset) *messages.PbProducerTableOffsets {
	return &messages.PbProducerTableOffsets{TableId: proto.Int64(id), BucketOffsets: buckets}
}

func registerReq(id string, tables ...*messages.PbProducerTableOffsets) *messages.RegisterProducerOffsetsRequest {
	return &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String(id), TableOffsets: tables}
}

func register(t *testing.T, c *wire.Client, req *messages.RegisterProducerOffsetsRequest) int32 {
	t.Helper()
	resp := &messages.RegisterProducerOffsetsResponse{}
	if err := c.Call(t.Context(), messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil {
		t.Fatalf("register %s: %v", req.GetProducerId(), err)
	}
	if resp.Result == nil {
		t.Fatal("result must always be set (Rust reads absent as unknown)")
	}
	return resp.GetResult()
}

func get(t *testing.T, c *wire.Client, id string) *messages.GetProducerOffsetsResponse {
	t.Helper()
	resp := &messages.GetProducerOffsetsResponse{}
	if err := c.Call(t.Context(), messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, resp); err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return resp
}

func del(t *testing.T, c *wire.Client, id string) {
	t.Helper()
	if err := c.Call(t.Context(), messages.KeyDeleteProducerOffsets, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String(id)}, &messages.DeleteProducerOffsetsResponse{}); err != nil {
		t.Fatalf("delete %s: %v", id, err)
	}
}

// flat renders offsets as sorted "table/partition/bucket=offset" strings.
func flat(resp *messages.GetProducerOffsetsResponse) string {
	var out []string
	for _, t := range resp.GetTableOffsets() {
		for _, b := range t.GetBucketOffsets() {
			p := "-"
			if b.PartitionId != nil {
				p = fmt.Sprint(b.GetPartitionId())
			}
			if b.LogEndOffset == nil {
				p += "(no offset)"
			}
			out = append(out, fmt.Sprintf("%d/%s/%d=%d", t.GetTableId(), p, b.GetBucketId(), b.GetLogEndOffset()))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

func TestBootstrapsLikeAFlussCoordinator(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	c, err := wire.Dial(t.Context(), ts.addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	av, err := c.Handshake(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if av.ServerType == nil || av.GetServerType() != int32(messages.ServerTypeCoordinator) {
		t.Fatalf("server_type %v, want 1 (COORDINATOR): every Fluss server sends it", av.ServerType)
	}
	var keys []string
	for _, v := range av.GetApiVersions() {
		keys = append(keys, fmt.Sprintf("%d[%d,%d]", v.GetApiKey(), v.GetMinVersion(), v.GetMaxVersion()))
	}
	if got := strings.Join(keys, " "); got != "1000[0,0] 1012[0,0] 1038[0,0] 1053[0,0] 1054[0,0] 1055[0,0] 1062[0,0]" {
		t.Fatalf("api versions %s", got)
	}
	// The Java client's bootstrap request is an empty MetadataRequest.
	md := &messages.MetadataResponse{}
	if err := c.Call(t.Context(), messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, md); err != nil {
		t.Fatal(err)
	}
	coord := md.GetCoordinatorServer()
	if coord == nil || fmt.Sprintf("%s:%d", coord.GetHost(), coord.GetPort()) != ts.addr || coord.GetNodeId() != 0 {
		t.Fatalf("coordinator %v, want the sidecar at %s", coord, ts.addr)
	}
	if len(md.GetTabletServers()) != 1 || md.GetTabletServers()[0].GetNodeId() < 0 {
		t.Fatalf("want one alive tablet server with a non-negative id: %v", md.GetTabletServers())
	}
	if ts0 := md.GetTabletServers()[0]; fmt.Sprintf("%s:%d", ts0.GetHost(), ts0.GetPort()) != ts.tablet {
		t.Fatalf("tablet server %v, want the tablet endpoint at %s, not the coordinator's port", ts0, ts.tablet)
	}
	if len(md.GetPartitionMetadata()) != 0 {
		t.Fatal("partition_metadata breaks a Java client's bootstrap")
	}
}

// TestGoldenFrames drives the sidecar with the golden request bytes and
// compares every deterministic reply byte for byte (see testdata/golden.py).
func TestGoldenFrames(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	nc := ts.rawConn(t)
	exchange := func(req string) []byte {
		t.Helper()
		nc.Write(golden(t, req))
		return nc.ReadFrame()
	}
	for _, step := range []struct{ req, want string }{
		{"api_versions_request", "api_versions_response"},
		{"register_request", "register_response_created"},
		{"register_request", "register_response_already_exists"},
		{"get_request", "get_response_found"},
		{"delete_request", "delete_response"},
		{"get_request", "get_response_not_found"},
	} {
		if got, want := exchange(step.req), golden(t, step.want); !bytes.Equal(got, want) {
			t.Fatalf("%s:\n got % x\nwant % x", step.req, got, want)
		}
	}
	// Request 7 with an invalid producer id.
	body, _ := proto.Marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String("a b")})
	nc.Write(wire.AppendRequest(nil, wire.RequestHeader{APIKey: messages.KeyGetProducerOffsets, RequestID: 7}, body))
	if got, want := nc.ReadFrame(), golden(t, "error_63_response"); !bytes.Equal(got, want) {
		t.Fatalf("error 63:\n got % x\nwant % x", got, want)
	}
}

// TestMetadataNodeHasNoListeners pins the GET_METADATA answer: each
// PbServerNode carries node id, host and port only, as a coordinator's
// answer to clients does; listeners (field 4) would reveal every listener's
// address, the internal one included.
//
// Both endpoints answer the same bytes: the coordinator endpoint as the
// coordinator, the tablet endpoint as the one tablet server.
func TestMetadataNodeHasNoListeners(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{
		advertise:       &config.Listener{Name: "FLUSS", Host: "127.0.0.1", Port: 9123},
		advertiseTablet: &config.Listener{Name: "FLUSS", Host: "127.0.0.1", Port: 9124},
	})
	for _, tt := range []struct{ endpoint, addr string }{{"coordinator", ts.addr}, {"tablet server", ts.tablet}} {
		nc := rawConnTo(t, tt.addr)
		nc.Write(golden(t, "metadata_request_empty"))
		if got, want := nc.ReadFrame(), golden(t, "metadata_response"); !bytes.Equal(got, want) {
			t.Errorf("metadata from the %s endpoint:\n got % x\nwant % x", tt.endpoint, got, want)
		}
	}
}

// TestTabletEndpointGolden pins the tablet endpoint's answers: API_VERSIONS
// lists only what a tablet server serves of the sidecar's keys, with
// server_type 2; each producer offsets key is refused with
// UNSUPPORTED_VERSION naming it and the coordinator, the connection stays
// up, and the coordinator's data is untouched.
func TestTabletEndpointGolden(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	c := ts.dial(t)
	if r := register(t, c, registerReq("job-1", tbl(7, bo(0, 1)))); r != 0 {
		t.Fatalf("register on the coordinator: %d", r)
	}
	nc := rawConnTo(t, ts.tablet)
	for _, step := range []struct{ req, want string }{
		{"api_versions_request", "tablet_api_versions_response"},
		{"register_request", "tablet_register_elsewhere"},
		{"get_request", "tablet_get_elsewhere"},
		{"delete_request", "tablet_delete_elsewhere"},
		// Still up and still the tablet server.
		{"api_versions_request", "tablet_api_versions_response"},
	} {
		nc.Write(golden(t, step.req))
		if got, want := nc.ReadFrame(), golden(t, step.want); !bytes.Equal(got, want) {
			t.Fatalf("%s on the tablet endpoint:\n got % x\nwant % x", step.req, got, want)
		}
	}
	if got := flat(get(t, c, "job-1")); got != "7/-/0=1" {
		t.Fatalf("the coordinator's snapshot after the refused delete: %q", got)
	}
}

// TestErrorTextGolden pins the bytes of error answers built from hostile
// input: invalid UTF-8 is sent as U+FFFD, a long echoed id is cut to 256
// characters and its length, and a decode error names the Fluss message
// and field in plain words.
func TestErrorTextGolden(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	nc := ts.rawConn(t)
	partial := func(m proto.Message) []byte {
		b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	noBucketID := registerReq("job-1", tbl(100, bo(0, 42), &messages.PbBucketOffset{LogEndOffset: proto.Int64(1)}))
	for _, tt := range []struct {
		key  messages.Key
		id   int32
		body []byte
		want string
	}{
		{messages.KeyGetProducerOffsets, 8, partial(&messages.GetProducerOffsetsRequest{ProducerId: proto.String("a\xffb")}), "error_63_invalid_utf8"},
		{messages.KeyGetProducerOffsets, 9, partial(&messages.GetProducerOffsetsRequest{ProducerId: proto.String(strings.Repeat("x", 300))}), "error_63_long_id"},
		{messages.KeyRegisterProducerOffsets, 10, partial(noBucketID), "error_decode_missing_bucket_id"},
	} {
		nc.Write(wire.AppendRequest(nil, wire.RequestHeader{APIKey: tt.key, RequestID: tt.id}, tt.body))
		got := nc.ReadFrame()
		if want := golden(t, tt.want); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got % x\nwant % x", tt.want, got, want)
		}
		if bytes.Contains(got, []byte("flusssidecar")) || bytes.Contains(got, []byte("\u00a0")) {
			t.Errorf("%s leaks our proto package or a non-breaking space: %q", tt.want, got)
		}
	}
}

// TestHugeInvalidIDGetsAShortAnswer: a 48 MiB producer id used to come
// back twice in the error message (a 100 MB answer).
func TestHugeInvalidIDGetsAShortAnswer(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	c := ts.dial(t)
	id := strings.Repeat("x", 48<<20)
	err := c.Call(t.Context(), messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: &id}, &messages.GetProducerOffsetsResponse{})
	fe, ok := flusserr.From(err)
	if !ok || fe.Code != flusserr.InvalidProducerID {
		t.Fatalf("want code 63, got %v", err)
	}
	if len(fe.Message) > 1024 || !strings.Contains(fe.Message, "(50331648 bytes in all)") {
		t.Fatalf("answer of %d bytes: %.300q", len(fe.Message), fe.Message)
	}
}

// versions lists keys served at version 0 only.
func versions(keys ...int32) []*messages.PbApiVersion {
	out := make([]*messages.PbApiVersion, len(keys))
	for i, k := range keys {
		out[i] = &messages.PbApiVersion{ApiKey: proto.Int32(k), MinVersion: proto.Int32(0), MaxVersion: proto.Int32(0)}
	}
	return out
}

// TestOurEncoderMatchesGolden checks that the Go messages and framing
// produce the hand-derived bytes.
func TestOurEncoderMatchesGolden(t *testing.T) {
	enc := func(key messages.Key, id int32, m proto.Message) []byte {
		body, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return wire.AppendRequest(nil, wire.RequestHeader{APIKey: key, RequestID: id}, body)
	}
	success := func(id int32, m proto.Message) []byte {
		body, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return wire.AppendSuccess(nil, id, body)
	}
	healthResp := func(status int32) *messages.GetClusterHealthResponse {
		return &messages.GetClusterHealthResponse{NumReplicas: proto.Int32(0), InSyncReplicas: proto.Int32(0),
			NumLeaderReplicas: proto.Int32(0), ActiveLeaderReplicas: proto.Int32(0), Status: proto.Int32(status)}
	}
	job1 := registerReq("job-1", tbl(100, bo(0, 42)), tbl(200, pbo(5, 1, 7)))
	cases := map[string][]byte{
		"api_versions_request":             enc(1000, 0, &messages.ApiVersionsRequest{ClientSoftwareName: proto.String("fluss"), ClientSoftwareVersion: proto.String("0.1.0")}),
		"register_request":                 enc(1053, 1, job1),
		"get_request":                      enc(1054, 2, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("job-1")}),
		"delete_request":                   enc(1055, 3, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String("job-1")}),
		"metadata_request_empty":           enc(1012, 4, &messages.MetadataRequest{}),
		"register_response_created":        success(1, &messages.RegisterProducerOffsetsResponse{Result: proto.Int32(0)}),
		"register_response_already_exists": success(1, &messages.RegisterProducerOffsetsResponse{Result: proto.Int32(1)}),
		"get_response_not_found":           success(2, &messages.GetProducerOffsetsResponse{}),
		"delete_response":                  success(3, &messages.DeleteProducerOffsetsResponse{}),
		"error_63_bare":                    wire.AppendError(nil, 7, 63, ""),
		"error_minus1_bare":                wire.AppendError(nil, 3, -1, ""),
		"server_failure_minus1":            wire.AppendServerFailure(nil, -1, "frame length 2147483647 exceeds the limit"),
		"api_versions_response": success(0, &messages.ApiVersionsResponse{
			ApiVersions: versions(1000, 1012, 1038, 1053, 1054, 1055, 1062), ServerType: messages.ServerTypeCoordinator.Int32(),
		}),
		"tablet_api_versions_response": success(0, &messages.ApiVersionsResponse{
			ApiVersions: versions(1000, 1012, 1038, 1062), ServerType: messages.ServerTypeTabletServer.Int32(),
		}),
		"cluster_health_request":          enc(1062, 11, &messages.GetClusterHealthRequest{}),
		"cluster_health_response_green":   success(11, healthResp(0)),
		"cluster_health_response_red":     success(11, healthResp(2)),
		"cluster_health_response_unknown": success(11, healthResp(3)),
		"metadata_response": success(4, &messages.MetadataResponse{
			CoordinatorServer: &messages.PbServerNode{NodeId: proto.Int32(0), Host: proto.String("127.0.0.1"), Port: proto.Int32(9123)},
			TabletServers:     []*messages.PbServerNode{{NodeId: proto.Int32(0), Host: proto.String("127.0.0.1"), Port: proto.Int32(9124)}},
		}),
		"get_response_found": success(2, &messages.GetProducerOffsetsResponse{
			ProducerId: proto.String("job-1"), ExpirationTime: proto.Int64(1735538268000 + 86400000),
			TableOffsets: []*messages.PbProducerTableOffsets{tbl(100, bo(0, 42)), tbl(200, pbo(5, 1, 7))},
		}),
	}
	for name, got := range cases {
		if want := golden(t, name); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got % x\nwant % x", name, got, want)
		}
	}
}

// TestProducerOffsetsITCase mirrors Fluss's RPC-level tests of the feature.
func TestProducerOffsetsITCase(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	c := ts.dial(t)

	if r := register(t, c, registerReq("job", tbl(1, bo(0, 10), bo(1, 20)), tbl(2, bo(0, 30)))); r != 0 {
		t.Fatalf("first register: %d, want CREATED", r)
	}
	got := get(t, c, "job")
	if got.GetProducerId() != "job" || got.GetExpirationTime() <= testClock.UnixMilli() {
		t.Fatalf("get: %v", got)
	}
	if flat(got) != "1/-/0=10 1/-/1=20 2/-/0=30" {
		t.Fatalf("offsets %s", flat(got))
	}
	if r := register(t, c, registerReq("job", tbl(1, bo(0, 99)))); r != 1 {
		t.Fatalf("second register: %d, want ALREADY_EXISTS", r)
	}
	if flat(get(t, c, "job")) != "1/-/0=10 1/-/1=20 2/-/0=30" {
		t.Fatal("ALREADY_EXISTS changed the stored offsets")
	}

	if get(t, c, "missing").ProducerId != nil {
		t.Fatal("a missing producer must be an empty response")
	}
	del(t, c, "job")
	if get(t, c, "job").ProducerId != nil {
		t.Fatal("still there after delete")
	}
	del(t, c, "never-existed")

	// Six mixed partitioned buckets.
	register(t, c, registerReq("parts", tbl(3, pbo(1, 0, 1), pbo(1, 1, 2), pbo(2, 0, 3)), tbl(4, pbo(9, 0, 4), pbo(9, 2, 5)), tbl(5, bo(1, 6))))
	if got := flat(get(t, c, "parts")); got != "3/1/0=1 3/1/1=2 3/2/0=3 4/9/0=4 4/9/2=5 5/-/1=6" {
		t.Fatalf("partitioned round trip: %s", got)
	}

	// Empty offsets.
	if r := register(t, c, registerReq("empty")); r != 0 {
		t.Fatal("empty register")
	}
	if e := get(t, c, "empty"); e.ProducerId == nil || len(e.GetTableOffsets()) != 0 {
		t.Fatalf("empty snapshot: %v", e)
	}

	// 100 tables x 10 buckets.
	var tables []*messages.PbProducerTableOffsets
	for tb := int64(0); tb < 100; tb++ {
		var bs []*messages.PbBucketOffset
		for b := int32(0); b < 10; b++ {
			bs = append(bs, bo(b, tb*1000+int64(b)))
		}
		tables = append(tables, tbl(tb, bs...))
	}
	register(t, c, registerReq("big", tables...))
	big := get(t, c, "big")
	n := 0
	for _, tb := range big.GetTableOffsets() {
		for _, b := range tb.GetBucketOffsets() {
			n++
			if b.GetLogEndOffset() != tb.GetTableId()*1000+int64(b.GetBucketId()) {
				t.Fatalf("table %d bucket %d = %d", tb.GetTableId(), b.GetBucketId(), b.GetLogEndOffset())
			}
		}
	}
	if n != 1000 || !strings.Contains(flat(big), "50/-/5=50005") {
		t.Fatalf("want 1000 offsets including 50/-/5=50005, got %d", n)
	}
}

func TestTenConcurrentRegistrationsGiveOneCreated(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	results := make([]int32, 10)
	var wg sync.WaitGroup
	for i := range results {
		c := ts.dial(t) // one connection each, like ten writers
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp := &messages.RegisterProducerOffsetsResponse{}
			if err := c.Call(context.Background(), messages.KeyRegisterProducerOffsets, 0, registerReq("shared", tbl(1, bo(0, int64(i)))), resp); err != nil {
				t.Error(err)
			}
			results[i] = resp.GetResult()
		}(i)
	}
	wg.Wait()
	created := 0
	for _, r := range results {
		if r == 0 {
			created++
		}
	}
	if created != 1 {
		t.Fatalf("want exactly one CREATED, got %v", results)
	}
	if n := len(ts.offsetsFiles(t)); n != 1 {
		t.Fatalf("want one offsets file (the winner's), got %d", n)
	}
}

// TestPipelinedRepliesComeOutOfOrder holds one register inside the store
// while later requests on the same connection are answered, then lets it go.
func TestPipelinedRepliesComeOutOfOrder(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{gateID: "slow"})
	c := ts.dial(t)
	register(t, c, registerReq("fast", tbl(1, bo(0, 1))))

	slowDone := make(chan int32, 1)
	go func() {
		resp := &messages.RegisterProducerOffsetsResponse{}
		if err := c.Call(context.Background(), messages.KeyRegisterProducerOffsets, 0, registerReq("slow", tbl(1, bo(0, 2))), resp); err != nil {
			t.Error(err)
		}
		slowDone <- resp.GetResult()
	}()
	<-ts.gated.entered // the slow register is now in flight
	// Many later requests on the same connection are answered meanwhile.
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("p-%d", i)
			if i%2 == 0 {
				if g := get(t, c, "fast"); flat(g) != "1/-/0=1" {
					t.Errorf("get fast: %s", flat(g))
				}
				return
			}
			if r := register(t, c, registerReq(id, tbl(int64(i), bo(0, int64(i))))); r != 0 {
				t.Errorf("register %s: %d", id, r)
			}
			if g := get(t, c, id); flat(g) != fmt.Sprintf("%d/-/0=%d", i, i) {
				t.Errorf("get %s: %s", id, flat(g))
			}
		}(i)
	}
	wg.Wait()
	select {
	case r := <-slowDone:
		t.Fatalf("the held request answered before release: %d", r)
	default:
	}
	close(ts.gated.gate)
	if r := <-slowDone; r != 0 {
		t.Fatalf("slow register: %d", r)
	}
}

func TestBadInputGetsAClearErrorAndKeepsServing(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	c := ts.dial(t)
	register(t, c, registerReq("keep", tbl(1, bo(0, 10), bo(1, 11))))
	before := flat(get(t, c, "keep"))

	marshal := func(m proto.Message) []byte {
		b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	noOffset := registerReq("keep", tbl(1, &messages.PbBucketOffset{BucketId: proto.Int32(0)}))
	cases := []struct {
		name    string
		key     messages.Key
		version int16
		body    []byte
		code    flusserr.Code
		text    string
	}{
		{"unknown api key", 1099, 0, nil, 2, "1099"},
		{"version out of range", messages.KeyRegisterProducerOffsets, 1, marshal(registerReq("keep")), 2, "version"},
		{"garbage body", messages.KeyGetProducerOffsets, 0, []byte{0xff, 0xff, 0xff}, 3, ""},
		{"missing producer_id", messages.KeyGetProducerOffsets, 0, nil, 3, "producer_id"},
		{"missing nested bucket_id", messages.KeyRegisterProducerOffsets, 0, marshal(registerReq("keep", tbl(1, &messages.PbBucketOffset{LogEndOffset: proto.Int64(1)}))), 3, "bucket_id"},
		{"missing log_end_offset", messages.KeyRegisterProducerOffsets, 0, marshal(noOffset), -1, "no log_end_offset"},
		{"mixed buckets", messages.KeyRegisterProducerOffsets, 0, marshal(registerReq("keep", tbl(1, bo(0, 1), pbo(2, 1, 1)))), -1, "mixes partitioned and non-partitioned"},
		{"negative bucket", messages.KeyRegisterProducerOffsets, 0, marshal(registerReq("keep", tbl(1, bo(-1, 1)))), -1, "negative bucket id"},
		{"duplicate bucket", messages.KeyRegisterProducerOffsets, 0, marshal(registerReq("keep", tbl(1, bo(0, 1)), tbl(1, bo(0, 2)))), -1, "more than once"},
		{"huge bucket", messages.KeyRegisterProducerOffsets, 0, marshal(registerReq("keep", tbl(1, bo(1<<31-1, 1)))), 49, "exceeds the maximum"},
		{"ttl overflow", messages.KeyRegisterProducerOffsets, 0, marshal(&messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("keep"), TtlMs: proto.Int64(1<<63 - 1)}), -1, "overflows"},
		{"invalid id register", messages.KeyRegisterProducerOffsets, 0, marshal(registerReq("ke/ep")), 63, "Invalid producer ID 'ke/ep'"},
		{"invalid id get", messages.KeyGetProducerOffsets, 0, marshal(&messages.GetProducerOffsetsRequest{ProducerId: proto.String("..")}), 63, "Invalid producer ID '..': '..' is not allowed"},
		{"invalid id delete", messages.KeyDeleteProducerOffsets, 0, marshal(&messages.DeleteProducerOffsetsRequest{ProducerId: proto.String("")}), 63, "Invalid producer ID '': the empty string is not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := c.CallRaw(t.Context(), tc.key, tc.version, tc.body)
			if err != nil {
				t.Fatalf("transport error: %v", err)
			}
			fe, ok := flusserr.From(resp.Err())
			if resp.Type != wire.ResponseError || !ok {
				t.Fatalf("want ERROR_RESPONSE, got %v %v", resp.Type, resp.Err())
			}
			if fe.Code != tc.code || !strings.Contains(fe.Message, tc.text) {
				t.Fatalf("got %d %q, want %d containing %q", fe.Code, fe.Message, tc.code, tc.text)
			}
		})
	}
	if after := flat(get(t, c, "keep")); after != before {
		t.Fatalf("stored data changed: %s -> %s", before, after)
	}
	if n := len(ts.offsetsFiles(t)); n != 1 {
		t.Fatalf("bad input left files behind: %d files", n)
	}
}

func TestUnreadableFrameClosesOnlyThatConnection(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{maxFrame: 1 << 20})
	c := ts.dial(t)
	register(t, c, registerReq("safe", tbl(1, bo(0, 5))))

	for name, frame := range map[string][]byte{
		"oversized": {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0},
		"negative":  {0xff, 0xff, 0xff, 0xf0},
		"short":     {0, 0, 0, 3, 1, 2, 3},
	} {
		t.Run(name, func(t *testing.T) {
			nc := ts.rawConn(t)
			nc.Write(frame)
			r, err := nc.TryRead()
			if err != nil || r.Type != wire.ResponseServerFailure {
				t.Fatalf("want SERVER_FAILURE, got %v %v", r.Type, err)
			}
			nc.ExpectClosed("after SERVER_FAILURE")
		})
	}
	// Other connections are untouched and the data is intact.
	if flat(get(t, c, "safe")) != "1/-/0=5" {
		t.Fatal("data changed")
	}
	if flat(get(t, ts.dial(t), "safe")) != "1/-/0=5" {
		t.Fatal("new connection failed")
	}
}

// TestZooKeeperLossIsRetriableAndRecovers stops ZooKeeper under the sidecar:
// requests fail with a retriable code and no hang, and work again after it
// comes back.
func TestZooKeeperLossIsRetriableAndRecovers(t *testing.T) {
	zks := zktest.StartT(t)
	ts := startSidecar(t, sidecarOpts{zkAddr: zks.Addr, requestTimeout: 2 * time.Second})
	c := ts.dial(t)
	register(t, c, registerReq("before", tbl(1, bo(0, 1))))

	zks.Stop()
	resp := &messages.RegisterProducerOffsetsResponse{}
	err := c.Call(t.Context(), messages.KeyRegisterProducerOffsets, 0, registerReq("during", tbl(1, bo(0, 2))), resp)
	fe, ok := flusserr.From(err)
	if !ok || !fe.Retriable() {
		t.Fatalf("want a retriable Fluss error, got %v", err)
	}
	if err := zks.Restart(t.Context()); err != nil {
		t.Fatal(err)
	}
	// The client reconnects by itself; retry as a client would.
	var got *messages.GetProducerOffsetsResponse
	eventually.Nil(t, "a GET after the restart", func() error {
		got = &messages.GetProducerOffsetsResponse{}
		return c.Call(t.Context(), messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("before")}, got)
	})
	if flat(got) != "1/-/0=1" {
		t.Fatalf("after restart: %s", flat(got))
	}
}

// TestClientResetDuringRegisterLosesNothing: clients send a register and
// reset the connection (RST) 0–6 ms later, as in the run that left 12 of 17
// snapshots naming a deleted file. Afterwards every snapshot stored is
// readable through the wire.
func TestClientResetDuringRegisterLosesNothing(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	const rounds = 200
	for i := range rounds {
		body, err := proto.Marshal(registerReq(fmt.Sprintf("rst-%d", i), tbl(7, bo(0, int64(i)))))
		if err != nil {
			t.Fatal(err)
		}
		nc := ts.rawConn(t)
		frame := wire.AppendRequest(nil, wire.RequestHeader{APIKey: messages.KeyRegisterProducerOffsets, RequestID: 1}, body)
		nc.Write(frame)
		time.Sleep(time.Duration(rand.IntN(6000)) * time.Microsecond) // the sleep is under test: the reset comes 0-6 ms after the register
		nc.Net().(*net.TCPConn).SetLinger(0)                          // close with a reset
		nc.Net().Close()
	}
	if err := ts.registry.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := ts.dial(t)
	stored := 0
	for i := range rounds {
		resp := get(t, c, fmt.Sprintf("rst-%d", i)) // fails the test on an error answer
		if resp.ProducerId == nil {
			continue
		}
		stored++
		if got, want := flat(resp), fmt.Sprintf("7/-/0=%d", i); got != want {
			t.Fatalf("rst-%d holds %s, want %s", i, got, want)
		}
	}
	t.Logf("%d registers cut by a reset: %d stored, all readable", rounds, stored)
}

// TestGetAnswersCoordinatorOffsets: a snapshot a Fluss 0.9.1 coordinator
// stores for input the sidecar refuses on REGISTER (offsets below 0, a
// bucket id past 131071, an offset of -1) is answered as the coordinator's
// GET answers it: every entry of its file but -1, whatever its value. The
// files are the coordinator's bytes (offsets/flussjson/testdata/offsets,
// compared with a real coordinator's by compat_test's
// TestBesideCoordinator).
func TestGetAnswersCoordinatorOffsets(t *testing.T) {
	ts := startSidecar(t, sidecarOpts{})
	c := ts.dial(t)
	ctx := t.Context()
	for _, tt := range []struct {
		id, file string
		table    int64
		want     string // flat
	}{
		{"negative", "negative_offsets.json", 5, "5/-/1=-5 5/-/2=7 5/-/3=-9223372036854775808"},
		{"negative-partitioned", "negative_offsets_partitioned.json", 6, "6/1/0=-2 6/3/2=3"},
		{"past-limit", "bucket_past_limit.json", 5, "5/-/131072=9"},
		{"minus-one", "offset_minus_one_last.json", 5, "5/-/0=3"},
	} {
		t.Run(tt.id, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "offsets", "flussjson", "testdata", "offsets", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			local := filepath.Join(ts.dir, "producers", tt.id, strconv.FormatInt(tt.table, 10), "6f1c0b52-8d3e-4c1a-9b7e-2f4d5a6b7c8d.offsets")
			if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(local, data, 0o644); err != nil {
				t.Fatal(err)
			}
			znode := flussjson.EncodeSnapshot(offsets.Snapshot{ExpirationTime: testClock.UnixMilli() + 1000,
				Tables: []offsets.FileRef{{TableID: tt.table, OffsetsPath: "file:" + local}}})
			if _, err := ts.zc.Create(ctx, "/producers/"+tt.id, znode, zk.Persistent); err != nil {
				t.Fatal(err)
			}
			got := get(t, c, tt.id)
			if got.GetProducerId() != tt.id || got.GetExpirationTime() != testClock.UnixMilli()+1000 || len(got.GetTableOffsets()) != 1 {
				t.Fatalf("get: %v", got)
			}
			if flat(got) != tt.want {
				t.Errorf("offsets %s, want %s", flat(got), tt.want)
			}
			del(t, c, tt.id)
			if _, err := os.Stat(local); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the file is left after DELETE: %v", err)
			}
		})
	}
}
