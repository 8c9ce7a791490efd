package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// TestRuleActions installs each kind of rule on the next REGISTER of
// producer "p" and checks what the client sees, whether the request was
// applied (a GET afterwards), what the request log says, and that the
// rule counted its hit.
func TestRuleActions(t *testing.T) {
	cases := []struct {
		name    string
		rule    embedded.Rule
		code    flusserr.Code // -999: connection lost without an answer
		applied bool
		outcome string
	}{
		{"error", embedded.Rule{Action: embedded.RuleError, Code: flusserr.StorageException, Message: "told"}, flusserr.StorageException, false, "answered"},
		{"drop", embedded.Rule{Action: embedded.RuleDrop}, -999, false, "dropped"},
		{"delay", embedded.Rule{Action: embedded.RuleDelay, Duration: time.Millisecond}, 0, true, "answered"},
		{"apply then error", embedded.Rule{Action: embedded.RuleApplyThenError, Code: flusserr.NotCoordinatorLeader}, flusserr.NotCoordinatorLeader, true, "answered"},
		{"apply then drop", embedded.Rule{Action: embedded.RuleApplyThenDrop}, -999, true, "dropped"},
		{"producer filter", embedded.Rule{Action: embedded.RuleError, Code: flusserr.StorageException, ProducerID: "p"}, flusserr.StorageException, false, "answered"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, embedded.Config{})
			ctx := t.Context()
			tc.rule.Key, tc.rule.Count = messages.KeyRegisterProducerOffsets, 1
			info, err := s.AddRule(tc.rule)
			if err != nil {
				t.Fatal(err)
			}
			c := dial(t, s.Addr())
			_, err = register(ctx, c, "p", 1)
			if (tc.code == 0 && err != nil) || (tc.code != 0 && code(err) != tc.code) {
				t.Fatalf("register: %v, want code %d", err, tc.code)
			}
			if got, err := s.WaitHits(ctx, info.ID, 1); err != nil || got.Hits != 1 || got.Active || got.Remaining != 0 {
				t.Fatalf("rule after one request: %+v %v", got, err)
			}
			g, err := get(ctx, dial(t, s.Addr()), "p")
			if err != nil || (g.ProducerId != nil) != tc.applied {
				t.Fatalf("get after: %v %v, want applied=%v", g, err, tc.applied)
			}
			// A dropped request is logged when its connection has closed,
			// which the client may see first.
			var e embedded.LogEntry
			eventually.True(t, "the REGISTER's log entry", func() bool {
				for _, x := range s.Log(0, 0) {
					if x.APIKey == messages.KeyRegisterProducerOffsets {
						e = x
						return true
					}
				}
				return false
			})
			// A request decided at the gate was never decoded: its
			// producer is not known.
			decoded := tc.applied || tc.rule.ProducerID != ""
			if e.Rule != info.ID || e.Action != string(tc.rule.Action) || e.Outcome != tc.outcome || (e.ProducerID == "p") != decoded {
				t.Fatalf("log entry %+v, want rule %d action %s outcome %s", e, info.ID, tc.rule.Action, tc.outcome)
			}
			if tc.applied != (e.Applied != nil) && tc.rule.Action != embedded.RuleDelay {
				t.Fatalf("log entry Applied %v, want set=%v", e.Applied, tc.applied)
			}
		})
	}
}

