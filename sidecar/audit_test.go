package sidecar_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/sidecar"
)

// logBuffer collects JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// auditLines returns the audit lines logged so far, decoded.
func (b *logBuffer) auditLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", line, err)
		}
		if m["@module"] == "test.audit" {
			out = append(out, m)
		}
	}
	return out
}

func jsonLogger(b *logBuffer) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "test", Level: hclog.Info, Output: b, JSONFormat: true})
}

type countingObserver struct {
	mu     sync.Mutex
	counts map[string]int // "op client outcome"
}

func (o *countingObserver) RegistryRequest(op, client, outcome string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	o.counts[op+" "+client+" "+outcome]++
}

func (o *countingObserver) get(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.counts[key]
}

// The offsets of the audit tests: numbers no other field of a line holds,
// so that finding one in the log means an offset was logged.
const (
	auditOffsetA = 987654321
	auditOffsetB = 123456789
)

// TestAuditLines: each REGISTER and DELETE leaves exactly one audit line
// naming the client software the connection sent in API_VERSIONS (the
// repository's Go client sends Java's "fluss" "0.1.0"), the listener,
// peer, principal, producer, tables, bucket count and outcome; GETs leave
// one only with Reads; the offsets never appear. Every request is
// counted by client software and outcome.
func TestAuditLines(t *testing.T) {
	type step struct {
		op, id  string
		outcome string
		tables  []float64
		buckets float64 // -1: no buckets field
	}
	twoTables := []*messages.PbProducerTableOffsets{tbl(7, bo(0, auditOffsetA), bo(1, auditOffsetB)), tbl(9, bo(3, auditOffsetA))}
	for _, tt := range []struct {
		name  string
		audit sidecar.AuditConfig
		want  []step // the lines, in order
	}{
		{"writes", sidecar.AuditConfig{Writes: true}, []step{
			{"register", "job-1", "CREATED", []float64{7, 9}, 3},
			{"register", "job-1", "ALREADY_EXISTS", []float64{7, 9}, 3},
			{"register", "a b", "INVALID_PRODUCER_ID_EXCEPTION", []float64{7, 9}, 3},
			{"delete", "job-1", "DELETED", []float64{7, 9}, -1},
			{"delete", "job-1", "NOT_FOUND", nil, -1},
		}},
		{"writes and reads", sidecar.AuditConfig{Writes: true, Reads: true}, []step{
			{"register", "job-1", "CREATED", []float64{7, 9}, 3},
			{"get", "job-1", "FOUND", []float64{7, 9}, 3},
			{"register", "job-1", "ALREADY_EXISTS", []float64{7, 9}, 3},
			{"register", "a b", "INVALID_PRODUCER_ID_EXCEPTION", []float64{7, 9}, 3},
			{"delete", "job-1", "DELETED", []float64{7, 9}, -1},
			{"get", "job-1", "NOT_FOUND", nil, -1},
			{"delete", "job-1", "NOT_FOUND", nil, -1},
		}},
		{"off", sidecar.AuditConfig{}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			obs := &countingObserver{}
			tt.audit.Observer = obs
			ts := startSidecar(t, sidecarOpts{logger: jsonLogger(&logs), audit: tt.audit})
			c := ts.dial(t)
			if r := register(t, c, registerReq("job-1", twoTables...)); r != 0 {
				t.Fatalf("register: %d", r)
			}
			get(t, c, "job-1")
			if r := register(t, c, registerReq("job-1", twoTables...)); r != 1 {
				t.Fatalf("register again: %d", r)
			}
			bad := &messages.RegisterProducerOffsetsResponse{}
			if err := c.Call(t.Context(), messages.KeyRegisterProducerOffsets, 0, registerReq("a b", twoTables...), bad); err == nil {
				t.Fatal("an invalid producer id was registered")
			}
			del(t, c, "job-1")
			get(t, c, "job-1")
			del(t, c, "job-1")

			lines := logs.auditLines(t)
			if len(lines) != len(tt.want) {
				t.Fatalf("%d audit lines, want %d:\n%s", len(lines), len(tt.want), logs.String())
			}
			for i, w := range tt.want {
				l := lines[i]
				for k, v := range map[string]any{
					"@level": "info", "op": w.op, "producer_id": w.id, "outcome": w.outcome,
					"listener": "FLUSS", "client_software": "fluss", "client_version": "0.1.0",
					"tables_total": float64(len(w.tables)),
				} {
					if l[k] != v {
						t.Errorf("line %d (%s %s): %s = %v, want %v", i, w.op, w.outcome, k, l[k], v)
					}
				}
				var tables []float64
				if raw, ok := l["tables"].([]any); ok {
					for _, x := range raw {
						tables = append(tables, x.(float64))
					}
				}
				if fmt.Sprint(tables) != fmt.Sprint(w.tables) {
					t.Errorf("line %d: tables %v, want %v", i, tables, w.tables)
				}
				if b, ok := l["buckets"]; w.buckets >= 0 && b != w.buckets || w.buckets < 0 && ok {
					t.Errorf("line %d: buckets %v, want %v", i, b, w.buckets)
				}
				if p, _ := l["peer"].(string); !strings.HasPrefix(p, "127.0.0.1:") {
					t.Errorf("line %d: peer %q", i, p)
				}
				if _, ok := l["principal"]; !ok {
					t.Errorf("line %d: no principal", i)
				}
				if _, ok := l["duration"]; !ok {
					t.Errorf("line %d: no duration", i)
				}
				if _, ok := l["error_code"]; ok != strings.HasSuffix(w.outcome, "_EXCEPTION") {
					t.Errorf("line %d: error_code %v for outcome %s", i, l["error_code"], w.outcome)
				}
			}
			for _, off := range []int{auditOffsetA, auditOffsetB} {
				if strings.Contains(logs.String(), fmt.Sprint(off)) {
					t.Fatalf("an offset (%d) is in the log:\n%s", off, logs.String())
				}
			}
			// Counted whether logged or not.
			for key, want := range map[string]int{
				"register fluss CREATED": 1, "register fluss ALREADY_EXISTS": 1, "register fluss INVALID_PRODUCER_ID_EXCEPTION": 1,
				"delete fluss DELETED": 1, "delete fluss NOT_FOUND": 1, "get fluss FOUND": 1, "get fluss NOT_FOUND": 1,
			} {
				if got := obs.get(key); got != want {
					t.Errorf("counted %q %d times, want %d", key, got, want)
				}
			}
		})
	}
}

