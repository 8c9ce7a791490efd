package proxy

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Fail-over. A coordinator that is not the leader answers every request but
// API_VERSIONS and AUTHENTICATE with NOT_COORDINATOR_LEADER (65), before
// the request's handler runs: a request answered 65 was not executed, so it
// can be sent again. When a forwarded request is answered 65, its link
// moves: it reads the active coordinator anew (activeReader: after a
// ZooKeeper sync), opens a connection there (logged in as the client's
// user on a SASL listener), makes it the link's upstream and sends the
// request there; the client gets that coordinator's answer. Only one move
// runs per link at a time; requests answered 65 meanwhile, and requests
// the client sends meanwhile, wait for it in arrival order and go out, in
// that order, on the new connection. The old connection stays open until
// the requests still in flight on it are answered (a request it answers 65
// goes after the others), then closes.
//
// Bounds: a request is sent again at most Config.MaxResends times and not
// after Config.ResendTimeout from its first answer 65; a move gives up
// after ResendTimeout. Then the client gets the last 65 as it came. A
// request is kept (its body, which its budget reservation already counts)
// only while it is in flight and may be sent again.

// maxResendBackoff caps the wait between two reads of the active
// coordinator during a move.
const maxResendBackoff = 2 * time.Second

// activeReader is an UpstreamSource that can read the active coordinator
// from authoritative state, not from a cache: ZKDiscovery. reg tells two
// registrations of the same address apart (the znode's creation zxid).
type activeReader interface {
	Active(ctx context.Context) (addr string, reg int64, err error)
}

// registered is an UpstreamSource that knows the registration of the
// address Current returns.
type registered interface {
	currentReg(ctx context.Context) (addr string, reg int64, err error)
}

// FailoverStats counts what the proxy's fail-over did since it started.
type FailoverStats struct {
	// UpstreamAnswers is every SUCCESS or ERROR answer of a coordinator
	// to a forwarded request, resends included.
	UpstreamAnswers uint64
	// NotLeaderAnswers is the answers with error 65 among them.
	NotLeaderAnswers uint64
	// Resends is the forwarded requests sent again after an answer 65.
	Resends uint64
	// Moves is the links that moved to another coordinator connection.
	Moves uint64
	// NotLeaderPassed is the answers 65 passed to clients: resending off,
	// or its bounds reached.
	NotLeaderPassed uint64
}

type failoverCounters struct {
	answers, notLeader, resends, moves, passed atomic.Uint64
	// lastNotLeader: the last upstream answer was 65.
	lastNotLeader atomic.Bool
}

// LastAnswerNotLeader reports whether the last answer a coordinator gave
// to a request this proxy forwarded was 65 (false before any answer).
func (p *Proxy) LastAnswerNotLeader() bool { return p.stats.lastNotLeader.Load() }

// FailoverStats returns the fail-over counters.
func (p *Proxy) FailoverStats() FailoverStats {
	s := &p.stats
	return FailoverStats{
		UpstreamAnswers: s.answers.Load(), NotLeaderAnswers: s.notLeader.Load(),
		Resends: s.resends.Load(), Moves: s.moves.Load(), NotLeaderPassed: s.passed.Load(),
	}
}

func (p *Proxy) resending() bool { return p.maxResends > 0 }

// notLeader counts an upstream answer and reports whether it is error 65.
func (p *Proxy) notLeader(r wire.Response) bool {
	p.stats.answers.Add(1)
	is := false
	if r.Type == wire.ResponseError {
		fe, ok := flusserr.From(wire.DecodeError(r.Body))
		is = ok && apierr.IsNotLeader(fe)
	}
	if p.stats.lastNotLeader.Load() != is {
		p.stats.lastNotLeader.Store(is)
	}
	if is {
		p.stats.notLeader.Add(1)
	}
	return is
}

// fwd is one request of the fast path in flight while resending is on:
// what it takes to send it again.
type fwd struct {
	id   int32 // the client's request id
	key  messages.Key
	ver  int16
	body []byte
	up   *upstreamConn // where it was sent last; nil while it waits for a move unsent

	resends int
	first   time.Time     // its first answer 65, or when it started waiting for a move
	last    wire.Response // its last answer 65
}