// TestRuleFilters: a rule for one producer or one connection leaves the
// others alone; a count of 2 takes two requests; count 0 stays.
func TestRuleFilters(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	a, b := dial(t, s.Addr()), dial(t, s.Addr())
	onlyQ, _ := s.AddRule(embedded.Rule{Key: messages.KeyGetProducerOffsets, Action: embedded.RuleError, Code: flusserr.StorageException, ProducerID: "q", Count: 2})
	if _, err := get(ctx, a, "p"); err != nil {
		t.Fatalf("get p: %v", err)
	}
	for i := range 2 {
		if _, err := get(ctx, a, "q"); code(err) != flusserr.StorageException {
			t.Fatalf("get q %d: %v", i, err)
		}
	}
	if _, err := get(ctx, a, "q"); err != nil {
		t.Fatalf("third get q: %v (the rule took two)", err)
	}
	if r, _ := s.RuleByID(onlyQ.ID); r.Hits != 2 || r.Active {
		t.Fatalf("producer rule: %+v", r)
	}
	// The connection id of b, from the log.
	if _, err := get(ctx, b, "x"); err != nil {
		t.Fatal(err)
	}
	log := s.Log(0, 0)
	connB := log[len(log)-1].ConnID
	onlyB, _ := s.AddRule(embedded.Rule{Key: embedded.AnyKey, Action: embedded.RuleError, Code: flusserr.NotCoordinatorLeader, ConnID: connB})
	for i := range 3 {
		if _, err := get(ctx, a, "x"); err != nil {
			t.Fatalf("get on a %d: %v", i, err)
		}
		if _, err := get(ctx, b, "x"); code(err) != flusserr.NotCoordinatorLeader {
			t.Fatalf("get on b %d: %v", i, err)
		}
	}
	if r, _ := s.RuleByID(onlyB.ID); r.Hits != 3 || !r.Active || r.Remaining != -1 {
		t.Fatalf("connection rule: %+v", r)
	}
	if err := s.RemoveRule(onlyB.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := get(ctx, b, "x"); err != nil {
		t.Fatalf("after remove: %v", err)
	}
	if err := s.RemoveRule(onlyB.ID); !errors.Is(err, embedded.ErrNoRule) {
		t.Fatalf("second remove: %v", err)
	}
}

// TestRuleStallEnds: a stall rule holds requests until Release, until its
// own timeout, or until the connection closes; WaitHits sees it hit.
func TestRuleStallEnds(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	t.Run("release", func(t *testing.T) {
		r, _ := s.AddRule(embedded.Rule{Key: messages.KeyGetProducerOffsets, Action: embedded.RuleStall, Count: 1})
		done := make(chan error, 1)
		go func() { _, err := get(ctx, dial(t, s.Addr()), "x"); done <- err }()
		if _, err := s.WaitHits(ctx, r.ID, 1); err != nil {
			t.Fatal(err)
		}
		waitStalled(t, s, r.ID, 1)
		if n := s.Release(r.ID); n != 1 {
			t.Fatalf("released %d, want 1", n)
		}
		if err := <-done; err != nil {
			t.Fatalf("released get: %v", err)
		}
	})
	t.Run("own timeout", func(t *testing.T) {
		s.AddRule(embedded.Rule{Key: messages.KeyGetProducerOffsets, Action: embedded.RuleStall, Duration: time.Millisecond, Count: 1})
		if _, err := get(ctx, dial(t, s.Addr()), "x"); err != nil {
			t.Fatalf("get after the stall's timeout: %v", err)
		}
	})
	t.Run("connection closes", func(t *testing.T) {
		r, _ := s.AddRule(embedded.Rule{Key: messages.KeyGetProducerOffsets, Action: embedded.RuleStall, Count: 1})
		c := dial(t, s.Addr())
		go get(ctx, c, "x")
		waitStalled(t, s, r.ID, 1)
		c.Close()
		waitStalled(t, s, r.ID, 0)
	})
}

func waitStalled(t *testing.T, s *embedded.Server, id uint64, n int) {
	t.Helper()
	eventually.True(t, fmt.Sprintf("rule %d holds %d requests", id, n), func() bool {
		r, err := s.RuleByID(id)
		return err == nil && r.Stalled == n
	})
}

// TestWaitHitsEnds: a wait ends with its context, and when the rule is
// removed.
func TestWaitHitsEnds(t *testing.T) {
	s := start(t, embedded.Config{})
	r, _ := s.AddRule(embedded.Rule{Key: 9999, Action: embedded.RuleDrop})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got, err := s.WaitHits(ctx, r.ID, 1); !errors.Is(err, context.Canceled) || got.ID != r.ID {
		t.Fatalf("cancelled wait: %+v %v", got, err)
	}
	done := make(chan error, 1)
	go func() { _, err := s.WaitHits(t.Context(), r.ID, 1); done <- err }()
	s.RemoveRule(r.ID)
	if err := <-done; !errors.Is(err, embedded.ErrNoRule) {
		t.Fatalf("wait on a removed rule: %v", err)
	}
}

// TestRuleValidate: every mistake names its field.
func TestRuleValidate(t *testing.T) {
	cases := []struct {
		rule  embedded.Rule
		field string
	}{
		{embedded.Rule{}, "action"},
		{embedded.Rule{Action: "explode"}, "action"},
		{embedded.Rule{Action: embedded.RuleError}, "code"},
		{embedded.Rule{Action: embedded.RuleDrop, Code: 5}, "code"},
		{embedded.Rule{Action: embedded.RuleDelay}, "duration"},
		{embedded.Rule{Action: embedded.RuleDelay, Duration: 2 * time.Hour}, "duration"},
		{embedded.Rule{Action: embedded.RuleDrop, Duration: time.Second}, "duration"},
		{embedded.Rule{Action: embedded.RuleDrop, Count: -1}, "count"},
		{embedded.Rule{Action: embedded.RuleDrop, Key: -2}, "api_key"},
		{embedded.Rule{Action: embedded.RuleError, Code: 1, Message: strings.Repeat("m", embedded.MaxRuleMessage+1)}, "message"},
		{embedded.Rule{Action: embedded.RuleDrop, ProducerID: strings.Repeat("p", embedded.MaxProducerIDFilter+1)}, "producer_id"},
	}
	for _, tc := range cases {
		var fe *embedded.RuleFieldError
		if err := tc.rule.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want field %s", tc.rule, err, tc.field)
		}
	}
}

