package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
)

// start runs one request: at once on the reader goroutine when the API's
// Quick path answers it; otherwise, once an in-flight slot is free, through
// Forward.Try when it takes the request, else on its own goroutine. It
// reports false if the connection died while waiting for a slot. A borrowed
// body lives in the read buffer (see readRequest): it is copied before
// anything keeps it.
func (c *serverConn) start(h RequestHeader, body []byte, borrowed bool, charge int64, arrived time.Time) bool {
	q := &c.requests
	api, local := c.srv.cfg.Mux.find(h.APIKey)
	tr := c.begin(h, requestHeaderSize+len(body), api, local, arrived)
	gated := false
	if local && api.Quick.Answer != nil && h.APIVersion >= api.MinVersion && h.APIVersion <= api.MaxVersion {
		// Answered here and now, a Quick request takes no in-flight slot:
		// it holds nothing once this returns.
		var frame []byte
		var subject string
		var wait Waiter
		frame, subject, gated, wait = c.quick(api, h, body)
		if wait != nil {
			if !c.acquireSlot() {
				c.finishFrame(tr, c.errorFrame(h, c.ctx.Err())) // nobody reads it
				return false
			}
			c.srv.lot.park(newParked(c, api, body, borrowed, charge, tr, wait))
			return true
		}
		if frame != nil {
			tr.subject = flusserr.Echo(subject)
			c.srv.cfg.Budget.Release(charge)
			if len(frame) > maxScratch {
				c.srv.cfg.Budget.NoteLarge(int64(len(frame)))
			}
			c.finishFrame(tr, frame)
			c.writer.send(frame) // copies it
			putBuf(frame)
			return true
		}
	}
	if !c.acquireSlot() {
		c.finishFrame(tr, c.errorFrame(h, c.ctx.Err())) // nobody reads it
		return false
	}
	if borrowed {
		body = bytes.Clone(body)
	}
	if c.srv.cfg.Forward.Try != nil {
		if !local {
			// Tracked before the offer: the answer may come before it
			// returns. Untracked requests are finished here or not at all.
			tracked := c.tracking() && q.track(tr)
			var frame []byte
			q.holdCharge(h.RequestID, charge)
			frame, gated = c.offer(h, body)
			if frame != nil || gated {
				q.takeCharge(h.RequestID) // not taken: charge stays with this request
			}
			if frame != nil {
				c.srv.cfg.Budget.Release(charge)
				if tracked {
					q.untrack(h.RequestID)
				}
				go c.answer(tr, frame)
				return true
			}
			if !gated {
				if !tracked {
					c.finishUntracked(tr)
				}
				return true // Forward.Try took it
			}
			if tracked {
				q.untrack(h.RequestID)
			}
		}
	}
	go c.serve(h, body, gated, charge, tr)
	return true
}

// panicFrame logs a panic of what (a handler or hook) serving h, with its
// stack, and returns the internal-error answer for it.
func (c *serverConn) panicFrame(what string, h RequestHeader, r any) []byte {
	c.logger().Error(what+" panicked", "api_key", h.APIKey, "request_id", h.RequestID,
		"error", fmt.Sprint(r), "stack", string(debug.Stack()))
	return c.errorFrame(h, fmt.Errorf("internal server error: panic: %v", r))
}

// maxScratch: a Quick answer larger than this is noted to the budget as a
// large allocation (see Budget.NoteLarge).
const maxScratch = maxPooled

// quick runs the Gate and the API's Quick path on the reader goroutine. It
// returns the frame to answer with: the Quick answer (built in a pooled
// buffer), a Gate error or a panic; or nil with gated=true when Quick
// declined, so that the request is served as usual without running the Gate
// again; or the Waiter the request must first wait for.
func (c *serverConn) quick(api *API, h RequestHeader, body []byte) (frame []byte, subject string, gated bool, wait Waiter) {
	defer func() {
		if r := recover(); r != nil {
			frame, wait = c.panicFrame("handler", h, r), nil
		}
	}()
	if g := c.srv.cfg.Gate; g != nil {
		if err := g(c.ctx, c.sess, h); err != nil {
			return c.errorFrame(h, err), "", false, nil
		}
	}
	if api.Quick.Wait != nil {
		if w := api.Quick.Wait(c.sess, h.APIVersion, body); w != nil {
			return nil, "", true, w
		}
	}
	buf := getBuf() // from the pool the socket writers share; start gives it back
	frame, subject, ok := c.quickFrame(api, h, body, buf)
	if !ok {
		putBuf(buf)
		return nil, "", true, nil
	}
	return frame, subject, false, nil
}

