package embedded

import (
	"sort"
	"sync"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// MaxLogEntries bounds the request log: beyond it the oldest entries are
// forgotten (LogStats.Forgotten counts them).
const MaxLogEntries = 10000

// LogEntry is one request as the request log holds it, from its arrival
// to its answer. Times are the wall clock, not the test clock.
type LogEntry struct {
	// Seq numbers the entries in the order their requests were answered,
	// from 1; it never repeats, even across Clear.
	Seq        uint64
	APIKey     messages.Key
	API        string // the api's name; "" for a key not served
	APIVersion int16
	RequestID  int32
	ConnID     uint64
	Listener   string
	// Principal is the connection's principal when the request arrived
	// ("" before a SASL login).
	Principal string
	// ProducerID is the producer a producer offsets request names.
	ProducerID string
	Arrived    time.Time
	Answered   time.Time
	// Code and Message are the answer: NONE for success.
	Code    flusserr.Code
	Message string
	// Outcome is "answered", "dropped" (a control closed the connection),
	// "cut" (the drain timeout) or "client_gone".
	Outcome string
	// Rule is the rule that acted on the request, 0 for none (or a
	// ControlKey function); Action what was done ("" for nothing).
	Rule   uint64
	Action string
	// Applied is set for an apply-then action: the code of the request's
	// own result, which the client did not see.
	Applied *flusserr.Code
}

// LogStats says how much the log holds and has forgotten.
type LogStats struct {
	Entries   int
	Forgotten uint64
	NextSeq   uint64
}

type connReq struct {
	conn uint64
	id   int32
}

// requestLog records requests from the gate (arrival) to the observer's
// RequestDone (answer).
type requestLog struct {
	mu        sync.Mutex
	pending   map[connReq]*LogEntry
	entries   []LogEntry // oldest first
	nextSeq   uint64
	forgotten uint64
	wallNow   func() time.Time
}

func newRequestLog(now func() time.Time) *requestLog {
	if now == nil {
		now = time.Now
	}
	return &requestLog{pending: map[connReq]*LogEntry{}, nextSeq: 1, wallNow: now}
}

func (l *requestLog) arrive(r Request) {
	e := &LogEntry{
		APIKey: r.APIKey, APIVersion: r.APIVersion, RequestID: r.RequestID, ConnID: r.ConnID,
		Listener: r.Listener, Principal: r.Principal, Arrived: l.wallNow(),
	}
	l.mu.Lock()
	l.pending[connReq{r.ConnID, r.RequestID}] = e
	l.mu.Unlock()
}

func actionName(a Action) string {
	switch a.kind {
	case actFail:
		return string(RuleError)
	case actStall:
		if a.delay {
			return string(RuleDelay)
		}
		return string(RuleStall)
	case actDrop:
		return string(RuleDrop)
	case actApplyThenFail:
		return string(RuleApplyThenError)
	case actApplyThenDrop:
		return string(RuleApplyThenDrop)
	}
	return ""
}

// acted notes what a control did to a pending request.
func (l *requestLog) acted(conn uint64, id int32, a Action) {
	if a.kind == actPass {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.pending[connReq{conn, id}]; e != nil {
		e.Rule, e.Action = a.rule, actionName(a)
	}
}

// applied notes the result of a request an apply-then action ran.
func (l *requestLog) applied(conn uint64, id int32, err error) {
	code := flusserr.None
	if err != nil {
		code = apierr.Of(err).Code
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.pending[connReq{conn, id}]; e != nil {
		e.Applied = &code
	}
}

// done completes a request's entry from the server's RequestDone.
func (l *requestLog) done(listener string, d wire.RequestDone) {
	now := l.wallNow()
	k := connReq{d.ConnID, d.Header.RequestID}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.pending[k]
	delete(l.pending, k)
	if e == nil {
		e = &LogEntry{APIKey: d.Header.APIKey, APIVersion: d.Header.APIVersion, RequestID: d.Header.RequestID,
			ConnID: d.ConnID, Listener: listener, Arrived: now.Add(-d.Duration)}
	}
	e.API, e.Answered, e.Code, e.Message = d.API, now, d.Code, d.Message
	if d.SubjectKey == "producer_id" {
		e.ProducerID = d.Subject
	}
	e.Outcome = d.Outcome.String()
	if e.Action == string(RuleDrop) || e.Action == string(RuleApplyThenDrop) {
		e.Outcome = "dropped"
	}
	e.Seq = l.nextSeq
	l.nextSeq++
	if len(l.entries) >= MaxLogEntries {
		// Reslice, not copy down: append moves the kept entries to a new
		// array once in a while, instead of every request once full.
		n := len(l.entries) - MaxLogEntries + 1
		l.entries = l.entries[n:]
		l.forgotten += uint64(n)
	}
	l.entries = append(l.entries, *e)
}

// Log returns up to limit entries (0: all) with Seq >= since, oldest
// first.
func (s *Server) Log(since uint64, limit int) []LogEntry {
	l := s.controls.log
	l.mu.Lock()
	defer l.mu.Unlock()
	// Seq rises along entries: skip to since, then copy at most limit.
	i := sort.Search(len(l.entries), func(i int) bool { return l.entries[i].Seq >= since })
	tail := l.entries[i:]
	if limit > 0 && len(tail) > limit {
		tail = tail[:limit]
	}
	if len(tail) == 0 {
		return nil
	}
	return append([]LogEntry(nil), tail...)
}

// LogStats says how many entries the log holds.
func (s *Server) LogStats() LogStats {
	l := s.controls.log
	l.mu.Lock()
	defer l.mu.Unlock()
	return LogStats{Entries: len(l.entries), Forgotten: l.forgotten, NextSeq: l.nextSeq}
}

// ClearLog forgets every answered request; requests in flight are logged
// when answered. It returns how many entries it removed.
func (s *Server) ClearLog() int {
	l := s.controls.log
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.entries)
	l.entries = nil
	return n
}

// logObserver passes every RequestDone to the request log, then to the
// observer it wraps (metrics), if any.
type logObserver struct {
	log  *requestLog
	next wire.Observer
}

func (o logObserver) ConnAccepted(l string) {
	if o.next != nil {
		o.next.ConnAccepted(l)
	}
}

func (o logObserver) ConnRefused(l, reason string) {
	if o.next != nil {
		o.next.ConnRefused(l, reason)
	}
}

func (o logObserver) ConnClosed(l string) {
	if o.next != nil {
		o.next.ConnClosed(l)
	}
}

func (o logObserver) RequestStarted(l string, h wire.RequestHeader, size int) {
	if o.next != nil {
		o.next.RequestStarted(l, h, size)
	}
}

func (o logObserver) RequestDone(l string, d wire.RequestDone) {
	o.log.done(l, d)
	if o.next != nil {
		o.next.RequestDone(l, d)
	}
}