// move is one move of a link's upstream connection, run by runMove.
type move struct {
	from    *upstreamConn
	attempt int // resends of the request that started it
	queue   []*fwd
	done    chan struct{}
	// next is the connection moved to (from itself when ZooKeeper names it
	// again under a new registration), nil if the move gave up; set
	// before done is closed.
	next *upstreamConn
}

// track remembers f until its answer comes and returns its tag.
func (l *link) track(f *fwd) int64 {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	if l.inflight == nil {
		l.inflight = map[int64]*fwd{}
	}
	l.seq++
	l.inflight[l.seq] = f
	return l.seq
}

func (l *link) untrack(tag int64) *fwd {
	l.fmu.Lock()
	defer l.fmu.Unlock()
	f := l.inflight[tag]
	delete(l.inflight, tag)
	return f
}

// send writes f on up through the fast path's callback; with flush it
// starts writing at once. It reports false if f was not sent.
func (l *link) send(up *upstreamConn, f *fwd, flush bool) bool {
	f.up = up
	tag := l.track(f)
	up.pending.Add(1)
	var err error
	if flush {
		err = up.client.Send(f.key, f.ver, f.body, tag, l.answerFn)
	} else {
		err = up.client.Queue(f.key, f.ver, f.body, tag, l.answerFn)
	}
	if err != nil {
		if l.untrack(tag) != nil {
			up.done()
		}
		return false
	}
	return true
}

// sendOrFail sends f on up, or answers it with why it could not be sent.
func (l *link) sendOrFail(up *upstreamConn, f *fwd, flush bool) {
	if l.send(up, f, flush) {
		return
	}
	cause := up.client.Err()
	if cause == nil {
		cause = errors.New("the request could not be written")
	}
	l.reply.Load().ReplyError(f.id, l.upstreamError(up, cause))
}

// answerTracked is answer while resending is on.
func (l *link) answerTracked(tag int64, r wire.Response, err error) {
	f := l.untrack(tag)
	if f == nil {
		return
	}
	f.up.done()
	reply := l.reply.Load()
	if err != nil {
		e := l.upstreamError(f.up, err)
		if l.isCurrent(f.up) {
			// The goroutine watching up.client.Done() shuts the link
			// down; closing the client here could run on its own reader.
			reply.ReplyError(f.id, l.record(e))
		} else {
			reply.ReplyError(f.id, e)
		}
		return
	}
	if l.p.notLeader(r) && l.resend(f, r) {
		return
	}
	reply.Queue(f.id, r.Type, r.Body)
}

// resend is called with f's answer 65 (r) on an upstream reader goroutine,
// so it never waits: it sends f again, or hands it to a move, and reports
// true; false means the 65 goes to the client.
func (l *link) resend(f *fwd, r wire.Response) bool {
	now := time.Now()
	if f.first.IsZero() {
		f.first = now
	}
	f.last = r
	if f.resends >= l.p.maxResends || now.Sub(f.first) >= l.p.cfg.ResendTimeout {
		l.p.stats.passed.Add(1)
		return false
	}
	l.mu.Lock()
	switch {
	case l.err != nil:
		l.mu.Unlock()
		l.p.stats.passed.Add(1)
		return false
	case l.mv != nil:
		l.mv.queue = append(l.mv.queue, f)
		l.mu.Unlock()
	case l.up != f.up:
		// The link has moved since f was sent: send it where it is now.
		up := l.up
		l.mu.Unlock()
		l.countResend(f)
		l.sendOrFail(up, f, true)
	default:
		mv := l.startMoveLocked(f.up, f.resends)
		mv.queue = append(mv.queue, f)
		l.mu.Unlock()
	}
	return true
}

func (l *link) countResend(f *fwd) {
	f.resends++
	l.p.stats.resends.Add(1)
}

// queueBehindMove takes a request of the fast path while a move runs, so
// that it goes out after the requests the move carries. It reports false
// when no move runs.
func (l *link) queueBehindMove(h wire.RequestHeader, body []byte) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mv == nil || l.err != nil {
		return false
	}
	l.mv.queue = append(l.mv.queue, &fwd{id: h.RequestID, key: h.APIKey, ver: h.APIVersion, body: body, first: time.Now()})
	return true
}

