package wire

import (
	"fmt"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
)

// Observer is told what a Server does, for metrics. Its methods are called
// from the connections' goroutines, concurrently, and must not block. Every
// RequestStarted is followed by exactly one RequestDone with the same
// header, and every ConnAccepted by one ConnClosed.
type Observer interface {
	// ConnAccepted: a connection was accepted and will be served.
	ConnAccepted(listener string)
	// ConnRefused: a connection was accepted and closed at once, because
	// the server is at MaxConns ("limit") or shutting down ("closing").
	ConnRefused(listener, reason string)
	// ConnClosed: a served connection has ended.
	ConnClosed(listener string)
	// RequestStarted: a request of size bytes (its frame without the length
	// field) was read and is now in flight.
	RequestStarted(listener string, h RequestHeader, size int)
	// RequestDone: the request's answer is ready; it is called before the
	// answer is handed to the connection's writer, so a client that has
	// its answer finds it counted.
	RequestDone(listener string, r RequestDone)
}

// RequestDone describes one answered request.
type RequestDone struct {
	Header RequestHeader
	// ConnID is the Session's ConnID of the request's connection: request
	// ids are unique only within one connection.
	ConnID uint64
	// API is the name the Mux holds for the key; "" for keys it does not
	// hold.
	API string
	// Local is true when the Mux served the key; false when it went to the
	// Forwarder (proxy mode) or was answered unsupported.
	Local bool
	// Size is the request's size in bytes, as in RequestStarted.
	Size int
	// Code is NONE for a SUCCESS answer, else the answer's error code.
	Code flusserr.Code
	// Passed is true when the answer came whole from elsewhere (an upstream
	// coordinator), so an error in it was not made by this server.
	Passed   bool
	Duration time.Duration
	// Subject is what the request is about as its API's Subject names it
	// (such as a producer id), under SubjectKey; "" for none. A long one
	// is cut as flusserr.Echo does.
	Subject    string
	SubjectKey string
	// Message is the error message answered, when Code is not NONE.
	Message string
	// Elsewhere is true when the key is one the Mux sends elsewhere
	// (Mux.WithElsewhere): another server type serves it, and the answer
	// was UNSUPPORTED_VERSION saying so. API then names the key.
	Elsewhere bool
	// Outcome says whether the answer reached the socket's writer for a
	// client still there (Answered), or the request was cut by the drain
	// timeout (Cut) or its client went away first (ClientGone). Code and
	// Message of the last two are what would have been answered (often a
	// cancelled context): neither is an error this server made.
	Outcome Outcome
}

// Outcome is how a request ended; see RequestDone.Outcome.
type Outcome int8

// The outcomes of a request.
const (
	// OutcomeAnswered: the answer was handed to the connection's writer.
	OutcomeAnswered Outcome = iota
	// OutcomeCut: the drain timeout closed the connection first.
	OutcomeCut
	// OutcomeClientGone: the client closed or reset the connection first,
	// or did not take the answer (the write failed).
	OutcomeClientGone
)

func (o Outcome) String() string {
	switch o {
	case OutcomeAnswered:
		return "answered"
	case OutcomeCut:
		return "cut"
	case OutcomeClientGone:
		return "client_gone"
	}
	return fmt.Sprintf("Outcome(%d)", int8(o))
}

// reqTrace follows one request from read to answer.
type reqTrace struct {
	h          RequestHeader
	start      time.Time
	size       int
	subject    string
	subjectKey string
	local      bool
	api        string
	passed     bool // the answer came whole from Forward.Call
	elsewhere  bool // the key is served by another server type (Mux.WithElsewhere)
}

// begin starts tracing a request that arrived at start and tells the
// observer. api and local are what the Mux holds for the request's key.
func (c *serverConn) begin(h RequestHeader, size int, api *API, local bool, start time.Time) reqTrace {
	tr := reqTrace{h: h, start: start, size: size}
	if local {
		tr.local, tr.api, tr.subjectKey = true, api.Name, api.Subject.Key
	}
	if o := c.srv.cfg.Observer; o != nil {
		o.RequestStarted(c.sess.ListenerName, h, size)
	}
	return tr
}

