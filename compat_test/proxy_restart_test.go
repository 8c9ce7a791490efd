package compat

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// The proxy in front of a real single Fluss 0.9.1 coordinator that is
// restarted while clients write through the proxy: what the clients were
// told must match what the coordinator and the registry hold afterwards.

// restartOp is one write a load worker sent through the proxy and what it
// was told.
type restartOp struct {
	kind string // "database", "table" or "offsets"
	name string // database, table or producer id, each sent once
	// after: sent after the coordinator had restarted (its readiness
	// confirmed by GET_METADATA on its internal listener).
	after bool
	// answered: an answer came; code is its Fluss code (0 SUCCESS).
	answered bool
	code     flusserr.Code
	message  string // an error answer's message
	// lost is why no answer came (the connection ended first).
	lost error
}

// restartConn is one client connection of the load, shared by its
// workers; a worker that finds it ended opens the next one.
type restartConn struct {
	addr string
	mu   sync.Mutex
	c    *wire.Client
	// opened counts the connections made, the first included.
	opened int
}

// get returns the open connection, dialling a new one when the last has
// ended.
func (rc *restartConn) get(ctx context.Context) (*wire.Client, error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.c != nil {
		select {
		case <-rc.c.Done():
			rc.c = nil
		default:
			return rc.c, nil
		}
	}
	c, err := wire.Dial(ctx, rc.addr, wire.ClientOptions{})
	if err != nil {
		return nil, err
	}
	if _, err := c.Handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	rc.c = c
	rc.opened++
	return c, nil
}

func (rc *restartConn) close() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.c != nil {
		rc.c.Close()
	}
}

// The load's shape: restartConns client connections, each used by one
// worker of every kind at once.
const (
	restartConns = 3
	restartDB    = "restart"
	// restartCallBound only keeps a call that never gets an answer from
	// hanging the test; reaching it fails the test.
	restartCallBound = time.Minute
	// restartBackoff is a worker's pause after a write that failed.
	restartBackoff = 20 * time.Millisecond
)

var restartKinds = []string{"database", "table", "offsets"}