// startMoveLocked starts moving the link away from from; l.mu is held.
func (l *link) startMoveLocked(from *upstreamConn, attempt int) *move {
	mv := &move{from: from, attempt: attempt, done: make(chan struct{})}
	l.mv = mv
	l.fast.Store(nil)
	go l.runMove(mv)
	return mv
}

// awaitMove is the ordinary path's resend: it starts a move away from
// from (or joins the one running) and returns the connection to send the
// request to, or nil when the move gave up, the link failed, or deadline
// or ctx ended first.
func (l *link) awaitMove(ctx context.Context, from *upstreamConn, attempt int, deadline time.Time) *upstreamConn {
	l.mu.Lock()
	var mv *move
	switch {
	case l.err != nil:
	case l.mv != nil:
		mv = l.mv
	case l.up != from && l.up != nil:
		up := l.up
		l.mu.Unlock()
		return up
	default:
		mv = l.startMoveLocked(from, attempt)
	}
	l.mu.Unlock()
	if mv == nil {
		return nil
	}
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-mv.done:
		return mv.next
	case <-ctx.Done():
	case <-t.C:
	}
	return nil
}

// call is the ordinary path's round trip: it sends the request on up and,
// while the answer is 65 and the bounds allow, sends it again where a move
// leads. It returns the connection that gave the answer.
func (l *link) call(ctx context.Context, up *upstreamConn, h wire.RequestHeader, body []byte) (*upstreamConn, wire.Response, error) {
	var first time.Time
	for resends := 0; ; resends++ {
		up.pending.Add(1)
		r, err := up.client.CallRaw(ctx, h.APIKey, h.APIVersion, body)
		up.done()
		if err != nil {
			if ctx.Err() != nil {
				// The client is gone; nobody reads this answer.
				return up, wire.Response{}, networkError("%v", errClientGone)
			}
			return up, wire.Response{}, l.fail(up, err)
		}
		if !l.p.notLeader(r) {
			return up, r, nil
		}
		if first.IsZero() {
			first = time.Now()
		}
		deadline := first.Add(l.p.cfg.ResendTimeout)
		var next *upstreamConn
		if resends < l.p.maxResends && time.Now().Before(deadline) {
			next = l.awaitMove(ctx, up, resends, deadline)
		}
		if next == nil {
			l.p.stats.passed.Add(1)
			return up, r, nil
		}
		l.p.stats.resends.Add(1)
		up = next
	}
}

// runMove finds the active coordinator, makes its connection the link's
// upstream, and sends what waited for the move, in order.
func (l *link) runMove(mv *move) {
	ctx, cancel := context.WithTimeout(l.connCtx, l.p.cfg.ResendTimeout)
	defer cancel()
	start := time.Now()
	next, err := l.findActive(ctx, mv)
	l.mu.Lock()
	if err == nil && l.err != nil {
		err = l.err
		if next != mv.from {
			go next.client.Close()
		}
	}
	var old *upstreamConn
	if err == nil {
		old = l.up
		l.up = next
		mv.next = next
	}
	waiting := len(mv.queue)
	l.mu.Unlock()

	if err != nil {
		if l.connCtx.Err() == nil {
			l.p.log.Warn("the upstream coordinator answered NOT_COORDINATOR_LEADER and no active coordinator was found in time; passing its answers on",
				"conn", l.sess.ConnID, "upstream", mv.from.addr, "waiting", waiting, "waited", time.Since(start).Round(time.Millisecond), "error", err)
		}
	} else {
		l.p.stats.moves.Add(1)
		if next != old {
			l.watch(next)
			old.retire()
		}
		l.p.log.Info("moved the upstream connection to the active coordinator after NOT_COORDINATOR_LEADER",
			"conn", l.sess.ConnID, "from", mv.from.addr, "to", next.addr, "waiting", waiting, "waited", time.Since(start).Round(time.Millisecond))
	}
	// Send what waited, in order; what arrives meanwhile joins the queue.
	for {
		l.mu.Lock()
		q := mv.queue
		mv.queue = nil
		if len(q) == 0 {
			l.mv = nil
			up := l.up
			l.mu.Unlock()
			if up != nil {
				l.enableFast(up)
			}
			break
		}
		up := l.up
		l.mu.Unlock()
		for _, f := range q {
			l.sendWaiting(up, f, err == nil)
		}
		up.client.Flush()
	}
	close(mv.done)
}