// finishFrame ends a trace with the complete response frame that was sent.
func (c *serverConn) finishFrame(tr reqTrace, frame []byte) {
	const hdr = lengthFieldSize + responseHeaderSize
	if len(frame) < hdr {
		c.finish(tr, ResponseError, nil, tr.passed)
		return
	}
	c.finish(tr, ResponseType(frame[lengthFieldSize]), frame[hdr:], tr.passed)
}

// finishUntracked ends the trace of a request Forward.Try took without
// it being tracked (see track): its answer will not be seen, so the
// observer is told now.
func (c *serverConn) finishUntracked(tr reqTrace) {
	if c.srv.cfg.Observer != nil {
		c.finish(tr, ResponseSuccess, nil, true)
	}
}

// logUntracked logs the error answer of a request that was not traced.
func (c *serverConn) logUntracked(requestID int32, frame []byte) {
	d := RequestDone{Header: RequestHeader{RequestID: requestID}, ConnID: c.sess.ConnID, Outcome: c.outcome()}
	const hdr = lengthFieldSize + responseHeaderSize
	var body []byte
	if len(frame) >= hdr {
		body = frame[hdr:]
	}
	a := apierr.Of(DecodeError(body))
	d.Code, d.Message = a.Code, a.Message
	c.logRequest(d)
}

// finish ends a trace: one log line per request (DEBUG, or WARN for an
// error this server made) and the observer's RequestDone.
func (c *serverConn) finish(tr reqTrace, t ResponseType, body []byte, passed bool) {
	d := RequestDone{
		Header: tr.h, ConnID: c.sess.ConnID, API: tr.api, Local: tr.local, Size: tr.size, Passed: passed,
		Duration: time.Since(tr.start), Subject: tr.subject, SubjectKey: tr.subjectKey, Outcome: c.outcome(), Elsewhere: tr.elsewhere,
	}
	if t != ResponseSuccess {
		a := apierr.Of(DecodeError(body))
		d.Code, d.Message = a.Code, a.Message
	}
	c.logRequest(d)
	if o := c.srv.cfg.Observer; o != nil {
		o.RequestDone(c.sess.ListenerName, d)
	}
}

func (c *serverConn) logRequest(d RequestDone) {
	// A key sent to the wrong server type is the client's mistake, told
	// in the answer: not worth a WARN line each; nor is a cut or a client
	// gone.
	warn := d.Code != flusserr.None && !d.Passed && d.Outcome == OutcomeAnswered && !d.Elsewhere
	if !warn && !c.srv.log.IsDebug() {
		return
	}
	kv := []any{"api", apiLabel(d), "api_key", d.Header.APIKey, "request_id", d.Header.RequestID}
	switch d.Outcome {
	case OutcomeCut:
		// The drain's summary line says how many; each is told at DEBUG.
		c.logger().Debug("request cut by the drain timeout; its connection closed unanswered", append(kv, "duration", d.Duration)...)
		return
	case OutcomeClientGone:
		c.logger().Debug("client went away before its answer", append(kv, "duration", d.Duration)...)
		return
	}
	if d.Subject != "" && d.SubjectKey != "" {
		kv = append(kv, d.SubjectKey, d.Subject)
	}
	if d.Code == flusserr.None {
		kv = append(kv, "result", "SUCCESS")
	} else {
		kv = append(kv, "code", d.Code.Name(), "error_code", int32(d.Code))
		if d.Message != "" {
			kv = append(kv, "error", d.Message)
		}
	}
	kv = append(kv, "duration", d.Duration)
	if warn {
		c.logger().Warn("request answered with an error", kv...)
		return
	}
	c.logger().Debug("request", kv...)
}

func apiLabel(d RequestDone) string {
	if d.API != "" {
		return d.API
	}
	if d.Local {
		return "local"
	}
	return "forwarded"
}