// TestProxyCoordinatorRestartUnderLoad: a proxy-mode sidecar (upstream
// from ZooKeeper) in front of a real 0.9.1 coordinator and one tablet
// server. Workers on several client connections create databases and
// tables (forwarded, each name once) and register producer offsets (the
// sidecar's own registry, each producer id once) while the coordinator is
// stopped and started again. Afterwards: every write acknowledged is
// there; every write answered with an error carries a code Fluss defines
// (never 65, never an "already exists" that would mean a write applied
// twice) and is counted as present or absent; every registry write
// answered was CREATED; a call without an answer ended with its
// connection (the proxy closes a client connection whose upstream
// connection failed, so the client reconnects), counted as present or
// absent, and none waited past its bound. The proxy's fail-over counters
// say whether the restarted coordinator answered NOT_COORDINATOR_LEADER
// (65) on its way back.
func TestProxyCoordinatorRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Fluss 0.9.1 cluster (JVMs) and restarts its coordinator, about 25 s")
	}
	t.Parallel()
	b := startBeside(t, nil)
	px := b.sidecar(t, map[string]string{app.KeyMode: app.ModeProxy, app.KeyUpstreamListenerName: "CLIENT"})
	direct := dialFluss(t, b.coordinator())
	mustSucceed(t, "CREATE_DATABASE "+restartDB, callRaw(t, direct, 1001, createDatabaseBody(restartDB)))

	var (
		mu        sync.Mutex
		ops       []restartOp
		restarted atomic.Bool
		seq       atomic.Int64
		// tableGate keeps CREATE_TABLE out of the coordinator's stop
		// (see the restart below).
		tableGate sync.RWMutex
	)
	// successes counts acknowledged writes by kind and by whether they were
	// sent after the restart.
	successes := map[string]*[2]atomic.Int64{}
	for _, k := range restartKinds {
		successes[k] = new([2]atomic.Int64)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	conns := make([]*restartConn, restartConns)
	for i := range conns {
		conns[i] = &restartConn{addr: px.Addr()}
		defer conns[i].close()
		for _, kind := range restartKinds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					op := restartOp{kind: kind, name: fmt.Sprintf("%s_%d", kind, seq.Add(1)), after: restarted.Load()}
					if kind == "table" {
						tableGate.RLock()
					}
					restartWrite(conns[i], &op)
					if kind == "table" {
						tableGate.RUnlock()
					}
					mu.Lock()
					ops = append(ops, op)
					mu.Unlock()
					if op.answered && op.code == flusserr.None {
						after := 0
						if op.after {
							after = 1
						}
						successes[kind][after].Add(1)
						continue
					}
					// A client backs off before it tries again; without
					// it a worker would spin on the answers the proxy
					// gives at once while the coordinator is down.
					backoff := time.NewTimer(restartBackoff)
					select {
					case <-stop:
					case <-backoff.C:
					}
					backoff.Stop()
				}
			}()
		}
	}
	stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopLoad()

	ackedBefore := func() error {
		for _, k := range restartKinds {
			if n := successes[k][0].Load(); n < 5 {
				return fmt.Errorf("%d %s writes acknowledged", n, k)
			}
		}
		return nil
	}
	eventually.Nil(t, "acknowledged writes of every kind before the restart", ackedBefore)

	ctx := t.Context()
	start := time.Now()
	// A Fluss 0.9.1 coordinator stopped while it creates a
	// table can leave the table's znode without data, and then fails to
	// start ("Fail to initialize coordinator context": the table does not
	// exist). So no CREATE_TABLE is in flight while it stops; databases
	// and producer offsets are, and tables are created again at once,
	// while it is down and while it starts.
	tableGate.Lock()
	b.cluster.Coordinator.Stop()
	tableGate.Unlock()
	if err := b.cluster.Restart(ctx, b.cluster.Coordinator); err != nil {
		t.Fatal(err)
	}
	restartTook := time.Since(start)
	restarted.Store(true)
	eventually.Nil(t, "acknowledged writes of every kind sent after the restart", func() error {
		for _, k := range restartKinds {
			if n := successes[k][1].Load(); n < 5 {
				return fmt.Errorf("%d %s writes sent after the restart acknowledged", n, k)
			}
		}
		return nil
	})
	stopLoad()

	checkRestartOps(t, b, px.Addr(), ops)
	opened := 0
	for _, c := range conns {
		opened += c.opened
	}
	t.Logf("the coordinator's restart took %v (stop, start, and its GET_METADATA naming the tablet server); the load opened %d client connections over %d slots",
		restartTook.Round(time.Millisecond), opened, restartConns)

	// What the proxy saw: did the restarted 0.9.1 coordinator answer 65
	// while it was not yet the leader?
	counters := map[string]float64{}
	for _, name := range []string{"upstreamAnswersTotal", "upstreamNotLeaderAnswersTotal", "resentRequestsTotal", "upstreamMovesTotal", "notLeaderPassedTotal"} {
		counters[name] = metric(t, px, "fluss_sidecar_proxy_"+name)
	}
	t.Logf("proxy fail-over counters: %v", counters)
	if counters["upstreamAnswersTotal"] == 0 {
		t.Error("fluss_sidecar_proxy_upstreamAnswersTotal is 0 after the load: the counters were not read")
	}
	if counters["notLeaderPassedTotal"] != 0 {
		t.Errorf("the proxy passed %v answers NOT_COORDINATOR_LEADER to clients", counters["notLeaderPassedTotal"])
	}
	if n := counters["upstreamNotLeaderAnswersTotal"]; n > 0 {
		t.Logf("the restarted coordinator answered NOT_COORDINATOR_LEADER %v times; the proxy sent %v requests again", n, counters["resentRequestsTotal"])
	} else {
		t.Logf("the restarted 0.9.1 coordinator never answered NOT_COORDINATOR_LEADER: its error table has no code 65")
	}
}

// restartWrite sends op's write through rc and records what came back.
func restartWrite(rc *restartConn, op *restartOp) {
	ctx, cancel := context.WithTimeout(context.Background(), restartCallBound)
	defer cancel()
	c, err := rc.get(ctx)
	if err != nil {
		op.lost = fmt.Errorf("opening a connection: %w", err)
		return
	}
	var key messages.Key
	var body []byte
	switch op.kind {
	case "database":
		key, body = 1001, createDatabaseBody(op.name)
	case "table":
		key, body = 1005, createTableBody(restartDB, op.name)
	case "offsets":
		key = messages.KeyRegisterProducerOffsets
		body, err = proto.Marshal(restartOffsets(op.name))
		if err != nil {
			panic(err)
		}
	}
	r, err := c.CallRaw(ctx, key, 0, body)
	if err != nil {
		op.lost = err
		return
	}
	op.answered = true
	if r.Type == wire.ResponseSuccess {
		if op.kind == "offsets" {
			m := &messages.RegisterProducerOffsetsResponse{}
			if err := proto.Unmarshal(r.Body, m); err != nil || m.GetResult() != 0 {
				// Not CREATED for a producer id sent once: recorded as a
				// failure the check reports.
				op.code = flusserr.UnknownServerError
				op.lost = fmt.Errorf("REGISTER answered %x (result %d, %v), want CREATED", r.Body, m.GetResult(), err)
			}
		}
		return
	}
	if fe, ok := flusserr.From(r.Err()); ok {
		op.code, op.message = fe.Code, fe.Message
		return
	}
	op.code = flusserr.UnknownServerError
	op.lost = fmt.Errorf("answer type %d: %v", r.Type, r.Err())
}