// quickFrame offers the request to Quick.Answer, building the answer's
// frame in buf; ok is false when it declined.
func (c *serverConn) quickFrame(api *API, h RequestHeader, body, buf []byte) (frame []byte, subject string, ok bool) {
	frame, off := beginFrame(buf)
	frame = append(frame, byte(ResponseSuccess))
	frame = binary.BigEndian.AppendUint32(frame, uint32(h.RequestID))
	frame, subject, ok = api.Quick.Answer(c.sess, h.APIVersion, body, frame)
	if !ok {
		return nil, "", false
	}
	if len(frame)-off-lengthFieldSize > math.MaxInt32 {
		return c.errorFrame(h, fmt.Errorf("response of %d bytes is too large for a frame", len(frame)-off-lengthFieldSize)), subject, true
	}
	return endFrame(frame, off), subject, true
}

// answerParked answers a request whose wait (Quick.Wait) is over: by
// Quick.Answer once the wait was met, else, on a goroutine of its own, as serve
// does. The Gate already ran.
func (c *serverConn) answerParked(p *parked) {
	if c.ended.Load() {
		c.abandonParked(p)
		return
	}
	if p.w.Err() == nil {
		buf := getBuf() // as quick's: send copies the frame, and it goes back
		frame, subject, ok := c.quickAfter(p.api, p.tr.h, p.body, buf)
		if ok {
			defer putBuf(frame)
			defer c.requests.done()
			p.tr.subject = flusserr.Echo(subject)
			c.srv.cfg.Budget.Release(p.charge)
			c.srv.cfg.Budget.NoteLarge(int64(len(frame)))
			c.finishFrame(p.tr, frame)
			c.writer.send(frame)
			return
		}
		putBuf(buf)
	}
	go c.serve(p.tr.h, p.body, true, p.charge, p.tr)
}

// abandonParked ends a parked request of a closed connection: nobody reads
// its answer.
func (c *serverConn) abandonParked(p *parked) {
	defer c.requests.done()
	c.srv.cfg.Budget.Release(p.charge)
	// context.Canceled: ended is set a moment before ctx is cancelled.
	c.finishFrame(p.tr, c.errorFrame(p.tr.h, context.Canceled))
}

// quickAfter is quickFrame recovering a panic.
func (c *serverConn) quickAfter(api *API, h RequestHeader, body, buf []byte) (frame []byte, subject string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			frame, ok = c.panicFrame("handler", h, r), true
		}
	}()
	return c.quickFrame(api, h, body, buf)
}

// offer runs the Gate and Forward.Try on the reader goroutine. It returns a
// frame to answer with (a Gate error or a panic), or nil with gated=true
// when Try declined the request.
func (c *serverConn) offer(h RequestHeader, body []byte) (frame []byte, gated bool) {
	defer func() {
		if r := recover(); r != nil {
			frame = c.panicFrame("forward hook", h, r)
		}
	}()
	cfg := &c.srv.cfg
	if cfg.Gate != nil {
		if err := cfg.Gate(c.ctx, c.sess, h); err != nil {
			return c.errorFrame(h, err), false
		}
	}
	if cfg.Forward.Try(c.sess, h, body, c.writer.rep) {
		return nil, false
	}
	return nil, true
}

