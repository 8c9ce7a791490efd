package lincheck

import (
	"context"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/anishathalye/porcupine"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// staleFront is a deliberately stale target: a Fluss server that forwards
// every call to a real sidecar but answers GET from its own copy of the
// last answer for up to maxAge, never invalidated by writes. Clients of a
// stale front must produce non-linearizable histories.
type staleFront struct {
	up     *wire.Client
	maxAge time.Duration
	mu     sync.Mutex
	cache  map[string]staleEntry
	addr   string
}

type staleEntry struct {
	resp *messages.GetProducerOffsetsResponse
	at   time.Time
}

func newStaleFront(t *testing.T, upstream string, maxAge time.Duration) *staleFront {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	up, err := wire.Dial(ctx, upstream, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	f := &staleFront{up: up, maxAge: maxAge, cache: map[string]staleEntry{}}
	forward := func(key messages.Key, newResp func() proto.Message) wire.Handler {
		return func(ctx context.Context, _ *wire.Session, r *wire.Request) (proto.Message, error) {
			req := r.Msg
			resp := newResp()
			if err := f.up.Call(ctx, key, 0, req, resp); err != nil {
				return nil, err
			}
			return resp, nil
		}
	}
	mux := wire.NewMux(
		wire.API{Key: messages.KeyAPIVersions, Name: "API_VERSIONS",
			NewRequest: func() proto.Message { return &messages.ApiVersionsRequest{} },
			Handle:     forward(messages.KeyAPIVersions, func() proto.Message { return &messages.ApiVersionsResponse{} })},
		wire.API{Key: messages.KeyRegisterProducerOffsets, Name: "REGISTER_PRODUCER_OFFSETS",
			NewRequest: func() proto.Message { return &messages.RegisterProducerOffsetsRequest{} },
			Handle:     forward(messages.KeyRegisterProducerOffsets, func() proto.Message { return &messages.RegisterProducerOffsetsResponse{} })},
		wire.API{Key: messages.KeyDeleteProducerOffsets, Name: "DELETE_PRODUCER_OFFSETS",
			NewRequest: func() proto.Message { return &messages.DeleteProducerOffsetsRequest{} },
			Handle:     forward(messages.KeyDeleteProducerOffsets, func() proto.Message { return &messages.DeleteProducerOffsetsResponse{} })},
		wire.API{Key: messages.KeyGetProducerOffsets, Name: "GET_PRODUCER_OFFSETS",
			NewRequest: func() proto.Message { return &messages.GetProducerOffsetsRequest{} },
			Handle: func(ctx context.Context, _ *wire.Session, r *wire.Request) (proto.Message, error) {
				m := r.Msg
				pid := m.(*messages.GetProducerOffsetsRequest).GetProducerId()
				f.mu.Lock()
				e, ok := f.cache[pid]
				f.mu.Unlock()
				if ok && time.Since(e.at) < f.maxAge {
					return e.resp, nil
				}
				resp := &messages.GetProducerOffsetsResponse{}
				if err := f.up.Call(ctx, messages.KeyGetProducerOffsets, 0, m, resp); err != nil {
					return nil, err
				}
				f.mu.Lock()
				f.cache[pid] = staleEntry{resp: resp, at: time.Now()}
				f.mu.Unlock()
				return resp, nil
			}},
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.addr = ln.Addr().String()
	srv := wire.NewServer(wire.ServerConfig{Mux: mux, ListenerName: "FLUSS"})
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(context.Background(), ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return f
}

// TestCheckerCatchesStaleTarget runs the no-fault workload with sidecar B's
// clients behind a stale front (GET answers up to 100 ms old) and requires
// the checker to refuse the history: a checker that passes this is
// checking nothing. Whether one short run catches a stale answer is up to
// scheduling, so it tries up to three runs and needs one refusal.
func TestCheckerCatchesStaleTarget(t *testing.T) {
	// The sidecars themselves read without their cache, which is
	// linearizable on one ZooKeeper server with or without the shared
	// sync: the front is the only thing stale.
	noCache := map[string]string{"sidecar.snapshot-cache.max-bytes": "0"}
	p := plan{kv: []map[string]string{noCache, noCache}, front: func(t *testing.T, r *rig, i int) func() string {
		if i != 1 {
			return nil
		}
		f := newStaleFront(t, r.sidecars[1].Addr(), 100*time.Millisecond)
		return func() string { return f.addr }
	}}
	for run := 1; run <= 3; run++ {
		res := runPlan(t, p)
		switch res.verdict.Result {
		case porcupine.Illegal:
			t.Logf("run %d: refused, as it must be", run)
			os.Remove(res.verdict.Visualization) // expected: not worth keeping
			return
		case porcupine.Unknown:
			t.Fatalf("run %d: checker could not decide: %s", run, describeCounts(res.cnt))
		}
		t.Logf("run %d: the stale target went unnoticed; trying again", run)
	}
	t.Fatal("three histories through a target serving 100 ms old GETs were all found linearizable: the checker or the workload is blind")
}
