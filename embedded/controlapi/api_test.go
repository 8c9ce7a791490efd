package controlapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// TestBadRequestsNameTheField: every kind of mistake is a 4xx whose body
// names the field at fault, and the server goes on serving.
func TestBadRequestsNameTheField(t *testing.T) {
	e := start(t, embedded.Config{})
	cases := []struct {
		method, path, body string
		status             int
		field              string
	}{
		{"POST", "/v1/rules", `{"action":"explode"}`, 400, "action"},
		{"POST", "/v1/rules", `{}`, 400, "action"},
		{"POST", "/v1/rules", `{"action":"error"}`, 400, "code"},
		{"POST", "/v1/rules", `{"action":"drop","code":25}`, 400, "code"},
		{"POST", "/v1/rules", `{"action":"delay"}`, 400, "duration"},
		{"POST", "/v1/rules", `{"action":"delay","duration":"soon"}`, 400, "duration"},
		{"POST", "/v1/rules", `{"action":"delay","duration":"2h"}`, 400, "duration"},
		{"POST", "/v1/rules", `{"action":"stall","duration":"-1s"}`, 400, "duration"},
		{"POST", "/v1/rules", `{"action":"drop","count":-1}`, 400, "count"},
		{"POST", "/v1/rules", `{"action":"drop","api_key":-5}`, 400, "api_key"},
		{"POST", "/v1/rules", `{"action":"drop","api_key":70000}`, 400, "api_key"},
		{"POST", "/v1/rules", `{"action":"drop","api_key":"GET"}`, 400, "api_key"},
		{"POST", "/v1/rules", `{"action":"drop","colour":"red"}`, 400, "colour"},
		{"POST", "/v1/rules", `{"action":"drop","id":3}`, 400, "id"},
		{"POST", "/v1/rules", `{"action":"drop"} {}`, 400, "body"},
		{"POST", "/v1/rules", `{"action":`, 400, "body"},
		{"POST", "/v1/rules", `[1,2]`, 400, "body"},
		{"POST", "/v1/rules", `{"action":"error","code":1,"message":"` + strings.Repeat("m", 5000) + `"}`, 400, "message"},
		{"POST", "/v1/rules/1/wait", `{"timeout":"1h"}`, 400, "timeout"},
		{"POST", "/v1/rules/x/wait", `{}`, 400, "id"},
		{"POST", "/v1/clock/advance", `{"by":"-1h"}`, 400, "by"},
		{"POST", "/v1/clock/advance", `{"by":"0s"}`, 400, "by"},
		{"POST", "/v1/clock/advance", `{"by":"1h","expire":"yes"}`, 400, "expire"},
		{"GET", "/v1/log?since=-1", "", 400, "since"},
		{"GET", "/v1/log?limit=10001", "", 400, "limit"},
		{"GET", "/v1/log?api_key=x", "", 400, "api_key"},
		{"GET", "/v1/log?colour=red", "", 400, "colour"},
		{"GET", "/v1/nothing", "", 404, ""},
		{"PUT", "/v1/rules", "", 405, ""},
	}
	for _, tc := range cases {
		var body []byte
		if tc.body != "" {
			body = []byte(tc.body)
		}
		status, data := raw(t, e.api.URL(), tc.method, tc.path, body)
		var ej controlapi.ErrorJSON
		if err := json.Unmarshal(data, &ej); err != nil || status != tc.status || ej.Field != tc.field || ej.Error == "" {
			t.Errorf("%s %s %.60s: %d %s, want %d naming %q", tc.method, tc.path, tc.body, status, data, tc.status, tc.field)
		}
	}
	if _, err := e.c.Server(t.Context()); err != nil {
		t.Fatalf("the server after the bad requests: %v", err)
	}
}

// TestRetriableThenSuccessOverHTTP: a rule installed over HTTP fails the
// next GET with 25, a wait sees its hit, the log shows both requests.
func TestRetriableThenSuccessOverHTTP(t *testing.T) {
	e := start(t, embedded.Config{})
	ctx := t.Context()
	r, err := e.c.AddRule(ctx, controlapi.RuleJSON{APIKey: ptr(int32(messages.KeyGetProducerOffsets)), Action: "error", Code: 25, Message: "try again"})
	if err != nil {
		t.Fatal(err)
	}
	fc := e.fluss(t)
	get := func() error {
		return fc.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("p")}, &messages.GetProducerOffsetsResponse{})
	}
	if fe, ok := flusserr.From(get()); !ok || fe.Code != 25 || fe.Message != "try again" {
		t.Fatalf("first get: %v", get())
	}
	if err := get(); err != nil {
		t.Fatalf("second get: %v", err)
	}
	reached, rule, err := e.c.Wait(ctx, r.ID, 1, "10s")
	if err != nil || !reached || *rule.Hits != 1 || *rule.Active {
		t.Fatalf("wait: %v %+v %v", reached, rule, err)
	}
	page, err := e.c.Log(ctx, url.Values{"api_key": {"1054"}})
	if err != nil || len(page.Entries) != 2 || page.Entries[0].Code != 25 || page.Entries[0].Rule != r.ID || page.Entries[1].Code != 0 {
		t.Fatalf("log: %+v %v", page, err)
	}
	if page.NextSince != page.Entries[1].Seq+1 {
		t.Fatalf("next_since %d after seq %d", page.NextSince, page.Entries[1].Seq)
	}
}