// TestTooManyRules: past MaxRules active rules a new one is refused; a
// used-up record makes room.
func TestTooManyRules(t *testing.T) {
	s := start(t, embedded.Config{})
	var first embedded.RuleInfo
	for i := range embedded.MaxRules {
		r, err := s.AddRule(embedded.Rule{Key: 9999, Action: embedded.RuleDrop})
		if err != nil {
			t.Fatalf("rule %d: %v", i, err)
		}
		if i == 0 {
			first = r
		}
	}
	if _, err := s.AddRule(embedded.Rule{Key: 9999, Action: embedded.RuleDrop}); !errors.Is(err, embedded.ErrTooManyRules) {
		t.Fatalf("rule past the bound: %v", err)
	}
	if n := s.RemoveRules(); n != embedded.MaxRules {
		t.Fatalf("removed %d", n)
	}
	if _, err := s.RuleByID(first.ID); !errors.Is(err, embedded.ErrNoRule) {
		t.Fatal("a removed rule is still listed")
	}
}

// TestRequestLog: the log holds each request with its connection,
// principal, producer and answer, in answer order, and Clear empties it.
func TestRequestLog(t *testing.T) {
	s := start(t, embedded.Config{Security: embedded.Users(map[string]string{"alice": "pw"})})
	ctx := t.Context()
	c := dial(t, s.Addr())
	if err := c.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{
		Protocol: proto.String("PLAIN"), Token: []byte("\x00alice\x00pw")}, &messages.AuthenticateResponse{}); err != nil {
		t.Fatal(err)
	}
	if _, err := register(ctx, c, "p1", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := get(ctx, c, "bad id"); code(err) != flusserr.InvalidProducerID {
		t.Fatal(err)
	}
	log := s.Log(0, 0)
	var keys []messages.Key
	for _, e := range log {
		keys = append(keys, e.APIKey)
	}
	want := []messages.Key{messages.KeyAuthenticate, messages.KeyRegisterProducerOffsets, messages.KeyGetProducerOffsets}
	if len(keys) != len(want) {
		t.Fatalf("logged %v, want %v", keys, want)
	}
	for i := range want {
		e := log[i]
		if e.APIKey != want[i] || e.Seq == 0 || e.ConnID == 0 || e.Answered.Before(e.Arrived) || e.Outcome != "answered" {
			t.Fatalf("entry %d: %+v", i, e)
		}
	}
	if reg := log[1]; reg.Principal != "alice" || reg.ProducerID != "p1" || reg.Code != 0 || reg.API != "REGISTER_PRODUCER_OFFSETS" {
		t.Fatalf("register entry: %+v", reg)
	}
	if bad := log[2]; bad.Code != flusserr.InvalidProducerID || bad.Message == "" {
		t.Fatalf("bad get entry: %+v", bad)
	}
	if log[0].Principal != "" {
		t.Fatalf("AUTHENTICATE arrived before the login: %+v", log[0])
	}
	if got := s.Log(log[1].Seq, 1); len(got) != 1 || got[0].Seq != log[1].Seq {
		t.Fatalf("Log(since, 1): %+v", got)
	}
	if n := s.ClearLog(); n != 3 || len(s.Log(0, 0)) != 0 {
		t.Fatalf("cleared %d, left %d", n, len(s.Log(0, 0)))
	}
}

