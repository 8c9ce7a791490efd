package embedded

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// RuleAction is what a Rule does to the requests it takes.
type RuleAction string

// The actions of a Rule.
const (
	// RuleError answers with Code and Message without running the
	// request.
	RuleError RuleAction = "error"
	// RuleStall holds the request until released (Server.Release), until
	// Duration if set, or until its connection or the server closes, then
	// serves it as usual.
	RuleStall RuleAction = "stall"
	// RuleDelay holds the request for Duration, then serves it.
	RuleDelay RuleAction = "delay"
	// RuleDrop closes the connection without an answer.
	RuleDrop RuleAction = "drop"
	// RuleApplyThenError runs the request and then answers Code and
	// Message instead of its result: an unknown outcome.
	RuleApplyThenError RuleAction = "apply_then_error"
	// RuleApplyThenDrop runs the request and then closes the connection
	// without an answer: an unknown outcome.
	RuleApplyThenDrop RuleAction = "apply_then_drop"
)

// Bounds on what a Rule may ask, so that no rule holds a request, or the
// server's memory, without end.
const (
	// MaxRuleDuration bounds a delay and a stall's own timeout.
	MaxRuleDuration = time.Hour
	// MaxRules bounds the rule records kept (active or used up); adding
	// one more drops the oldest used-up record, or is refused.
	MaxRules = 1024
	// MaxRuleMessage bounds a rule's error message, in bytes.
	MaxRuleMessage = 4096
	// MaxProducerIDFilter bounds a rule's producer id filter, in bytes.
	MaxProducerIDFilter = 1024
)

// Rule is a declarative control: what to do with the requests of one api
// key (or AnyKey), how many times, and optionally only for one producer
// id or one connection. Rules and ControlKey functions share one list,
// offered each request in the order installed.
//
// A rule without a producer filter whose action does not apply the
// request acts at the gate: before authentication, on every request of
// its key, served or not. A rule with ProducerID, or with an apply-then
// action, acts where the request is served: after authentication and
// decoding, only on requests of a served key and version.
type Rule struct {
	Key    messages.Key
	Action RuleAction
	// Code and Message are the answer of RuleError and
	// RuleApplyThenError; Code must not be NONE (0).
	Code    flusserr.Code
	Message string
	// Duration is RuleDelay's delay (required) and RuleStall's own
	// timeout (0: none). At most MaxRuleDuration.
	Duration time.Duration
	// Count is how many requests the rule takes before it is used up; 0
	// keeps it until removed.
	Count int
	// ProducerID, if set, limits the rule to requests naming that
	// producer (REGISTER, GET and DELETE producer offsets).
	ProducerID string
	// ConnID, if set, limits the rule to one connection (the conn_id of
	// the request log).
	ConnID uint64
}

// RuleInfo is a rule's record: the rule, its id, how often it acted and
// whether it still takes requests.
type RuleInfo struct {
	Rule
	ID uint64
	// Hits counts the requests the rule acted on.
	Hits int
	// Remaining is how many more it takes; -1 without a Count.
	Remaining int
	Active    bool
	// Stalled counts the requests it holds now.
	Stalled int
	// Waiting counts the WaitHits calls waiting on it now, so that a test
	// can tell that its wait has begun.
	Waiting int
}

// ErrTooManyRules refuses a rule when MaxRules records are active.
var ErrTooManyRules = fmt.Errorf("embedded: %d rules are active; remove some first", MaxRules)

// ErrNoRule is the answer for a rule id the server does not hold.
var ErrNoRule = errors.New("embedded: no such rule")

// RuleFieldError names the field of a Rule that is not valid.
type RuleFieldError struct {
	Field  string
	Reason string
}

func (e *RuleFieldError) Error() string { return e.Field + ": " + e.Reason }

