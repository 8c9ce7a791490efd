package compat_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// auditLog collects a sidecar's JSON log lines at DEBUG: its audit lines
// and the request lines of the wire layer they are checked against.
type auditLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *auditLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *auditLog) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: "sidecar", Level: hclog.Debug, Output: l, JSONFormat: true})
}

// check requires exactly one audit line per REGISTER and DELETE the wire
// layer answered, each naming client, and at least one of each.
func (l *auditLog) check(t *testing.T, client string) {
	t.Helper()
	l.mu.Lock()
	text := l.buf.String()
	l.mu.Unlock()
	answered := map[string]int{}
	audited := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		switch m["@message"] {
		case "request", "request answered with an error":
			if api, _ := m["api"].(string); api == "REGISTER_PRODUCER_OFFSETS" || api == "DELETE_PRODUCER_OFFSETS" {
				answered[api]++
			}
		case "producer offsets audit":
			op, _ := m["op"].(string)
			if op == "get" {
				continue
			}
			audited[map[string]string{"register": "REGISTER_PRODUCER_OFFSETS", "delete": "DELETE_PRODUCER_OFFSETS"}[op]]++
			if m["client_software"] != client {
				t.Errorf("audit line names client software %v, want %q: %s", m["client_software"], client, line)
			}
		}
	}
	for _, api := range []string{"REGISTER_PRODUCER_OFFSETS", "DELETE_PRODUCER_OFFSETS"} {
		if answered[api] == 0 || audited[api] != answered[api] {
			t.Errorf("%s: %d answered, %d audit lines; want one line each, at least one", api, answered[api], audited[api])
		}
	}
}
