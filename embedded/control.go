package embedded

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// AnyKey installs a control that sees the requests of every api key.
const AnyKey messages.Key = -1

// Request is what a control sees of one request: its header and its
// connection, and, for a Rule that acts when the request is served, the
// producer id the request names.
type Request struct {
	APIKey     messages.Key
	APIVersion int16
	RequestID  int32
	ConnID     uint64
	Listener   string
	Principal  string
	// ProducerID is the producer a REGISTER, GET or DELETE producer
	// offsets request names. It is set only where a request is served
	// (Rules with a producer filter or an apply-then action); a Control
	// installed with ControlKey runs before the body is decoded and sees
	// "".
	ProducerID string
}

// Control decides what happens to a request. It runs before
// authentication and before the body is decoded, under the server's
// control lock, so it must return at once (return Stall or Delay to hold
// the request) and must not call the Server's control methods.
type Control func(Request) Action

type actionKind int8

const (
	actPass actionKind = iota
	actFail
	actStall
	actDrop
	actApplyThenFail
	actApplyThenDrop
)

// Action is a control's decision. Build one with Pass, Fail, Stall, Delay
// or Drop; Rules also apply a request and then fail or drop it.
type Action struct {
	kind    actionKind
	err     error
	release <-chan struct{}
	// timeout ends a stall by itself; 0 waits for release (or Release,
	// or the connection or server closing).
	timeout time.Duration
	delay   bool // a delay, not a stall: for the request log
	keep    bool
	rule    uint64 // the Rule that decided, 0 for a Control
}

// Pass leaves the request alone and keeps the control installed for the
// requests that follow: a control that waits for one particular request
// returns Pass for the others.
func Pass() Action { return Action{kind: actPass} }

// Fail answers the request with an ERROR response carrying code and
// message without running it.
func Fail(code flusserr.Code, message string) Action {
	return Action{kind: actFail, err: injected(code, message)}
}

func injected(code flusserr.Code, message string) error {
	return &apierr.Error{Class: apierr.ErrInjected, Code: code, Detail: message}
}

// Stall holds the request until release is closed (or Server.Release is
// called), then serves it as usual. A request stalled when its connection
// or the server closes is dropped.
func Stall(release <-chan struct{}) Action { return Action{kind: actStall, release: release} }

// Delay holds the request for d, then serves it as usual.
func Delay(d time.Duration) Action {
	return Action{kind: actStall, timeout: max(d, time.Nanosecond), delay: true}
}

// Drop closes the request's connection at once, without an answer: the
// client sees the connection lost with the request in flight. Other
// requests in flight on that connection are lost too.
func Drop() Action { return Action{kind: actDrop} }

// Keep makes the control stay installed after it acts, for every later
// request of its key, until the server closes. Without Keep a control acts
// on one request and is removed.
func (a Action) Keep() Action {
	a.keep = true
	return a
}

// phase is where a control is offered requests: at the gate (every
// request, before authentication, header only) or where the request is
// served (after authentication and decoding, around its handler).
type phase int8

const (
	phaseGate phase = iota
	phaseServe
)

type control struct {
	key   messages.Key
	phase phase
	fn    Control    // a ControlKey function, or nil for a rule
	rule  *ruleState // the rule, or nil for a function
}

// controls is the one list of installed controls, functions and rules
// alike, with the rules' records, the stalled requests and the request log.
type controls struct {
	mu   sync.Mutex
	list []*control
	// rules holds every rule record by id, active or used up, until
	// removed (see rules.go).
	rules   map[uint64]*ruleState
	order   []uint64 // rule ids in the order they were added
	nextID  uint64
	changed chan struct{} // closed and replaced when a rule is hit
	stalled map[uint64]*stalledReq
	nextSt  uint64

	log *requestLog

	done chan struct{}
	once sync.Once
}

type stalledReq struct {
	rule    uint64
	release chan struct{}
	once    sync.Once
}

func (s *stalledReq) free() { s.once.Do(func() { close(s.release) }) }

func newControls(now func() time.Time) *controls {
	return &controls{
		rules: map[uint64]*ruleState{}, changed: make(chan struct{}),
		stalled: map[uint64]*stalledReq{}, log: newRequestLog(now),
		done: make(chan struct{}),
	}
}

func (c *controls) close() { c.once.Do(func() { close(c.done) }) }

// ControlKey installs fn for the requests of api key key (AnyKey for all).
// Controls are offered a request in the order they were installed; the
// first that does not Pass decides, and is removed unless its Action Keeps
// it. A request that no control decides is served as usual.
//
// It is franz-go kfake's ControlKey, in the shape of this server: a control
// answers with a Fluss error code, stalls or drops, and never builds a
// response body itself. Rules (AddRule) are the declarative form, shared
// with the control API over HTTP, and sit in the same list.
func (s *Server) ControlKey(key messages.Key, fn Control) {
	s.controls.mu.Lock()
	defer s.controls.mu.Unlock()
	s.controls.list = append(s.controls.list, &control{key: key, fn: fn})
}

// FailNext makes the next request of key fail with code and message.
func (s *Server) FailNext(key messages.Key, code flusserr.Code, message string) {
	s.mustAdd(Rule{Key: key, Action: RuleError, Code: code, Message: message, Count: 1})
}

