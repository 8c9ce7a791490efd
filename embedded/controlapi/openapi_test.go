package controlapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/embedded/controlapi"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// env is an embedded server with the control API in front of it.
type env struct {
	srv *embedded.Server
	api *controlapi.Server
	c   *controlapi.Client
}

func start(t *testing.T, cfg embedded.Config) env {
	t.Helper()
	srv, err := embedded.Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	api, err := controlapi.Listen("127.0.0.1:0", srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	return env{srv: srv, api: api, c: &controlapi.Client{Base: api.URL()}}
}

func (e env) fluss(t *testing.T) *wire.Client {
	t.Helper()
	c, err := wire.Dial(t.Context(), e.srv.Addr(), wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func register(ctx context.Context, c *wire.Client, id string) error {
	return c.Call(ctx, messages.KeyRegisterProducerOffsets, 0, &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String(id),
		TableOffsets: []*messages.PbProducerTableOffsets{{
			TableId:       proto.Int64(7),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(42)}},
		}},
	}, &messages.RegisterProducerOffsetsResponse{})
}

// raw sends one request and returns the status and body.
func raw(t *testing.T, base, method, path string, body []byte) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// spec is the parsed openapi.yaml.
type spec map[string]any

func loadSpec(t *testing.T) spec {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(controlapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func (s spec) m(v any) map[string]any { x, _ := v.(map[string]any); return x }

// resolve follows a $ref within the document.
func (s spec) resolve(v map[string]any) map[string]any {
	for v != nil {
		ref, ok := v["$ref"].(string)
		if !ok {
			return v
		}
		cur := map[string]any(s)
		for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			cur = s.m(cur[p])
		}
		v = cur
	}
	return v
}

// operations lists "METHOD path status" for every documented answer.
func (s spec) operations() []string {
	var out []string
	for path, item := range s.m(s["paths"]) {
		for method, op := range s.m(item) {
			if method == "parameters" {
				continue
			}
			for status := range s.m(s.m(op)["responses"]) {
				out = append(out, strings.ToUpper(method)+" "+path+" "+status)
			}
		}
	}
	sort.Strings(out)
	return out
}

// schemaOf is the JSON schema of one documented answer, or nil.
func (s spec) schemaOf(method, path, status string) map[string]any {
	op := s.m(s.m(s.m(s["paths"])[path])[strings.ToLower(method)])
	resp := s.resolve(s.m(s.m(op["responses"])[status]))
	return s.resolve(s.m(s.m(s.m(resp["content"])["application/json"])["schema"]))
}

// check validates v against schema: types, required properties, and no
// property the schema does not list.
func (s spec) check(schema map[string]any, v any, at string) error {
	schema = s.resolve(schema)
	if schema == nil {
		return nil
	}
	switch schema["type"] {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an object", at, v)
		}
		props := s.m(schema["properties"])
		for _, r := range asList(schema["required"]) {
			if _, ok := obj[r]; !ok {
				return fmt.Errorf("%s: required %q missing in %v", at, r, obj)
			}
		}
		for k, x := range obj {
			p, ok := props[k]
			if !ok {
				return fmt.Errorf("%s: %q is not documented", at, k)
			}
			if err := s.check(s.m(p), x, at+"."+k); err != nil {
				return err
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: %v is not an array", at, v)
		}
		for i, x := range arr {
			if err := s.check(s.m(schema["items"]), x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case "integer":
		if f, ok := v.(float64); !ok || f != float64(int64(f)) {
			return fmt.Errorf("%s: %v is not an integer", at, v)
		}
	case "string":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: %v is not a string", at, v)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: %v is not a boolean", at, v)
		}
	}
	return nil
}

func asList(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestOpenAPIAgrees walks every path, method and status openapi.yaml
// documents against a running server: each is produced by a case below,
// answered with that status, and its body fits the documented schema. A
// case the file does not document, or a documented answer no case
// produces, fails the test.
func TestOpenAPIAgrees(t *testing.T) {
	doc := loadSpec(t)
	e := start(t, embedded.Config{})
	ctx := t.Context()
	fc := e.fluss(t)
	big := []byte(`{"action":"drop","message":"` + strings.Repeat("x", controlapi.MaxBodyBytes) + `"}`)
	var ruleID uint64
	newRule := func() uint64 {
		r, err := e.c.AddRule(ctx, controlapi.RuleJSON{Action: "drop", APIKey: ptr(int32(9999))})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	type tc struct {
		method, path, status string
		setup                func() (path string, body []byte)
	}
	fixed := func(p, b string) func() (string, []byte) {
		return func() (string, []byte) {
			if b == "" {
				return p, nil
			}
			return p, []byte(b)
		}
	}
	withRule := func(suffix, b string) func() (string, []byte) {
		return func() (string, []byte) {
			ruleID = newRule()
			var body []byte
			if b != "" {
				body = []byte(b)
			}
			return fmt.Sprintf("/v1/rules/%d%s", ruleID, suffix), body
		}
	}
	cases := []tc{
		{"GET", "/v1/server", "200", fixed("/v1/server", "")},
		{"GET", "/v1/openapi.yaml", "200", fixed("/v1/openapi.yaml", "")},
		{"POST", "/v1/rules", "201", fixed("/v1/rules", `{"api_key":1054,"action":"error","code":25,"message":"retry me","count":2}`)},
		{"GET", "/v1/rules", "200", fixed("/v1/rules", "")},
		{"POST", "/v1/rules", "400", fixed("/v1/rules", `{"action":"error"}`)},
		{"POST", "/v1/rules", "409", func() (string, []byte) {
			for {
				if _, err := e.srv.AddRule(embedded.Rule{Key: 9999, Action: embedded.RuleDrop}); err != nil {
					break
				}
			}
			return "/v1/rules", []byte(`{"action":"drop"}`)
		}},
		{"DELETE", "/v1/rules", "200", fixed("/v1/rules", "")},
		{"POST", "/v1/rules", "413", fixed("/v1/rules", string(big))},
		{"GET", "/v1/rules/{id}", "200", withRule("", "")},
		{"GET", "/v1/rules/{id}", "400", fixed("/v1/rules/abc", "")},
		{"GET", "/v1/rules/{id}", "404", fixed("/v1/rules/999999", "")},
		{"DELETE", "/v1/rules/{id}", "200", withRule("", "")},
		{"DELETE", "/v1/rules/{id}", "400", fixed("/v1/rules/0", "")},
		{"DELETE", "/v1/rules/{id}", "404", fixed("/v1/rules/999999", "")},
		{"POST", "/v1/rules/{id}/wait", "200", withRule("/wait", `{"hits":1,"timeout":"1ms"}`)},
		{"POST", "/v1/rules/{id}/wait", "400", withRule("/wait", `{"hits":0}`)},
		{"POST", "/v1/rules/{id}/wait", "404", fixed("/v1/rules/999999/wait", `{}`)},
		{"POST", "/v1/rules/{id}/wait", "413", withRule("/wait", string(big))},
		{"POST", "/v1/release", "200", fixed("/v1/release", `{}`)},
		{"POST", "/v1/release", "400", fixed("/v1/release", `{"rule":"one"}`)},
		{"POST", "/v1/release", "404", fixed("/v1/release", `{"rule":999999}`)},
		{"POST", "/v1/release", "413", fixed("/v1/release", string(big))},
		{"GET", "/v1/log", "200", func() (string, []byte) {
			if err := register(ctx, fc, "walk"); err != nil {
				t.Fatal(err)
			}
			return "/v1/log?limit=100", nil
		}},
		{"GET", "/v1/log", "400", fixed("/v1/log?limit=0", "")},
		{"DELETE", "/v1/log", "200", fixed("/v1/log", "")},
		{"GET", "/v1/clock", "200", fixed("/v1/clock", "")},
		{"GET", "/v1/store", "200", fixed("/v1/store", "")},
		{"POST", "/v1/clock/advance", "200", fixed("/v1/clock/advance", `{"by":"25h"}`)},
		{"POST", "/v1/clock/advance", "400", fixed("/v1/clock/advance", `{}`)},
		{"POST", "/v1/clock/advance", "413", fixed("/v1/clock/advance", string(big))},
		{"DELETE", "/v1/store", "200", fixed("/v1/store", "")},
		{"POST", "/v1/reset", "200", fixed("/v1/reset", "")},
	}
	var covered []string
	for _, c := range cases {
		covered = append(covered, c.method+" "+c.path+" "+c.status)
		t.Run(c.method+" "+c.path+" "+c.status, func(t *testing.T) {
			path, body := c.setup()
			status, data := raw(t, e.api.URL(), c.method, path, body)
			if fmt.Sprint(status) != c.status {
				t.Fatalf("%s %s: %d %s, want %s", c.method, path, status, data, c.status)
			}
			schema := doc.schemaOf(c.method, c.path, c.status)
			if schema == nil {
				return
			}
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("answer is not JSON: %v: %s", err, data)
			}
			if err := doc.check(schema, v, "answer"); err != nil {
				t.Fatalf("%v\nbody: %s", err, data)
			}
		})
	}
	sort.Strings(covered)
	if want := doc.operations(); strings.Join(want, "\n") != strings.Join(covered, "\n") {
		t.Fatalf("the cases cover\n%s\nbut openapi.yaml documents\n%s", strings.Join(covered, "\n"), strings.Join(want, "\n"))
	}
}

func ptr[T any](v T) *T { return &v }
