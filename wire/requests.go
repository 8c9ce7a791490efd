package wire

import (
	"sync"
	"sync/atomic"
)

// connRequests is what the connection's requests in flight hold. The
// reader takes their slots and starts them; the goroutines that serve and
// answer them give the slots back. So no goroutine owns these fields: each
// is atomic, a channel, a WaitGroup or guarded by a lock, as its comment
// says. chargeMu and pendingMu are the requests' own; parked is guarded by
// the server's parkLot.mu, which parks and answers them.
type connRequests struct {
	// inflight counts the requests holding an in-flight slot, bounded by
	// maxInFlight (MaxInFlightPerConn); while the reader waits for a slot
	// it counts itself in too, and slotFreed wakes it (see acquireSlot).
	inflight    atomic.Int64
	maxInFlight int64
	slotFreed   chan struct{}
	running     chan struct{} // slots of handlers running at once
	handlers    sync.WaitGroup

	chargeMu sync.Mutex
	charges  map[int32][]int64 // budget charges of forwarded requests

	// pending traces the requests Forward.Try took, by request id,
	// while tracking() holds.
	pendingMu sync.Mutex
	pending   map[int32]reqTrace

	// parked is the first of the connection's requests waiting for their
	// Quick.Wait condition (a list through parked.next); guarded by the
	// server's parkLot.mu.
	parked *parked
}

// acquireSlot takes an in-flight slot for a request that is not answered at
// once, waiting while MaxInFlightPerConn are taken; it reports false if the
// connection died meanwhile. Only the reader calls it, so the count can be
// taken first and checked after: one atomic add when a slot is free, the
// usual case, instead of a channel's lock.
func (c *serverConn) acquireSlot() bool {
	q := &c.requests
	if q.inflight.Add(1) > q.maxInFlight {
		// Requests Forward.Try holds back must go out before waiting
		// for a slot, or their answers could never free one.
		c.flushForwarded()
		c.reader.deadlineStale = true // the wait may outlast the idle deadline
		for q.inflight.Load() > q.maxInFlight {
			select {
			case <-q.slotFreed:
			case <-c.ctx.Done():
				q.inflight.Add(-1)
				return false
			}
		}
	}
	q.handlers.Add(1)
	return true
}

// done releases the in-flight slot of one answered request, waking the
// reader if it waits for one (it counted itself in before waiting, so the
// count it waits on is one above the bound).
func (q *connRequests) done() {
	if q.inflight.Add(-1) >= q.maxInFlight {
		select {
		case q.slotFreed <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
	q.handlers.Done()
}

// answer sends a ready answer on its own goroutine, since sending may wait
// for the client.
func (c *serverConn) answer(tr reqTrace, frame []byte) {
	defer c.requests.done()
	c.finishFrame(tr, frame)
	c.writer.send(frame)
}

// serve answers one request on its own goroutine. A method rather than a
// closure, so that the request's bytes are garbage once the handler has
// decoded them instead of living as long as the goroutine.
func (c *serverConn) serve(h RequestHeader, body []byte, gated bool, charge int64, tr reqTrace) {
	q := &c.requests
	defer q.done()
	var frame []byte
	select {
	case q.running <- struct{}{}:
		frame = c.process(h, body, gated, &tr)
		<-q.running
	case <-c.ctx.Done():
		frame = c.errorFrame(h, c.ctx.Err()) // nobody reads it
	}
	c.srv.cfg.Budget.NoteLarge(int64(len(frame)))
	c.srv.cfg.Budget.Release(charge)
	// Counted and logged before the client can see the answer.
	c.finishFrame(tr, frame)
	c.writer.send(frame)
}

// holdCharge records the budget charge of a request offered to the Forward
// hook, to be released when it is answered.
func (q *connRequests) holdCharge(id int32, charge int64) {
	q.chargeMu.Lock()
	if q.charges == nil {
		q.charges = map[int32][]int64{}
	}
	q.charges[id] = append(q.charges[id], charge)
	q.chargeMu.Unlock()
}

// releaseCharge releases the oldest charge recorded for request id. A
// client may reuse an id while it is in flight; the totals still match.
func (c *serverConn) releaseCharge(id int32) {
	c.srv.cfg.Budget.Release(c.requests.takeCharge(id))
}

// takeCharge removes and returns the oldest charge recorded for id.
func (q *connRequests) takeCharge(id int32) int64 {
	q.chargeMu.Lock()
	queued := q.charges[id]
	var n int64
	if len(queued) > 0 {
		n = queued[0]
		if len(queued) == 1 {
			delete(q.charges, id)
		} else {
			q.charges[id] = queued[1:]
		}
	}
	q.chargeMu.Unlock()
	return n
}

// tracking says whether requests Forward.Try takes are traced: only
// when someone reads the trace, so that the proxy's fast path pays nothing
// otherwise.
func (c *serverConn) tracking() bool {
	return c.srv.cfg.Observer != nil || c.logger().IsDebug()
}

// track records a request Forward.Try may take, until its answer. A
// request id already in flight on the connection is not tracked (a client
// bug): it is answered, but not traced.
func (q *connRequests) track(tr reqTrace) bool {
	q.pendingMu.Lock()
	defer q.pendingMu.Unlock()
	if q.pending == nil {
		q.pending = make(map[int32]reqTrace)
	}
	if _, dup := q.pending[tr.h.RequestID]; dup {
		return false
	}
	q.pending[tr.h.RequestID] = tr
	return true
}

// untrack removes and returns the trace of a request id.
func (q *connRequests) untrack(id int32) (reqTrace, bool) {
	q.pendingMu.Lock()
	defer q.pendingMu.Unlock()
	tr, ok := q.pending[id]
	if ok {
		delete(q.pending, id)
	}
	return tr, ok
}

// addParked adds p to c's parked requests; the caller holds parkLot.mu.
func (q *connRequests) addParked(p *parked) {
	p.next = q.parked
	if p.next != nil {
		p.next.prev = p
	}
	q.parked = p
}

// takeParked marks all of c's parked requests taken and returns them,
// leaving none; the caller holds parkLot.mu.
func (q *connRequests) takeParked() []*parked {
	var mine []*parked
	for p := q.parked; p != nil; {
		next := p.next
		p.taken = true
		p.prev, p.next = nil, nil
		mine = append(mine, p)
		p = next
	}
	q.parked = nil
	return mine
}

// unpark removes p from c's parked requests; the caller holds parkLot.mu.
func (q *connRequests) unpark(p *parked) {
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		q.parked = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	}
	p.prev, p.next = nil, nil
}

// hasParked reports whether c has parked requests.
func (c *serverConn) hasParked() bool {
	c.srv.lot.mu.Lock()
	defer c.srv.lot.mu.Unlock()
	return c.requests.parked != nil
}
