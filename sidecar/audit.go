package sidecar

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// AuditConfig says which registry requests leave an audit line: one INFO
// line of the "audit" logger per request that reached its handler, with
// who asked, from which client software, about which producer and tables,
// and the outcome. Never the offsets.
type AuditConfig struct {
	// Writes logs every REGISTER and DELETE (sidecar.audit.writes).
	Writes bool
	// Reads logs every GET (sidecar.audit.reads). A GET is then always
	// served by its handler: the quick path, which answers on the reader
	// goroutine without one, is off.
	Reads bool
	// Observer, if set, counts every registry request by client software
	// and outcome, whether or not it is logged.
	Observer AuditObserver
}

// AuditObserver counts registry requests by the client software the
// connection named in API_VERSIONS; *metrics.Metrics is one. client is
// bounded (wire.ClientSoftwareText), "" when the connection sent no
// API_VERSIONS; the observer bounds how many distinct names it keeps.
type AuditObserver interface {
	RegistryRequest(op, client, outcome string)
}

// The outcomes of an audit line besides a Fluss error code's name.
const (
	OutcomeCreated       = "CREATED"
	OutcomeAlreadyExists = "ALREADY_EXISTS"
	OutcomeDeleted       = "DELETED"
	OutcomeNotFound      = "NOT_FOUND"
	OutcomeFound         = "FOUND"
)

// maxAuditTables is how many table ids an audit line lists; "tables_total"
// gives the full count.
const maxAuditTables = 32

// auditRecord is what one request's audit line says beyond the session.
type auditRecord struct {
	op         string // register, get, delete
	producerID string
	tables     []int64
	buckets    int // -1: not known (a delete reads no offsets file)
	// register, for a decoded REGISTER, is where tables and buckets are
	// read from, and only when a line is written: the counter needs
	// neither, and a REGISTER can name a million buckets.
	register *producer.RegisterInput
	outcome  string
	err      error // the answered error, if any
}

// audit writes the audit line of one registry request and counts it. ctx
// is the handler's (its arrival starts the duration).
func (s *Sidecar) audit(ctx context.Context, sess *wire.Session, rec auditRecord) {
	logs, o := s.auditLogs(rec.op), s.cfg.Audit.Observer
	if !logs && o == nil {
		return
	}
	client, version := sess.ClientSoftware()
	outcome := rec.outcome
	var code flusserr.Code
	if rec.err != nil {
		a := apierr.Of(rec.err)
		code, outcome = a.Code, a.Code.Name()
	}
	if o != nil {
		o.RegistryRequest(rec.op, client, outcome)
	}
	if !logs {
		return
	}
	if rec.register != nil {
		rec.tables, rec.buckets = registerTables(rec.register)
	}
	tables := rec.tables
	if len(tables) > maxAuditTables {
		tables = tables[:maxAuditTables]
	}
	kv := []any{
		"op", rec.op,
		"listener", sess.ListenerName,
		"peer", addrString(sess),
		"principal", sess.Principal(),
		"client_software", client,
		"client_version", version,
		"producer_id", flusserr.Echo(rec.producerID),
		"tables", tables,
		"tables_total", len(rec.tables),
	}
	if rec.buckets >= 0 {
		kv = append(kv, "buckets", rec.buckets)
	}
	kv = append(kv, "outcome", outcome)
	if rec.err != nil {
		kv = append(kv, "error_code", int32(code))
	}
	if t, ok := wire.Arrival(ctx); ok {
		kv = append(kv, "duration", time.Since(t))
	}
	s.audits.Info("producer offsets audit", kv...)
}

// auditLogs reports whether requests of op leave an audit line.
func (s *Sidecar) auditLogs(op string) bool {
	on := s.cfg.Audit.Writes
	if op == "get" {
		on = s.cfg.Audit.Reads
	}
	return on && s.audits.IsInfo()
}

func addrString(sess *wire.Session) string {
	if sess.RemoteAddr == nil {
		return ""
	}
	return sess.RemoteAddr.String()
}

// registerAudit is the audit record of a REGISTER. Its tables and bucket
// count are read from in only if a line is written (audit).
func registerAudit(in producer.RegisterInput, res producer.Result, err error) auditRecord {
	rec := auditRecord{op: "register", err: err, register: &in}
	if in.ProducerID != nil {
		rec.producerID = *in.ProducerID
	}
	if err == nil {
		rec.outcome = res.String()
	}
	return rec
}

// registerTables is the table ids and bucket count of a REGISTER's line.
func registerTables(in *producer.RegisterInput) (tables []int64, buckets int) {
	tables = make([]int64, 0, len(in.Tables))
	for _, t := range in.Tables {
		tables = append(tables, t.TableID)
		buckets += t.Count()
	}
	return tables, buckets
}

// auditLogger is the logger of the audit lines.
func auditLogger(l hclog.Logger) hclog.Logger { return l.Named("audit") }