// Validate checks a rule; a *RuleFieldError names what is wrong.
func (r Rule) Validate() error {
	bad := func(field, reason string) error { return &RuleFieldError{Field: field, Reason: reason} }
	switch r.Action {
	case RuleError, RuleApplyThenError:
		if r.Code == flusserr.None {
			return bad("code", "an error rule needs a non-zero Fluss error code")
		}
	case RuleDelay:
		if r.Duration <= 0 {
			return bad("duration", "a delay needs a positive duration")
		}
	case RuleStall, RuleDrop, RuleApplyThenDrop:
	case "":
		return bad("action", "missing")
	default:
		return bad("action", fmt.Sprintf("%q is not one of error, stall, delay, drop, apply_then_error, apply_then_drop", r.Action))
	}
	if r.Key < 0 && r.Key != AnyKey {
		return bad("api_key", "an api key is 0 or more (or absent for every key)")
	}
	if r.Code != flusserr.None && r.Action != RuleError && r.Action != RuleApplyThenError {
		return bad("code", fmt.Sprintf("only error rules answer a code, not %s", r.Action))
	}
	if r.Duration < 0 || r.Duration > MaxRuleDuration {
		return bad("duration", fmt.Sprintf("must be between 0 and %s", MaxRuleDuration))
	}
	if r.Duration > 0 && r.Action != RuleDelay && r.Action != RuleStall {
		return bad("duration", fmt.Sprintf("only a delay or a stall takes a duration, not %s", r.Action))
	}
	if r.Count < 0 {
		return bad("count", "must be 0 (until removed) or more")
	}
	if len(r.Message) > MaxRuleMessage {
		return bad("message", fmt.Sprintf("longer than %d bytes", MaxRuleMessage))
	}
	if len(r.ProducerID) > MaxProducerIDFilter {
		return bad("producer_id", fmt.Sprintf("longer than %d bytes", MaxProducerIDFilter))
	}
	return nil
}

// ruleState is a rule with its counters; guarded by controls.mu.
type ruleState struct {
	Rule
	id        uint64
	hits      int
	remaining int // -1: until removed
	active    bool
	waiting   int // WaitHits calls waiting now
}

// phase is where the rule acts (see Rule).
func (r *ruleState) phase() phase {
	if r.ProducerID != "" || r.Action == RuleApplyThenError || r.Action == RuleApplyThenDrop {
		return phaseServe
	}
	return phaseGate
}

// decide is the rule's answer to one request: Pass when a filter leaves it
// out.
func (r *ruleState) decide(req Request) Action {
	if r.ConnID != 0 && req.ConnID != r.ConnID {
		return Pass()
	}
	if r.ProducerID != "" && req.ProducerID != r.ProducerID {
		return Pass()
	}
	a := Action{rule: r.id}
	switch r.Action {
	case RuleError:
		a.kind, a.err = actFail, injected(r.Code, r.Message)
	case RuleApplyThenError:
		a.kind, a.err = actApplyThenFail, injected(r.Code, r.Message)
	case RuleStall:
		a.kind, a.timeout = actStall, r.Duration
	case RuleDelay:
		a.kind, a.timeout, a.delay = actStall, r.Duration, true
	case RuleDrop:
		a.kind = actDrop
	case RuleApplyThenDrop:
		a.kind = actApplyThenDrop
	}
	return a
}

// hit counts one request the rule acted on and reports whether that used
// it up.
func (r *ruleState) hit() (usedUp bool) {
	r.hits++
	if r.remaining > 0 {
		r.remaining--
		if r.remaining == 0 {
			r.active = false
			return true
		}
	}
	return false
}

func (c *controls) broadcast() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// AddRule validates and installs a rule at the end of the list.
func (s *Server) AddRule(r Rule) (RuleInfo, error) {
	if err := r.Validate(); err != nil {
		return RuleInfo{}, err
	}
	c := s.controls
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.rules) >= MaxRules && !c.pruneOneLocked() {
		return RuleInfo{}, ErrTooManyRules
	}
	c.nextID++
	st := &ruleState{Rule: r, id: c.nextID, remaining: r.Count, active: true}
	if r.Count == 0 {
		st.remaining = -1
	}
	c.rules[st.id] = st
	c.order = append(c.order, st.id)
	c.list = append(c.list, &control{key: r.Key, phase: st.phase(), rule: st})
	return c.infoLocked(st), nil
}