// TestAuditBoundsClientText: the client software text of an audit line is
// what wire keeps of the connection's last API_VERSIONS, bounded in length
// and characters.
func TestAuditBoundsClientText(t *testing.T) {
	var logs logBuffer
	ts := startSidecar(t, sidecarOpts{logger: jsonLogger(&logs), audit: sidecar.AuditConfig{Writes: true}})
	c := ts.dial(t) // "fluss" "0.1.0"
	hostile := &messages.ApiVersionsRequest{ClientSoftwareName: proto.String("evil\n\"x\" " + strings.Repeat("n", 500)), ClientSoftwareVersion: proto.String("1\x00")}
	if err := c.Call(t.Context(), messages.KeyAPIVersions, 0, hostile, &messages.ApiVersionsResponse{}); err != nil {
		t.Fatal(err)
	}
	del(t, c, "job-x")
	lines := logs.auditLines(t)
	if len(lines) != 1 {
		t.Fatalf("%d audit lines, want 1", len(lines))
	}
	name, _ := lines[0]["client_software"].(string)
	if want := "evil__x__" + strings.Repeat("n", 54) + "~"; name != want {
		t.Errorf("client_software %q, want %q", name, want)
	}
	if v := lines[0]["client_version"]; v != "1_" {
		t.Errorf("client_version %q", v)
	}
}