func createDatabaseBody(name string) []byte {
	return pbBytes(pbVarint(pbString(nil, 1, name), 2, 0), 3, []byte(`{"version":1,"custom_properties":{}}`))
}

// createTableBody is CREATE_TABLE of a log table of one bucket.
func createTableBody(db, name string) []byte {
	const descriptor = `{"version":1,"schema":{"version":1,"columns":[{"name":"id","data_type":{"type":"BIGINT"}}]},"partition_key":[],"bucket_key":[],"bucket_count":1,"properties":{},"custom_properties":{}}`
	return pbVarint(pbBytes(pbBytes(nil, 1, pbTablePath(db, name)), 2, []byte(descriptor)), 3, 0)
}

// restartOffsets is the register of one producer id: two buckets of an
// unused table id whose offsets come from the id, so a GET can tell them
// apart.
func restartOffsets(id string) *messages.RegisterProducerOffsetsRequest {
	n := int64(len(id)) * 1000
	for _, c := range id {
		n += int64(c)
	}
	return registerRequest(id, []bo{{unusedTableIDs[0], -1, 0, n}, {unusedTableIDs[0], -1, 1, n + 1}})
}

// checkRestartOps compares what the load was told with what the
// coordinator lists and what the registry answers, and logs the counts.
func checkRestartOps(t *testing.T, b *beside, proxyAddr string, ops []restartOp) {
	t.Helper()
	direct := dialFluss(t, b.coordinator())
	present := map[string]map[string]bool{
		"database": listNames(t, direct, 1003, nil),
		"table":    listNames(t, direct, 1008, pbString(nil, 1, restartDB)),
	}
	var ids []string
	for _, op := range ops {
		if op.kind == "offsets" {
			ids = append(ids, op.name)
		}
	}
	registry := registryOffsets(t, dialFluss(t, proxyAddr), ids)

	type tally struct{ acked, errPresent, errAbsent, lostPresent, lostAbsent int }
	tallies := map[string]*tally{}
	codes := map[string]int{}           // "kind code name" → answers
	firstMessage := map[string]string{} // the same → its first message
	var lostWhy []string
	failedAfter := 0
	for _, k := range restartKinds {
		tallies[k] = &tally{}
	}
	for _, op := range ops {
		tl := tallies[op.kind]
		var exists bool
		if op.kind == "offsets" {
			got := registry[op.name]
			exists = len(got) > 0
			if exists {
				if want := offsetsMap(restartOffsetsBo(op.name)); !maps.Equal(got, want) {
					t.Errorf("producer %s: GET answers %v, want the registered %v", op.name, got, want)
				}
			}
		} else {
			exists = present[op.kind][op.name]
		}
		switch {
		case op.answered && op.code == flusserr.None:
			tl.acked++
			if !exists {
				t.Errorf("%s %s was acknowledged and is absent afterwards", op.kind, op.name)
			}
		case op.answered:
			key := fmt.Sprintf("%s %s", op.kind, op.code.Name())
			if codes[key]++; codes[key] == 1 {
				firstMessage[key] = op.message
			}
			if exists {
				tl.errPresent++
			} else {
				tl.errAbsent++
			}
			checkRestartCode(t, op)
		default:
			lostWhy = append(lostWhy, fmt.Sprintf("%s %s: %v", op.kind, op.name, op.lost))
			if exists {
				tl.lostPresent++
			} else {
				tl.lostAbsent++
			}
			if errors.Is(op.lost, context.DeadlineExceeded) {
				t.Errorf("%s %s: no answer within %v: the connection hung", op.kind, op.name, restartCallBound)
			}
		}
		if op.kind == "offsets" && op.answered && op.code != flusserr.None {
			// The registry is the sidecar's own: a coordinator's restart
			// must not fail it. (A register can still go unanswered: the
			// proxy closes a client connection whose upstream connection
			// failed, and a request the client sends as it closes is
			// never read.)
			t.Errorf("producer offsets %s: answered %v (%v), want CREATED", op.name, op.code.Name(), op.lost)
		}
		if op.after && !(op.answered && op.code == flusserr.None) {
			failedAfter++
		}
	}
	for _, k := range restartKinds {
		tl := tallies[k]
		t.Logf("%-8s acknowledged and present %d; error answer, present %d, absent %d; no answer, present %d, absent %d",
			k, tl.acked, tl.errPresent, tl.errAbsent, tl.lostPresent, tl.lostAbsent)
	}
	for _, k := range slices.Sorted(maps.Keys(codes)) {
		t.Logf("error answers %s: %d, the first: %.200q", k, codes[k], firstMessage[k])
	}
	t.Logf("writes sent after the restart had returned that failed: %d", failedAfter)
	if len(lostWhy) > 0 {
		t.Logf("calls without an answer (%d): %s", len(lostWhy), strings.Join(lostWhy[:min(len(lostWhy), 5)], "; "))
	}
}

