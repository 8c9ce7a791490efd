package embedded_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/assembly"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func start(t *testing.T, cfg embedded.Config) *embedded.Server {
	t.Helper()
	s, err := embedded.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func dial(t *testing.T, addr string) *wire.Client {
	t.Helper()
	c, err := wire.Dial(t.Context(), addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func register(ctx context.Context, c *wire.Client, id string, table int64) (int32, error) {
	var resp messages.RegisterProducerOffsetsResponse
	err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String(id),
		TableOffsets: []*messages.PbProducerTableOffsets{{
			TableId:       proto.Int64(table),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(42)}},
		}},
	}, &resp)
	return resp.GetResult(), err
}

func get(ctx context.Context, c *wire.Client, id string) (*messages.GetProducerOffsetsResponse, error) {
	var resp messages.GetProducerOffsetsResponse
	err := c.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, &resp)
	return &resp, err
}

func code(err error) flusserr.Code {
	if fe, ok := flusserr.From(err); ok {
		return fe.Code
	}
	return -999
}

// TestServesTheSidecarAPIs: a zero Config serves every API of the sidecar
// on a free loopback port, through the real registry.
func TestServesTheSidecarAPIs(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	c := dial(t, s.Addr())
	av, err := c.Handshake(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int32
	for _, k := range av.GetApiVersions() {
		keys = append(keys, k.GetApiKey())
	}
	if want := []int32{1000, 1012, 1038, 1053, 1054, 1055, 1062}; !equal(keys, want) {
		t.Fatalf("API_VERSIONS keys %v, want %v", keys, want)
	}
	// GET_CLUSTER_HEALTH: the in-memory store always answers, so GREEN,
	// with every required field (the replica counts 0).
	var health messages.GetClusterHealthResponse
	if err := c.Call(ctx, messages.KeyGetClusterHealth, 0, &messages.GetClusterHealthRequest{}, &health); err != nil {
		t.Fatal(err)
	}
	if health.Status == nil || health.GetStatus() != 0 || health.NumReplicas == nil || health.InSyncReplicas == nil ||
		health.NumLeaderReplicas == nil || health.ActiveLeaderReplicas == nil {
		t.Fatalf("GET_CLUSTER_HEALTH answered %v, want GREEN with every field", &health)
	}
	var md messages.MetadataResponse
	if err := c.Call(ctx, messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, &md); err != nil {
		t.Fatal(err)
	}
	if n := md.GetCoordinatorServer(); n.GetHost() != "127.0.0.1" || int(n.GetPort()) != s.Listeners()[0].Port {
		t.Fatalf("metadata announces %v, want %s", n, s.Addr())
	}
	if r, err := register(ctx, c, "p1", 7); err != nil || r != 0 {
		t.Fatalf("register: %d %v", r, err)
	}
	if r, err := register(ctx, c, "p1", 7); err != nil || r != 1 {
		t.Fatalf("second register: %d %v, want ALREADY_EXISTS", r, err)
	}
	g, err := get(ctx, c, "p1")
	if err != nil || len(g.GetTableOffsets()) != 1 || g.GetTableOffsets()[0].GetTableId() != 7 {
		t.Fatalf("get: %v %v", g, err)
	}
	if files := s.Store().Files(); len(files) != 1 {
		t.Fatalf("store files %v, want one offsets file", files)
	}
	if _, err := get(ctx, c, "a b"); code(err) != flusserr.InvalidProducerID {
		t.Fatalf("invalid id: %v", err)
	}
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestControls runs each control hook on the next GET and checks what the
// client sees, then that the request after it is served normally.
func TestControls(t *testing.T) {
	cases := []struct {
		name    string
		install func(s *embedded.Server)
		check   func(t *testing.T, err error)
	}{
		{"fail with a code and message", func(s *embedded.Server) {
			s.FailNext(messages.KeyGetProducerOffsets, flusserr.StorageException, "injected")
		}, func(t *testing.T, err error) {
			fe, ok := flusserr.From(err)
			if !ok || fe.Code != flusserr.StorageException || fe.Message != "injected" {
				t.Fatalf("got %v, want STORAGE_EXCEPTION 'injected'", err)
			}
		}},
		{"fail without a message", func(s *embedded.Server) {
			s.FailNext(messages.KeyGetProducerOffsets, flusserr.NotCoordinatorLeader, "")
		}, func(t *testing.T, err error) {
			fe, ok := flusserr.From(err)
			if !ok || fe.Code != flusserr.NotCoordinatorLeader || fe.Message != "" {
				t.Fatalf("got %v, want code 65 with no message", err)
			}
		}},
		{"drop the connection", func(s *embedded.Server) {
			s.DropNext(messages.KeyGetProducerOffsets)
		}, func(t *testing.T, err error) {
			if err == nil || code(err) != -999 {
				t.Fatalf("got %v, want the connection lost without an answer", err)
			}
		}},
		{"any key", func(s *embedded.Server) {
			s.ControlKey(embedded.AnyKey, func(r embedded.Request) embedded.Action {
				return embedded.Fail(flusserr.Code(r.APIKey-1000), "")
			})
		}, func(t *testing.T, err error) {
			if code(err) != 54 {
				t.Fatalf("got %v, want code 54 (1054-1000)", err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, embedded.Config{})
			ctx := t.Context()
			c := dial(t, s.Addr())
			if _, err := register(ctx, c, "p", 1); err != nil {
				t.Fatal(err)
			}
			tc.install(s)
			_, err := get(ctx, c, "p")
			tc.check(t, err)
			if n := s.PendingControls(messages.KeyGetProducerOffsets) + s.PendingControls(embedded.AnyKey); n != 0 {
				t.Fatalf("%d controls left after one request", n)
			}
			c2 := dial(t, s.Addr())
			if g, err := get(ctx, c2, "p"); err != nil || len(g.GetTableOffsets()) != 1 {
				t.Fatalf("the next GET: %v %v", g, err)
			}
		})
	}
}

// TestControlOnlyTouchesItsKey: a control on GET leaves REGISTER alone.
func TestControlOnlyTouchesItsKey(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	c := dial(t, s.Addr())
	s.FailNext(messages.KeyGetProducerOffsets, flusserr.StorageException, "")
	if r, err := register(ctx, c, "p", 1); err != nil || r != 0 {
		t.Fatalf("register: %d %v", r, err)
	}
	if s.PendingControls(messages.KeyGetProducerOffsets) != 1 {
		t.Fatal("the GET control was used by a REGISTER")
	}
	if _, err := get(ctx, c, "p"); code(err) != flusserr.StorageException {
		t.Fatalf("get: %v", err)
	}
}

// TestStallHoldsOnlyThatRequest: a stalled REGISTER waits for release while
// the other requests of the same connection are answered; after release
// it completes.
func TestStallHoldsOnlyThatRequest(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	c := dial(t, s.Addr())
	release := s.StallNext(messages.KeyRegisterProducerOffsets)
	done := make(chan error, 1)
	go func() {
		_, err := register(ctx, c, "stalled", 1)
		done <- err
	}()
	// The GET sent after the stalled REGISTER is answered before it, and
	// sees no snapshot: the register has not run.
	eventually.True(t, "the stall to take the REGISTER", func() bool {
		return s.PendingControls(messages.KeyRegisterProducerOffsets) == 0
	})
	if g, err := get(ctx, c, "stalled"); err != nil || g.ProducerId != nil {
		t.Fatalf("get during the stall: %v %v, want not found", g, err)
	}
	select {
	case err := <-done:
		t.Fatalf("the stalled register was answered before release: %v", err)
	default:
	}
	release()
	release() // idempotent
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if g, err := get(ctx, c, "stalled"); err != nil || g.GetProducerId() != "stalled" {
		t.Fatalf("get after release: %v %v", g, err)
	}
}

// TestKeepAndPass: a control that passes stays installed until it acts;
// Keep makes it act on every later request.
func TestKeepAndPass(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	c := dial(t, s.Addr())
	var seen []int32
	// Fail only the third GET of the connection, whatever comes before.
	s.ControlKey(messages.KeyGetProducerOffsets, func(r embedded.Request) embedded.Action {
		seen = append(seen, r.RequestID)
		if len(seen) < 3 {
			return embedded.Pass()
		}
		return embedded.Fail(flusserr.RequestTimeOut, "third")
	})
	for i := 0; i < 2; i++ {
		if _, err := get(ctx, c, "p"); err != nil {
			t.Fatalf("get %d: %v", i, err)
		}
	}
	if _, err := get(ctx, c, "p"); code(err) != flusserr.RequestTimeOut {
		t.Fatalf("third get: %v", err)
	}
	if _, err := get(ctx, c, "p"); err != nil {
		t.Fatalf("fourth get: %v (the control should be gone)", err)
	}
	if len(seen) != 3 {
		t.Fatalf("control saw %v", seen)
	}
	s.ControlKey(messages.KeyDeleteProducerOffsets, func(embedded.Request) embedded.Action {
		return embedded.Fail(flusserr.StorageException, "").Keep()
	})
	for i := 0; i < 3; i++ {
		err := c.Call(ctx, messages.KeyDeleteProducerOffsets, 0, &messages.DeleteProducerOffsetsRequest{ProducerId: proto.String("p")}, nil)
		if code(err) != flusserr.StorageException {
			t.Fatalf("delete %d: %v", i, err)
		}
	}
	if s.PendingControls(messages.KeyDeleteProducerOffsets) != 1 {
		t.Fatal("a kept control was removed")
	}
}

// TestDelay: Delay holds the request, then serves it.
func TestDelay(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	c := dial(t, s.Addr())
	s.ControlKey(messages.KeyRegisterProducerOffsets, func(embedded.Request) embedded.Action {
		return embedded.Delay(10 * time.Millisecond)
	})
	if r, err := register(ctx, c, "d", 1); err != nil || r != 0 {
		t.Fatalf("delayed register: %d %v", r, err)
	}
}

// TestCloseReleasesStalls: closing the server drops a request stalled
// forever instead of waiting for it, and Close is idempotent.
func TestCloseReleasesStalls(t *testing.T) {
	s, err := embedded.Start(t.Context(), embedded.Config{Limits: assembly.Limits{DrainTimeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c := dial(t, s.Addr())
	s.StallNext(messages.KeyGetProducerOffsets) // never released
	done := make(chan error, 1)
	go func() {
		_, err := get(ctx, c, "x")
		done <- err
	}()
	eventually.True(t, "the stall to take the GET", func() bool {
		return s.PendingControls(messages.KeyGetProducerOffsets) == 0
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || code(err) != -999 {
		t.Fatalf("stalled request after Close: %v, want the connection lost", err)
	}
}

// TestSASLUsers: Users makes the listener SASL; only API_VERSIONS and
// AUTHENTICATE pass before a PLAIN login, a wrong password is error 46,
// and the right one opens the connection.
func TestSASLUsers(t *testing.T) {
	s := start(t, embedded.Config{Security: embedded.Users(map[string]string{"alice": "pw"})})
	ctx := t.Context()
	c := dial(t, s.Addr())
	if _, err := c.Handshake(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := get(ctx, c, "p"); err == nil {
		t.Fatal("GET before login was served")
	}
	c = dial(t, s.Addr())
	auth := func(token string) error {
		return c.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{
			Protocol: proto.String("PLAIN"), Token: []byte(token)}, &messages.AuthenticateResponse{})
	}
	if err := auth("\x00alice\x00wrong"); code(err) != flusserr.AuthenticateException {
		t.Fatalf("wrong password: %v", err)
	}
	c = dial(t, s.Addr())
	if err := auth("\x00alice\x00pw"); err != nil {
		t.Fatalf("login: %v", err)
	}
	if r, err := register(ctx, c, "p", 1); err != nil || r != 0 {
		t.Fatalf("register after login: %d %v", r, err)
	}
}

// TestStartFailsOnATakenPort: a listener that cannot bind fails Start and
// leaves nothing running.
func TestStartFailsOnATakenPort(t *testing.T) {
	s := start(t, embedded.Config{})
	cfg := embedded.Config{Listeners: []config.Listener{{Name: "FLUSS", Host: "127.0.0.1", Port: s.Listeners()[0].Port}}}
	if _, err := embedded.Start(t.Context(), cfg); err == nil {
		t.Fatal("Start on a taken port succeeded")
	}
	acls, err := embedded.ParseACLs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := embedded.Start(t.Context(), embedded.Config{Authorizer: acls}); err == nil {
		t.Fatal("an Authorizer without Tables was accepted")
	}
}

// TestCleanupRemovesExpiredSnapshots: the periodic cleanup deletes an
// expired snapshot and its offsets file from the store, by the registry's
// clock.
func TestCleanupRemovesExpiredSnapshots(t *testing.T) {
	var clock atomic.Int64
	clock.Store(1735538268000)
	s := start(t, embedded.Config{
		CleanupInterval:   5 * time.Millisecond,
		OrphanGracePeriod: time.Second,
		Now:               func() time.Time { return time.UnixMilli(clock.Load()) },
	})
	ctx := t.Context()
	c := dial(t, s.Addr())
	var resp messages.RegisterProducerOffsetsResponse
	err := c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String("short"), TtlMs: proto.Int64(1000),
		TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(1),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(1)}}}},
	}, &resp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := register(ctx, c, "long", 2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // nothing must happen for a while: cleanups run, nothing has expired yet
	if ids, _ := s.Store().ListProducerIDs(ctx); len(ids) != 2 || len(s.Store().Files()) != 2 {
		t.Fatalf("before expiry: snapshots %v, files %v", ids, s.Store().Files())
	}
	clock.Add(2000)
	eventually.Nil(t, "the expired snapshot's cleanup", func() error {
		ids, _ := s.Store().ListProducerIDs(ctx)
		if len(ids) == 1 && ids[0] == "long" && len(s.Store().Files()) == 1 {
			return nil
		}
		return fmt.Errorf("snapshots %v, files %v", ids, s.Store().Files())
	})
}