// StallNext holds the next request of key until release is called (safe to
// call more than once), then serves it.
func (s *Server) StallNext(key messages.Key) (release func()) {
	// A function, not a Rule: a release that comes before the request
	// still lets it through, since the channel is closed by then.
	ch := make(chan struct{})
	var once sync.Once
	s.ControlKey(key, func(Request) Action { return Stall(ch) })
	return func() { once.Do(func() { close(ch) }) }
}

// DropNext closes the connection of the next request of key without an
// answer.
func (s *Server) DropNext(key messages.Key) {
	s.mustAdd(Rule{Key: key, Action: RuleDrop, Count: 1})
}

func (s *Server) mustAdd(r Rule) RuleInfo {
	info, err := s.AddRule(r)
	if err != nil {
		panic("embedded: " + err.Error()) // the rules above are valid
	}
	return info
}

// PendingControls counts the installed controls for key (AnyKey counts
// those installed for every key), so that a test can check its control
// was used.
func (s *Server) PendingControls(key messages.Key) int {
	s.controls.mu.Lock()
	defer s.controls.mu.Unlock()
	n := 0
	for _, c := range s.controls.list {
		if c.key == key {
			n++
		}
	}
	return n
}

// errDropped is the answer of a dropped request; it is never delivered,
// because the connection is closed first.
var errDropped = errors.New("embedded: connection dropped by a control")

// decide runs the installed controls of phase ph on one request, in
// order, under the lock so that two requests never take the same one-shot
// control. producerOf, if not nil, reads the request's producer id; it is
// asked only for a rule that filters on one, since for a REGISTER (whose
// body is left raw) it scans the body.
func (c *controls) decide(ph phase, r Request, producerOf func() string) Action {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ctl := range c.list {
		if ctl.phase != ph || (ctl.key != AnyKey && ctl.key != r.APIKey) {
			continue
		}
		var a Action
		if ctl.rule != nil {
			if ctl.rule.ProducerID != "" && producerOf != nil {
				r.ProducerID, producerOf = producerOf(), nil
			}
			a = ctl.rule.decide(r)
		} else {
			a = ctl.fn(r)
		}
		if a.kind == actPass {
			continue
		}
		used := !a.keep
		if ctl.rule != nil {
			used = ctl.rule.hit()
			c.broadcast()
		}
		if used {
			c.list = append(c.list[:i:i], c.list[i+1:]...)
		}
		return a
	}
	return Pass()
}

// hold waits out a stall: until its release, Release, its timeout, the
// connection's end (ctx) or the server's close.
func (c *controls) hold(ctx context.Context, sess *wire.Session, a Action) error {
	c.mu.Lock()
	c.nextSt++
	id := c.nextSt
	st := &stalledReq{rule: a.rule, release: make(chan struct{})}
	c.stalled[id] = st
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.stalled, id)
		c.mu.Unlock()
	}()
	var timer <-chan time.Time
	if a.timeout > 0 {
		t := time.NewTimer(a.timeout)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-a.release:
	case <-st.release:
	case <-timer:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		sess.Close()
		return errDropped
	}
	return nil
}

// before carries out an action that acts instead of the request or
// ahead of it: nil lets the request go on.
func (c *controls) before(ctx context.Context, sess *wire.Session, a Action) error {
	switch a.kind {
	case actFail:
		return a.err
	case actDrop:
		sess.Close()
		return errDropped
	case actStall:
		return c.hold(ctx, sess, a)
	}
	return nil
}

// gate runs the gate-phase controls and logs the request's arrival,
// before next (the authentication gate).
func (c *controls) gate(next wire.GateFunc) wire.GateFunc {
	return func(ctx context.Context, sess *wire.Session, h wire.RequestHeader) error {
		r := Request{
			APIKey: h.APIKey, APIVersion: h.APIVersion, RequestID: h.RequestID,
			ConnID: sess.ConnID, Listener: sess.ListenerName, Principal: sess.Principal(),
		}
		c.log.arrive(r)
		a := c.decide(phaseGate, r, nil)
		c.log.acted(r.ConnID, r.RequestID, a)
		if err := c.before(ctx, sess, a); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		return next(ctx, sess, h)
	}
}

// serve wraps one API's handler with the serve-phase controls: rules that
// filter on the producer id, and those that apply the request before they
// fail or drop it.
func (c *controls) serve(api wire.API) wire.Handler {
	next, subject := api.Handle, api.Subject
	return func(ctx context.Context, sess *wire.Session, wr *wire.Request) (proto.Message, error) {
		r := Request{
			APIKey: api.Key, APIVersion: wr.Version, RequestID: wr.RequestID,
			ConnID: sess.ConnID, Listener: sess.ListenerName, Principal: sess.Principal(),
		}
		var producerOf func() string
		if subject.Key == "producer_id" && subject.Of != nil {
			producerOf = func() string { return subject.Of(wr) }
		}
		a := c.decide(phaseServe, r, producerOf)
		c.log.acted(r.ConnID, r.RequestID, a)
		if err := c.before(ctx, sess, a); err != nil {
			return nil, err
		}
		msg, err := next(ctx, sess, wr)
		switch a.kind {
		case actApplyThenFail:
			c.log.applied(r.ConnID, r.RequestID, err)
			return nil, a.err
		case actApplyThenDrop:
			c.log.applied(r.ConnID, r.RequestID, err)
			sess.Close()
			return nil, errDropped
		}
		return msg, err
	}
}
