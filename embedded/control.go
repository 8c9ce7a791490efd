package embedded

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// AnyKey installs a control that sees the requests of every api key.
const AnyKey messages.Key = -1

// Request is what a Control sees of one request: its header and its
// connection. Controls run before authentication and before the body is
// decoded.
type Request struct {
	APIKey     messages.Key
	APIVersion int16
	RequestID  int32
	ConnID     uint64
	Listener   string
	Principal  string
}

// Control decides what happens to a request. It runs under the server's
// control lock, so it must return at once (return Stall or Delay to hold
// the request) and must not call the Server's control methods.
type Control func(Request) Action

type actionKind int

const (
	actPass actionKind = iota
	actFail
	actStall
	actDrop
)

// Action is a Control's decision. Build one with Pass, Fail, Stall, Delay
// or Drop.
type Action struct {
	kind    actionKind
	err     error
	release <-chan struct{}
	delay   time.Duration
	keep    bool
}

// Pass leaves the request alone and keeps the control installed for the
// requests that follow: a control that waits for one particular request
// returns Pass for the others.
func Pass() Action { return Action{kind: actPass} }

// Fail answers the request with an ERROR response carrying code and
// message without running it.
func Fail(code flusserr.Code, message string) Action {
	return Action{kind: actFail, err: &apierr.Error{Class: apierr.ErrInjected, Code: code, Detail: message}}
}

// Stall holds the request until release is closed, then serves it as
// usual. A request stalled when its connection or the server closes is
// dropped.
func Stall(release <-chan struct{}) Action { return Action{kind: actStall, release: release} }

// Delay holds the request for d, then serves it as usual.
func Delay(d time.Duration) Action { return Action{kind: actStall, delay: d} }

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

type control struct {
	key messages.Key
	fn  Control
}

type controls struct {
	mu   sync.Mutex
	list []*control
	done chan struct{}
	once sync.Once
}

func newControls() *controls { return &controls{done: make(chan struct{})} }

func (c *controls) close() { c.once.Do(func() { close(c.done) }) }

// ControlKey installs fn for the requests of api key key (AnyKey for all).
// Controls are offered a request in the order they were installed; the
// first that does not Pass decides, and is removed unless its Action Keeps
// it. A request that no control decides is served as usual.
//
// It is franz-go kfake's ControlKey, in the shape of this server: a control
// answers with a Fluss error code, stalls or drops, and never builds a
// response body itself.
func (s *Server) ControlKey(key messages.Key, fn Control) {
	s.controls.mu.Lock()
	defer s.controls.mu.Unlock()
	s.controls.list = append(s.controls.list, &control{key: key, fn: fn})
}

// FailNext makes the next request of key fail with code and message.
func (s *Server) FailNext(key messages.Key, code flusserr.Code, message string) {
	s.ControlKey(key, func(Request) Action { return Fail(code, message) })
}

// StallNext holds the next request of key until release is called (safe to
// call more than once), then serves it.
func (s *Server) StallNext(key messages.Key) (release func()) {
	ch := make(chan struct{})
	var once sync.Once
	s.ControlKey(key, func(Request) Action { return Stall(ch) })
	return func() { once.Do(func() { close(ch) }) }
}

// DropNext closes the connection of the next request of key without an
// answer.
func (s *Server) DropNext(key messages.Key) {
	s.ControlKey(key, func(Request) Action { return Drop() })
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

// decide runs the installed controls on one request, in order, under the
// lock so that two requests never take the same one-shot control.
func (c *controls) decide(r Request) Action {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ctl := range c.list {
		if ctl.key != AnyKey && ctl.key != r.APIKey {
			continue
		}
		a := ctl.fn(r)
		if a.kind == actPass {
			continue
		}
		if !a.keep {
			c.list = append(c.list[:i:i], c.list[i+1:]...)
		}
		return a
	}
	return Pass()
}

// gate runs the controls before next (the authentication gate).
func (c *controls) gate(next wire.GateFunc) wire.GateFunc {
	return func(ctx context.Context, sess *wire.Session, h wire.RequestHeader) error {
		a := c.decide(Request{
			APIKey: h.APIKey, APIVersion: h.APIVersion, RequestID: h.RequestID,
			ConnID: sess.ConnID, Listener: sess.ListenerName, Principal: sess.Principal(),
		})
		switch a.kind {
		case actFail:
			return a.err
		case actDrop:
			sess.Close()
			return errDropped
		case actStall:
			var timer <-chan time.Time
			if a.release == nil {
				t := time.NewTimer(a.delay)
				defer t.Stop()
				timer = t.C
			}
			select {
			case <-a.release:
			case <-timer:
			case <-ctx.Done():
				return ctx.Err()
			case <-c.done:
				sess.Close()
				return errDropped
			}
		}
		if next == nil {
			return nil
		}
		return next(ctx, sess, h)
	}
}