// flushForwarded tells Forward.Flush that the reader is about to wait.
func (c *serverConn) flushForwarded() {
	if c.srv.cfg.Forward.Flush == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			c.logger().Error("forward hook panicked", "error", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	c.srv.cfg.Forward.Flush(c.sess)
}

// process answers one request. It never panics and always returns a
// complete response frame. gated says the Gate has already admitted the
// request.
func (c *serverConn) process(h RequestHeader, body []byte, gated bool, tr *reqTrace) (frame []byte) {
	defer func() {
		if r := recover(); r != nil {
			frame = c.panicFrame("handler", h, r)
		}
	}()
	cfg := &c.srv.cfg
	if cfg.Gate != nil && !gated {
		if err := cfg.Gate(c.ctx, c.sess, h); err != nil {
			return c.errorFrame(h, err)
		}
	}
	api, ok := cfg.Mux.Lookup(h.APIKey)
	if !ok {
		if msg, elsewhere := cfg.Mux.Elsewhere(h.APIKey, h.APIVersion); elsewhere {
			// A client that sent it to the wrong server type: the answer
			// says where to go. Counted by the Observer and logged at
			// debug level only (see finish): one busy client would
			// otherwise fill the log.
			tr.api, tr.elsewhere = h.APIKey.Name(), true
			return c.errorFrame(h, &apierr.Error{Class: apierr.ErrServedElsewhere, Detail: msg})
		}
		if cfg.Forward.Call != nil {
			r, err := cfg.Forward.Call(c.ctx, c.sess, h, body)
			if err != nil {
				return c.errorFrame(h, err)
			}
			if r.Type != ResponseSuccess && r.Type != ResponseError {
				return c.errorFrame(h, fmt.Errorf("forwarder answered with a %v response", r.Type))
			}
			if len(r.Body) > math.MaxInt32-responseHeaderSize {
				return c.errorFrame(h, fmt.Errorf("response of %d bytes is too large for a frame", len(r.Body)))
			}
			tr.passed = true
			return appendResponse(nil, r.Type, h.RequestID, r.Body)
		}
		c.logger().Debug("unsupported api key", "api_key", h.APIKey, "request_id", h.RequestID)
		return c.errorFrame(h, &apierr.Error{Class: apierr.ErrNotServed, APIKey: int32(h.APIKey), APIVersion: h.APIVersion})
	}
	if h.APIVersion < api.MinVersion || h.APIVersion > api.MaxVersion {
		c.logger().Debug("unsupported api version", "api_key", h.APIKey, "request_id", h.RequestID, "api_version", h.APIVersion)
		return c.errorFrame(h, &apierr.Error{Class: apierr.ErrVersionUnsupported, API: api.String(),
			APIVersion: h.APIVersion, MinVersion: api.MinVersion, MaxVersion: api.MaxVersion})
	}
	hc := &handlerCtx{Context: c.ctx, arrival: tr.start}
	r := &Request{Version: h.APIVersion, RequestID: h.RequestID, Body: body}
	if !api.RawBody {
		r.Msg = api.NewRequest()
		if err := DecodeBody(api, h.APIVersion, body, r.Msg); err != nil {
			c.logger().Debug("undecodable request body", "api_key", h.APIKey, "request_id", h.RequestID, "error", err)
			return c.errorFrame(h, err)
		}
	}
	if api.Subject.Of != nil {
		tr.subject = flusserr.Echo(api.Subject.Of(r))
	}
	resp, err := api.Handle(hc, c.sess, r)
	if err != nil {
		return c.errorFrame(h, err)
	}
	if resp == nil || !resp.ProtoReflect().IsValid() {
		return c.errorFrame(h, fmt.Errorf("handler of %v returned neither a response nor an error", api))
	}
	return c.successFrame(h, api, resp)
}

// successFrame encodes resp straight into a SUCCESS frame. Encoding checks
// required fields, so a response a strict decoder would reject becomes an
// error answer instead.
func (c *serverConn) successFrame(h RequestHeader, api API, resp proto.Message) []byte {
	frame, off := beginFrame(nil)
	frame = append(frame, byte(ResponseSuccess))
	frame = binary.BigEndian.AppendUint32(frame, uint32(h.RequestID))
	frame, err := proto.MarshalOptions{}.MarshalAppend(frame, resp)
	if err != nil {
		return c.errorFrame(h, fmt.Errorf("failed to encode %s of %v: %w", resp.ProtoReflect().Descriptor().Name(), api, err))
	}
	if len(frame)-lengthFieldSize > math.MaxInt32 {
		return c.errorFrame(h, fmt.Errorf("response of %d bytes is too large for a frame", len(frame)))
	}
	return endFrame(frame, off)
}

// errorFrame maps err to an ERROR frame with the code and message apierr.Of
// gives it (a *flusserr.Error keeps its own; anything unclassified is
// UNKNOWN_SERVER_ERROR with its text, cut as every message is).
func (c *serverConn) errorFrame(h RequestHeader, err error) []byte {
	// The request's log line (see finish) carries the code and message.
	a := apierr.Of(err)
	return AppendError(nil, h.RequestID, a.Code, a.Message)
}