func restartOffsetsBo(id string) []bo {
	var out []bo
	for _, tab := range restartOffsets(id).GetTableOffsets() {
		for _, b := range tab.GetBucketOffsets() {
			out = append(out, bo{tab.GetTableId(), -1, b.GetBucketId(), b.GetLogEndOffset()})
		}
	}
	return out
}

// checkRestartCode fails the test unless an error answer carries a code a
// client can act on: one Fluss defines, not 65 (the proxy hides it), not
// UNKNOWN_SERVER_ERROR, and not "already exists" for a name sent once,
// which would mean the write was applied twice.
func checkRestartCode(t *testing.T, op restartOp) {
	t.Helper()
	switch op.code {
	case flusserr.NotCoordinatorLeader:
		t.Errorf("%s %s: the client saw NOT_COORDINATOR_LEADER (65)", op.kind, op.name)
	case flusserr.UnknownServerError:
		t.Errorf("%s %s: UNKNOWN_SERVER_ERROR, no code a client can act on: %v", op.kind, op.name, op.lost)
	case 6, 8: // DATABASE_ALREADY_EXIST, TABLE_ALREADY_EXIST
		t.Errorf("%s %s: %s for a name sent once: the write was applied twice", op.kind, op.name, op.code.Name())
	default:
		if _, ok := flusserr.Lookup(op.code); !ok {
			t.Errorf("%s %s: error code %d, which Fluss does not define", op.kind, op.name, op.code)
		}
	}
}

// listNames asks key (LIST_DATABASES or LIST_TABLES) with body and returns
// the names of field 1 of the answer.
func listNames(t *testing.T, c *wire.Client, key messages.Key, body []byte) map[string]bool {
	t.Helper()
	r := callRaw(t, c, key, body)
	mustSucceed(t, fmt.Sprintf("api key %d", key), r)
	_, lens := pbFields(t, r.Body)
	names := map[string]bool{}
	for _, n := range lens[1] {
		names[string(n)] = true
	}
	return names
}

// registryOffsets asks c for the producer offsets of every id, a few
// calls in flight at once, and returns them by id.
func registryOffsets(t *testing.T, c *wire.Client, ids []string) map[string]map[bo]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), restartCallBound)
	defer cancel()
	out := make(map[string]map[bo]int64, len(ids))
	var mu sync.Mutex
	var firstErr error
	next := make(chan string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				m := &messages.GetProducerOffsetsResponse{}
				err := c.Call(ctx, messages.KeyGetProducerOffsets, 0, getReq(id), m)
				got := map[bo]int64{}
				for _, tab := range m.GetTableOffsets() {
					for _, b := range tab.GetBucketOffsets() {
						k := bo{table: tab.GetTableId(), partition: -1, bucket: b.GetBucketId()}
						if b.PartitionId != nil {
							k.partition = b.GetPartitionId()
						}
						got[k] = b.GetLogEndOffset()
					}
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("GET_PRODUCER_OFFSETS %s: %w", id, err)
				}
				out[id] = got
				mu.Unlock()
			}
		}()
	}
	for _, id := range ids {
		next <- id
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		t.Fatal(firstErr)
	}
	return out
}