// pruneOneLocked drops the oldest used-up rule record.
func (c *controls) pruneOneLocked() bool {
	for i, id := range c.order {
		if st := c.rules[id]; st != nil && !st.active {
			delete(c.rules, id)
			c.order = append(c.order[:i:i], c.order[i+1:]...)
			return true
		}
	}
	return false
}

func (c *controls) infoLocked(st *ruleState) RuleInfo {
	n := 0
	for _, x := range c.stalled {
		if x.rule == st.id {
			n++
		}
	}
	return RuleInfo{Rule: st.Rule, ID: st.id, Hits: st.hits, Remaining: st.remaining, Active: st.active, Stalled: n, Waiting: st.waiting}
}

// Rules lists every rule record, active or used up, in the order added.
func (s *Server) Rules() []RuleInfo {
	c := s.controls
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]RuleInfo, 0, len(c.order))
	for _, id := range c.order {
		out = append(out, c.infoLocked(c.rules[id]))
	}
	return out
}

// RuleByID returns one rule's record.
func (s *Server) RuleByID(id uint64) (RuleInfo, error) {
	c := s.controls
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.rules[id]
	if !ok {
		return RuleInfo{}, ErrNoRule
	}
	return c.infoLocked(st), nil
}

// RemoveRule uninstalls a rule and forgets its record; requests it stalls
// are released.
func (s *Server) RemoveRule(id uint64) error {
	c := s.controls
	c.mu.Lock()
	if _, ok := c.rules[id]; !ok {
		c.mu.Unlock()
		return ErrNoRule
	}
	c.removeLocked(id)
	c.mu.Unlock()
	s.Release(id)
	return nil
}

func (c *controls) removeLocked(id uint64) {
	delete(c.rules, id)
	for i, x := range c.order {
		if x == id {
			c.order = append(c.order[:i:i], c.order[i+1:]...)
			break
		}
	}
	for i, ctl := range c.list {
		if ctl.rule != nil && ctl.rule.id == id {
			c.list = append(c.list[:i:i], c.list[i+1:]...)
			break
		}
	}
	c.broadcast()
}

// RemoveRules uninstalls every rule (ControlKey functions stay) and
// releases every stalled request. It returns how many rules it removed.
func (s *Server) RemoveRules() int {
	c := s.controls
	c.mu.Lock()
	n := len(c.rules)
	for _, id := range append([]uint64(nil), c.order...) {
		c.removeLocked(id)
	}
	c.mu.Unlock()
	s.Release(0)
	return n
}

// Release lets the requests stalled by rule id go on (0: every stalled
// request, of rules and ControlKey functions alike) and returns how many it
// released. Later requests the rule takes are stalled anew.
func (s *Server) Release(id uint64) int {
	c := s.controls
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, st := range c.stalled {
		if id == 0 || st.rule == id {
			st.free()
			delete(c.stalled, k)
			n++
		}
	}
	return n
}

// WaitHits waits until rule id has acted on at least n requests, and
// returns its record; while it waits, the rule's Waiting counts it. It
// ends early with ctx's error (the record as it stands is returned too)
// or ErrNoRule if the rule is removed meanwhile.
func (s *Server) WaitHits(ctx context.Context, id uint64, n int) (RuleInfo, error) {
	c := s.controls
	var counted *ruleState // the record whose waiting counts this call
	defer func() {
		if counted != nil {
			c.mu.Lock()
			counted.waiting--
			c.mu.Unlock()
		}
	}()
	for {
		c.mu.Lock()
		st, ok := c.rules[id]
		if !ok {
			c.mu.Unlock()
			return RuleInfo{}, ErrNoRule
		}
		if counted == nil && st.hits < n {
			counted = st
			st.waiting++
		}
		info, changed := c.infoLocked(st), c.changed
		c.mu.Unlock()
		if counted == st {
			info.Waiting-- // the record as this caller gets it back: its own wait is over
		}
		if info.Hits >= n {
			return info, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return info, ctx.Err()
		case <-c.done:
			return info, errors.New("embedded: server closed")
		}
	}
}
