package wire

import (
	"bytes"
	"sync"
)

// parkChunk is how many parked requests one goroutine answers once their
// wait is over; a larger round is split across goroutines.
const parkChunk = 64

// parked is a request whose Quick answer waits for its Waiter
// (Quick.Wait). It holds its in-flight slot and its budget charge until
// it is answered or withdrawn.
type parked struct {
	c *serverConn
	// prev and next link the connection's parked requests
	// (serverConn.parked): a list through the requests themselves, so
	// that parking and answering touch no memory of the connection's
	// beyond the connection itself. Guarded by parkLot.mu.
	prev, next *parked
	taken      bool // answered or withdrawn; guarded by parkLot.mu
	api        *API
	body       []byte
	charge     int64
	tr         reqTrace // tr.h is the request's header
	w          Waiter
	// small holds the body when it fits (a GET's does): one allocation
	// for the parked request and its bytes.
	small [parkedInline]byte
}

// parkedInline is the body size kept inside a parked request.
const parkedInline = 64

// newParked returns a parked request holding body, copied when it is
// borrowed from the read buffer.
func newParked(c *serverConn, api *API, body []byte, borrowed bool, charge int64, tr reqTrace, w Waiter) *parked {
	p := &parked{c: c, api: api, body: body, charge: charge, tr: tr, w: w}
	switch {
	case len(body) <= parkedInline:
		p.body = p.small[:copy(p.small[:], body)]
	case borrowed:
		p.body = bytes.Clone(body)
	}
	return p
}

// parkLot holds waiting requests grouped by their Waiter. Requests that
// wait for the same thing (every GET of one ZooKeeper sync round) are
// answered together by one goroutine per round, in chunks, instead of a
// goroutine each: in a GET storm a goroutine per request, its stack and
// its wake-up cost as much as the answer. A connection that closes
// withdraws its parked requests at once (see serverConn.cancel), freeing
// their slots.
type parkLot struct {
	mu     sync.Mutex
	rounds map[Waiter][]*parked
}

func newParkLot() *parkLot {
	return &parkLot{rounds: make(map[Waiter][]*parked)}
}

// park adds p to its Waiter's round. For the round's first request it
// arranges the round's answering: by the Waiter's AfterDone when it has
// one, else by a goroutine that waits for Done.
func (l *parkLot) park(p *parked) {
	c := p.c
	l.mu.Lock()
	round, ok := l.rounds[p.w]
	l.rounds[p.w] = append(round, p)
	c.requests.addParked(p)
	l.mu.Unlock()
	// A connection cancelled before p was listed found nothing to
	// withdraw: withdraw now. (After, cancel finds p itself.)
	if c.ended.Load() {
		l.withdraw(c)
	}
	if ok {
		return
	}
	// Outside l.mu: AfterDone runs settled at once if w already settled.
	if ad, has := p.w.(AfterDoner); has {
		w := p.w
		ad.AfterDone(func() { l.settled(w) })
		return
	}
	go l.await(p.w)
}

// await answers the requests of w's round once w has settled.
func (l *parkLot) await(w Waiter) {
	<-w.Done()
	l.settled(w)
}

// settled answers the requests of w's round, which has settled.
func (l *parkLot) settled(w Waiter) {
	l.mu.Lock()
	round := l.rounds[w]
	delete(l.rounds, w)
	ready := round[:0]
	for _, p := range round {
		if p.taken {
			continue
		}
		p.taken = true
		p.c.requests.unpark(p)
		ready = append(ready, p)
	}
	l.mu.Unlock()
	for len(ready) > parkChunk {
		chunk := ready[:parkChunk:parkChunk]
		ready = ready[parkChunk:]
		go answerParked(chunk)
	}
	answerParked(ready)
}

// withdraw ends every parked request of c, which has closed.
func (l *parkLot) withdraw(c *serverConn) {
	l.mu.Lock()
	mine := c.requests.takeParked()
	l.mu.Unlock()
	for _, p := range mine {
		c.abandonParked(p)
	}
}

func answerParked(ps []*parked) {
	for _, p := range ps {
		p.c.answerParked(p)
	}
}

// withdrawParked ends c's parked requests once c is cancelled. It runs the
// withdrawal on its own goroutine: cancel is called from paths that hold
// the connection's locks, which answering a request takes.
func (s *Server) withdrawParked(c *serverConn) {
	if c.hasParked() {
		go s.lot.withdraw(c)
	}
}