// sendWaiting sends f, which waited for a move, on up (moved: the move
// succeeded), or passes its last answer 65 on.
func (l *link) sendWaiting(up *upstreamConn, f *fwd, moved bool) {
	if f.up == nil {
		// Never sent: it goes out now, not as a resend.
		l.sendOrFail(up, f, false)
		return
	}
	if !moved || time.Since(f.first) >= l.p.cfg.ResendTimeout {
		l.p.stats.passed.Add(1)
		l.reply.Load().Reply(f.id, f.last.Type, f.last.Body)
		return
	}
	l.countResend(f)
	l.sendOrFail(up, f, false)
}

// findActive reads the active coordinator until it names one to send to,
// and returns its connection: a new one, logged in as the client's user,
// or mv.from itself when the fresh read names it. mv.from is the
// coordinator that has just answered 65, so it is asked again only after
// a pause that grows with the resends of the request that started the
// move, unless ZooKeeper names it under a new registration (it was
// elected again). A source that cannot be read anew (a StaticUpstream) is
// the only coordinator there is, and is treated as a read that names it.
func (l *link) findActive(ctx context.Context, mv *move) (*upstreamConn, error) {
	from := mv.from
	wait := l.p.cfg.ResendBackoff
	src, fresh := l.p.cfg.Upstream.(activeReader)
	for {
		addr, reg, err := from.addr, from.reg.Load(), error(nil)
		if fresh {
			addr, reg, err = src.Active(ctx)
		}
		switch {
		case err != nil:
			l.p.log.Debug("no active coordinator to move to yet", "conn", l.sess.ConnID, "error", err)
		case addr == from.addr && reg != from.reg.Load():
			from.reg.Store(reg)
			return from, nil
		case addr == from.addr:
			if !sleepCtx(ctx, min(l.p.cfg.ResendBackoff<<min(mv.attempt, 8), maxResendBackoff)) {
				return nil, ctx.Err()
			}
			return from, nil
		default:
			up, err := l.connectTo(ctx, addr, reg)
			if err == nil {
				return up, nil
			}
			l.p.log.Debug("cannot open a connection to the active coordinator yet", "conn", l.sess.ConnID, "upstream", addr, "error", err)
		}
		if !sleepCtx(ctx, wait) {
			return nil, ctx.Err()
		}
		wait = min(2*wait, maxResendBackoff)
	}
}

// connectTo opens a connection to addr for this link and logs it in as the
// client's user when the listener is SASL.
func (l *link) connectTo(ctx context.Context, addr string, reg int64) (*upstreamConn, error) {
	cctx, cancel := context.WithTimeout(ctx, l.p.cfg.ConnectTimeout)
	defer cancel()
	up, err := l.p.connectAddr(cctx, l.sess.ConnID, l.flushAnswers, addr)
	if err != nil {
		return nil, err
	}
	up.reg.Store(reg)
	if creds := l.p.cfg.UpstreamCredentials; creds != nil {
		user, password, ok := creds(l.sess)
		if !ok {
			up.client.Close()
			return nil, refused("The connection has not completed authentication yet, so the proxy cannot authenticate to the coordinator on its behalf.")
		}
		if err := l.p.login(cctx, up, user, password); err != nil {
			up.client.Close()
			return nil, err
		}
	}
	return up, nil
}

// done ends one forwarded request on up; a retired connection closes
// after its last one.
func (up *upstreamConn) done() {
	if up.pending.Add(-1) == 0 && up.retired.Load() {
		go up.client.Close()
	}
}

// retire marks up as no longer the link's upstream: it closes once the
// requests in flight on it are answered.
func (up *upstreamConn) retire() {
	up.retired.Store(true)
	if up.pending.Load() == 0 {
		go up.client.Close()
	}
}

// isCurrent reports whether up is the link's upstream connection.
func (l *link) isCurrent(up *upstreamConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.up == up
}

// sleepCtx waits d or until ctx ends; false if ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