// TestStallOverHTTPEnds: a stall installed over HTTP holds a request until
// it is released over HTTP; a wait that times out answers reached=false;
// closing the API ends a long wait that has begun (the rule counts it in
// waiting, over HTTP): the caller gets reached=false or a closed
// connection, not a hang.
func TestStallOverHTTPEnds(t *testing.T) {
	e := start(t, embedded.Config{})
	ctx := t.Context()
	r, err := e.c.AddRule(ctx, controlapi.RuleJSON{APIKey: ptr(int32(messages.KeyGetProducerOffsets)), Action: "stall"})
	if err != nil {
		t.Fatal(err)
	}
	fc := e.fluss(t)
	done := make(chan error, 1)
	go func() {
		done <- fc.Call(ctx, messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String("p")}, &messages.GetProducerOffsetsResponse{})
	}()
	if reached, _, err := e.c.Wait(ctx, r.ID, 1, "30s"); !reached || err != nil {
		t.Fatalf("wait for the stall: %v %v", reached, err)
	}
	waitStalled(t, e.srv, r.ID)
	if reached, _, err := e.c.Wait(ctx, r.ID, 2, "1ms"); reached || err != nil {
		t.Fatalf("a wait for a second hit: %v %v, want not reached", reached, err)
	}
	if n, err := e.c.Release(ctx, r.ID); n != 1 || err != nil {
		t.Fatalf("release: %d %v", n, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the released request: %v", err)
	}

	if got := ruleOverHTTP(t, e, r.ID); *got.Waiting != 0 {
		t.Fatalf("waiting %d with no wait open", *got.Waiting)
	}
	type waitResult struct {
		reached bool
		err     error
	}
	waiting := make(chan waitResult, 1)
	go func() {
		reached, _, err := e.c.Wait(context.Background(), r.ID, 5, "5m")
		waiting <- waitResult{reached, err}
	}()
	waitWaiting(t, e, r.ID)
	e.api.Close()
	// Close ends the wait: its answer, reached=false, or the connection's
	// end, whichever reaches the caller first; never reached, never a hang.
	if got := <-waiting; got.reached {
		t.Fatalf("a wait for 5 hits of a rule hit once was reached when the API closed: %+v", got)
	}
	eventually.True(t, "the closed API's wait to end", func() bool {
		got, err := e.srv.RuleByID(r.ID)
		return err == nil && got.Waiting == 0
	})
}

// ruleOverHTTP is GET /v1/rules/{id}.
func ruleOverHTTP(t *testing.T, e env, id uint64) controlapi.RuleJSON {
	t.Helper()
	var got controlapi.RuleJSON
	if err := e.c.Do(t.Context(), "GET", fmt.Sprintf("/v1/rules/%d", id), nil, 200, &got); err != nil || got.Waiting == nil {
		t.Fatalf("GET rule %d: %+v %v", id, got, err)
	}
	return got
}

// waitWaiting waits until a wait on rule id has begun, as GET
// /v1/rules/{id} shows it.
func waitWaiting(t *testing.T, e env, id uint64) {
	t.Helper()
	eventually.True(t, "the wait to begin", func() bool { return *ruleOverHTTP(t, e, id).Waiting == 1 })
}

func waitStalled(t *testing.T, s *embedded.Server, id uint64) {
	t.Helper()
	eventually.True(t, "the request is stalled", func() bool {
		r, err := s.RuleByID(id)
		return err == nil && r.Stalled > 0
	})
}

// TestRemovedRuleEndsWait: removing a rule answers a wait on it that has
// begun with 404.
func TestRemovedRuleEndsWait(t *testing.T) {
	e := start(t, embedded.Config{})
	ctx := t.Context()
	r, _ := e.c.AddRule(ctx, controlapi.RuleJSON{APIKey: ptr(int32(9999)), Action: "drop"})
	waiting := make(chan error, 1)
	go func() {
		_, _, err := e.c.Wait(ctx, r.ID, 1, "5m")
		waiting <- err
	}()
	waitWaiting(t, e, r.ID)
	if err := e.c.RemoveRule(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	var se *controlapi.StatusError
	if err := <-waiting; !errors.As(err, &se) || se.Status != 404 {
		t.Fatalf("wait on a removed rule: %v", err)
	}
}