// TestClockExpiresSnapshots: advancing the clock past a snapshot's TTL and
// running ExpireNow deletes it; a register then creates it afresh.
func TestClockExpiresSnapshots(t *testing.T) {
	s := start(t, embedded.Config{TTL: time.Hour})
	ctx := t.Context()
	c := dial(t, s.Addr())
	if _, err := register(ctx, c, "p", 1); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ExpireNow(ctx); n != 0 || err != nil {
		t.Fatalf("expire before the TTL: %d %v", n, err)
	}
	if _, err := s.Clock().Advance(-time.Second); err == nil {
		t.Fatal("the clock went back")
	}
	if _, err := s.Clock().Advance(embedded.MaxClockAdvance + 1); err == nil {
		t.Fatal("the clock jumped past its bound")
	}
	if _, err := s.Clock().Advance(time.Hour + time.Second); err != nil {
		t.Fatal(err)
	}
	l, err := s.ListStore(ctx)
	if err != nil || len(l.Snapshots) != 1 || !l.Snapshots[0].Expired || len(l.Files) != 1 {
		t.Fatalf("listing after the advance: %+v %v", l, err)
	}
	if n, err := s.ExpireNow(ctx); n != 1 || err != nil {
		t.Fatalf("expire: %d %v", n, err)
	}
	if g, err := get(ctx, c, "p"); err != nil || g.ProducerId != nil {
		t.Fatalf("get after expiry: %v %v", g, err)
	}
	if r, err := register(ctx, c, "p", 1); err != nil || r != 0 {
		t.Fatalf("register after expiry: %d %v", r, err)
	}
}

// TestReset empties the store, rules, log and clock.
func TestReset(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	c := dial(t, s.Addr())
	for _, id := range []string{"a", "b"} {
		if _, err := register(ctx, c, id, 1); err != nil {
			t.Fatal(err)
		}
	}
	s.AddRule(embedded.Rule{Key: 9999, Action: embedded.RuleDrop})
	s.Clock().Advance(time.Minute)
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := s.ListStore(ctx)
	if err != nil || len(l.Snapshots) != 0 || len(l.Files) != 0 || len(s.Rules()) != 0 || len(s.Log(0, 0)) != 0 || s.Clock().Offset() != 0 {
		t.Fatalf("after reset: %+v %v rules=%d log=%d offset=%s", l, err, len(s.Rules()), len(s.Log(0, 0)), s.Clock().Offset())
	}
	if r, err := register(ctx, c, "a", 1); err != nil || r != 0 {
		t.Fatalf("register after reset: %d %v", r, err)
	}
}

// TestGateRuleSeesUnservedKeys: a rule without a producer filter acts at
// the gate, so it takes a key the server does not serve; one with a filter
// acts only where requests are served.
func TestGateRuleSeesUnservedKeys(t *testing.T) {
	s := start(t, embedded.Config{})
	ctx := t.Context()
	c := dial(t, s.Addr())
	gate, _ := s.AddRule(embedded.Rule{Key: 1, Action: embedded.RuleError, Code: flusserr.NotCoordinatorLeader, Count: 1})
	err := c.Call(ctx, 1, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("p")}, nil)
	if code(err) != flusserr.NotCoordinatorLeader {
		t.Fatalf("unserved key under a gate rule: %v", err)
	}
	served, _ := s.AddRule(embedded.Rule{Key: 1, Action: embedded.RuleError, Code: flusserr.NotCoordinatorLeader, ProducerID: "p"})
	if err := c.Call(ctx, 1, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("p")}, nil); code(err) == flusserr.NotCoordinatorLeader {
		t.Fatalf("a producer rule took an unserved key: %v", err)
	}
	if r, _ := s.RuleByID(gate.ID); r.Hits != 1 {
		t.Fatalf("gate rule hit %d times", r.Hits)
	}
	if r, _ := s.RuleByID(served.ID); r.Hits != 0 {
		t.Fatalf("producer rule hit %d times", r.Hits)
	}
}
