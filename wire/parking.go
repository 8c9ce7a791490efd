package wire

import (
	"context"
	"sync"
)

// parkChunk is how many parked requests one goroutine answers once their
// wait is over; a larger round is split across goroutines.
const parkChunk = 64

// parked is a request whose Quick answer waits for its Waiter
// (API.QuickWait). It holds its in-flight slot and its budget charge until
// it is answered or withdrawn.
type parked struct {
	c      *serverConn
	api    *API
	h      RequestHeader
	body   []byte
	charge int64
	tr     reqTrace
	w      Waiter
	taken  bool // answered or withdrawn; guarded by parkLot.mu
}

// parkLot holds waiting requests grouped by their Waiter. Requests that
// wait for the same thing (every GET of one ZooKeeper sync round) are
// answered together by one goroutine per round, in chunks, instead of a
// goroutine each: in a GET storm a goroutine per request, its stack and
// its wake-up cost as much as the answer. A connection that closes
// withdraws its parked requests at once, freeing their slots.
type parkLot struct {
	mu     sync.Mutex
	rounds map[Waiter][]*parked
	byConn map[*serverConn][]*parked
	watch  map[*serverConn]func() bool // stops the connection's close watch
}

func newParkLot() *parkLot {
	return &parkLot{
		rounds: make(map[Waiter][]*parked),
		byConn: make(map[*serverConn][]*parked),
		watch:  make(map[*serverConn]func() bool),
	}
}

// park adds p to its Waiter's round, starting the round's goroutine if p
// is its first request, and the connection's close watch if p is the
// connection's first parked request.
func (l *parkLot) park(p *parked) {
	l.mu.Lock()
	defer l.mu.Unlock()
	round, ok := l.rounds[p.w]
	if !ok {
		go l.await(p.w)
	}
	l.rounds[p.w] = append(round, p)
	l.byConn[p.c] = append(l.byConn[p.c], p)
	if _, ok := l.watch[p.c]; !ok {
		c := p.c
		l.watch[c] = context.AfterFunc(c.ctx, func() { l.withdraw(c) })
	}
}

// await answers the requests of w's round once w has settled.
func (l *parkLot) await(w Waiter) {
	<-w.Done()
	l.mu.Lock()
	round := l.rounds[w]
	delete(l.rounds, w)
	ready := round[:0]
	for _, p := range round {
		if p.taken {
			continue
		}
		p.taken = true
		l.forget(p)
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
	mine := l.byConn[c]
	delete(l.byConn, c)
	delete(l.watch, c)
	var out []*parked
	for _, p := range mine {
		if !p.taken {
			p.taken = true
			out = append(out, p)
		}
	}
	l.mu.Unlock()
	for _, p := range out {
		p.c.abandonParked(p)
	}
}

// forget removes p from its connection's list; the caller holds l.mu.
func (l *parkLot) forget(p *parked) {
	list := l.byConn[p.c]
	for i, q := range list {
		if q == p {
			list[i] = list[len(list)-1]
			list[len(list)-1] = nil
			list = list[:len(list)-1]
			break
		}
	}
	if len(list) > 0 {
		l.byConn[p.c] = list
		return
	}
	delete(l.byConn, p.c)
	if stop, ok := l.watch[p.c]; ok {
		stop()
		delete(l.watch, p.c)
	}
}

func answerParked(ps []*parked) {
	for _, p := range ps {
		p.c.answerParked(p)
	}
}
