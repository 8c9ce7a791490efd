package wire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// maxQueuedOut bounds the response bytes queued on one connection beyond
// which a goroutine answering a request waits for the socket, so a client
// that does not read its answers stops the server from reading requests.
const maxQueuedOut = 1 << 20

// serverConn is one client connection: a reader (run), one goroutine per
// request (or Forward.Try answering through a Replier), and the single
// writer that owns the socket's write side.
type serverConn struct {
	srv *Server
	nc  net.Conn
	// br is the read buffer, taken from readerPool when bytes arrive and
	// given back when it is empty again, so that an idle connection holds
	// none; without a readWaiter (rw nil) the connection keeps it. Only the
	// reader goroutine (then watchPeer) touches it.
	br   *bufio.Reader
	rw   *readWaiter
	sess *Session
	lg   atomic.Pointer[hclog.Logger] // see logger

	ctx    context.Context // cancelled when the connection closes
	cancel context.CancelFunc
	// readCtx is cancelled when the connection drains or closes; the
	// reader waits for room in the budget under it.
	readCtx    context.Context
	readCancel context.CancelFunc

	chargeMu sync.Mutex
	charges  map[int32][]int64 // budget charges of forwarded requests

	w   *sockWriter
	rep *Replier
	// inflight counts the requests holding an in-flight slot, bounded by
	// maxInFlight (MaxInFlightPerConn); while the reader waits for a slot
	// it counts itself in too, and slotFreed wakes it (see acquireSlot).
	inflight    atomic.Int64
	maxInFlight int64
	slotFreed   chan struct{}
	running     chan struct{} // slots of handlers running at once
	handlers    sync.WaitGroup
	draining    atomic.Bool
	// answerHeld: the server is shutting down, so the requests the socket
	// already holds are read and answered before the connection closes
	// (drainHeld). A connection drained on its own (Session.CloseWhenIdle)
	// reads nothing more.
	answerHeld atomic.Bool
	// cut: the drain timeout closed the connection; gone: the client
	// closed or reset it, or a write to it failed. Requests ending
	// afterwards are counted as such (outcome), not as answered.
	cut  atomic.Bool
	gone atomic.Bool
	// ended: cancel ran (ctx is cancelled or about to be). Beside cut and
	// gone, which answering a request reads too, it spares that path a
	// look at the context's own memory.
	ended atomic.Bool
	// holding: the reader runs drainHeld; lostPlace: a read failed in the
	// middle of a frame, so no later byte can be taken for a frame's start
	// (only the reader touches either).
	holding   bool
	lostPlace bool
	// readDeadline is the idle deadline last set by the reader;
	// deadlineStale: the reader waited since, so the deadline must be set
	// again before it waits for a request (see readLoop). Only the reader
	// goroutine touches either; drain sets its own deadline.
	readDeadline  time.Time
	deadlineStale bool
	closeOnce     sync.Once

	// pending traces the requests Forward.Try took, by request id,
	// while tracking() holds.
	pendingMu sync.Mutex
	pending   map[int32]reqTrace

	// parked is the first of the connection's requests waiting for their
	// Quick.Wait condition (a list through parked.next); guarded by the
	// server's parkLot.mu.
	parked *parked
}

func newServerConn(s *Server, nc net.Conn) *serverConn {
	id := s.nextConnID.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	// Not a child of ctx: a child context costs its parent a map of
	// children for the connection's life. cancel cancels both.
	readCtx, readCancel := context.WithCancel(context.Background())
	c := &serverConn{
		readCtx:    readCtx,
		readCancel: readCancel,
		srv:        s,
		nc:         nc,
		rw:         newReadWaiter(nc),
		sess: &Session{
			ConnID:       id,
			RemoteAddr:   nc.RemoteAddr(),
			LocalAddr:    nc.LocalAddr(),
			ListenerName: s.cfg.ListenerName,
		},
		ctx:         ctx,
		maxInFlight: int64(s.cfg.MaxInFlightPerConn),
		slotFreed:   make(chan struct{}, 1),
		running:     make(chan struct{}, s.cfg.MaxRunningPerConn),
	}
	// Cancelling also withdraws the requests parked for a Quick.Wait.
	c.cancel = func() { c.ended.Store(true); cancel(); readCancel(); s.withdrawParked(c) }
	if c.rw == nil {
		c.br = bufio.NewReaderSize(nc, readBufferSize)
	}
	c.w = newSockWriter(nc, s.cfg.IdleTimeout, c.writeFailed)
	c.w.maxQueued = maxQueuedOut
	c.rep = &Replier{c: c}
	c.sess.closeWhenIdle = c.drain
	c.sess.closeNow = c.abort
	return c
}

func (c *serverConn) run() {
	defer c.srv.removeConn(c)
	if c.srv.log.IsDebug() {
		c.logger().Debug("connection opened", "remote", c.sess.RemoteAddr.String())
	}
	if c.srv.cfg.OnConnect != nil {
		c.srv.cfg.OnConnect(c.ctx, c.sess)
	}
	if c.readLoop() {
		if c.answerHeld.Load() {
			c.drainHeld()
		} else {
			go c.watchPeer()
		}
	} else {
		// The peer is gone or out of sync: nobody will read the answers.
		c.cancel()
		c.releaseReader()
	}
	c.handlers.Wait()
	c.w.flush()
	c.w.wait()
	c.closeConn()
	c.cancel()
	if c.srv.log.IsDebug() {
		c.logger().Debug("connection closed")
	}
}

// logger returns the connection's logger (the server's, with the
// connection's id), made on first use: most connections never log, and a
// sub-logger costs a few hundred bytes for as long as the connection lives.
func (c *serverConn) logger() hclog.Logger {
	if l := c.lg.Load(); l != nil {
		return *l
	}
	l := c.srv.log.With("conn", c.sess.ConnID)
	c.lg.CompareAndSwap(nil, &l)
	return *c.lg.Load()
}

func (c *serverConn) closeConn() {
	c.closeOnce.Do(func() { c.nc.Close() })
}

// outcome is how a request ending now ends (see RequestDone.Outcome).
func (c *serverConn) outcome() Outcome {
	switch {
	case c.cut.Load():
		return OutcomeCut
	case c.gone.Load():
		return OutcomeClientGone
	}
	return OutcomeAnswered
}

// shutDown drains the connection for a server that is shutting down: the
// requests the socket already holds are answered too (drainHeld).
func (c *serverConn) shutDown() {
	c.answerHeld.Store(true)
	c.drain()
}

// cutAtDrainTimeout ends a connection whose drain ran out of time: its
// requests in flight are cut, not answered.
func (c *serverConn) cutAtDrainTimeout() {
	c.cut.Store(true)
	// Closed before the handlers are cancelled: the error a cancelled
	// handler returns must not reach the client as an answer.
	c.closeConn()
	c.cancel()
}

// drain stops reading new requests; in-flight ones still get answered.
func (c *serverConn) drain() {
	c.draining.Store(true)
	c.readCancel()
	c.nc.SetReadDeadline(time.Now())
}

// watchPeer runs while a draining connection finishes its requests. The
// reader stopped on the drain deadline, which can also hide a peer that has
// just gone away; watchPeer cancels the requests in flight as soon as the
// peer is seen gone. Requests that arrive during the drain are not served:
// the connection closes once the drain ends.
func (c *serverConn) watchPeer() {
	c.nc.SetReadDeadline(time.Time{})
	if c.br != nil {
		io.Copy(io.Discard, c.br)
	} else {
		io.Copy(io.Discard, c.rw)
	}
	c.cancel()
	c.releaseReader()
}

// readBufferSize is the size of a connection's read buffer while it reads.
const readBufferSize = 64 << 10

// readerPool holds the read buffers (*bufio.Reader) of connections that
// are waiting for a request.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// takeReader gives the connection a read buffer if it has none.
func (c *serverConn) takeReader() {
	if c.br == nil {
		c.br = readerPool.Get().(*bufio.Reader)
		c.br.Reset(c.rw) // what the wait read, then the socket
	}
}

// releaseReader gives an empty read buffer back to the pool; a buffer that
// still holds bytes (a request, or what a peer sent during the drain) is
// kept.
func (c *serverConn) releaseReader() {
	if c.rw == nil || c.br == nil || c.br.Buffered() > 0 || c.rw.pending() {
		return
	}
	c.br.Reset(nil)
	readerPool.Put(c.br)
	c.br = nil
}

// waitRequest waits for the first byte of a request, so that an idle
// timeout never strikes in the middle of one, and makes sure the
// connection has a read buffer holding it. While it waits with nothing
// buffered, the buffer goes back to the pool (see readWaiter).
func (c *serverConn) waitRequest() error {
	if c.rw != nil && (c.br == nil || c.br.Buffered() == 0) {
		c.releaseReader()
		if err := c.rw.wait(); err != nil {
			return err
		}
		if c.br == nil && c.rw.frameHeld() {
			return nil // readRequest takes it from the wait's chunk
		}
	}
	c.takeReader()
	_, err := c.br.Peek(1)
	return err
}

// abort cancels in-flight requests and closes the socket.
func (c *serverConn) abort() {
	c.cancel()
	c.closeConn()
}

// setReadDeadline sets the idle deadline, counted from now, unless the
// connection is draining; it reports false when draining. Checking after
// setting closes the race with drain, which sets the flag before its own
// (past) deadline.
//
// Moving a socket's deadline costs a timer update, so the deadline is
// moved only when it is nearer than IdleTimeout, and then to IdleTimeout
// plus a sixteenth: a connection is closed after between IdleTimeout and
// 17/16 of it without a request.
func (c *serverConn) setReadDeadline(now time.Time) bool {
	if c.draining.Load() {
		return false
	}
	idle := c.srv.cfg.IdleTimeout
	if want := now.Add(idle); c.readDeadline.Before(want) {
		c.readDeadline = want.Add(idle / 16)
		c.nc.SetReadDeadline(c.readDeadline)
	}
	c.deadlineStale = false
	return !c.draining.Load()
}

// readLoop reads requests until the connection ends or drains. It reports
// whether requests in flight should still be answered: true only when it
// stopped because the server is draining and the peer is still there. On an
// unreadable frame it queues the SERVER_FAILURE first.
//
// The idle deadline is set once per request, from the clock reading taken
// when its first byte is there (which also starts its trace): starting a
// request takes the reader microseconds, unless it waited for a slot or
// for the budget, and then deadlineStale has it set again before the
// reader waits for the next one.
func (c *serverConn) readLoop() (answerInFlight bool) {
	defer c.flushForwarded()
	c.deadlineStale = true
	for {
		if !c.frameHeld() {
			c.flushForwarded()
		}
		if c.draining.Load() || c.deadlineStale && !c.setReadDeadline(time.Now()) {
			return true
		}
		if err := c.waitRequest(); err != nil {
			if isTimeout(err) && !c.draining.Load() && c.inflight.Load() > 0 {
				c.deadlineStale = true
				continue
			}
			c.logReadEnd(err)
			return c.draining.Load() && isTimeout(err)
		}
		now := time.Now()
		if !c.setReadDeadline(now) {
			return true
		}
		ok, err := c.serveFrame(now)
		if ok {
			continue
		}
		if err == nil {
			return false // the connection died while start waited
		}
		if errors.Is(err, errStopReading) {
			return c.draining.Load()
		}
		var fe *FrameError
		if errors.As(err, &fe) {
			return false
		}
		c.logReadEnd(err)
		return c.draining.Load() && isTimeout(err)
	}
}

// serveFrame reads one request, whose first byte was there at arrived, and
// starts it; it reports false when the
// connection cannot go on, with the read's error (nil when the connection
// died while start waited). On an unreadable frame it sends the
// SERVER_FAILURE and closes the connection.
func (c *serverConn) serveFrame(arrived time.Time) (bool, error) {
	payload, charge, borrowed, err := c.readRequest()
	if err == nil {
		var h RequestHeader
		var body []byte
		h, body, err = ParseRequest(payload)
		started := err == nil && c.start(h, body, borrowed, charge, arrived)
		if borrowed {
			c.discardBorrowed(len(payload))
		}
		if started {
			return true, nil
		}
		c.srv.cfg.Budget.Release(charge)
		if err == nil {
			return false, nil
		}
	}
	var fe *FrameError
	if errors.As(err, &fe) {
		a := fe.Answer()
		c.logger().Warn("unreadable frame; closing connection", "code", a.Code.Name(), "error_code", int32(a.Code), "error", fe)
		c.send(AppendServerFailure(nil, a.Code, a.Message))
		c.w.flush()
		c.closeConn()
	}
	return false, err
}

// errStopReading reports that the reader gave up waiting for room in the
// budget because the connection is draining or closing.
var errStopReading = errors.New("wire: stopped reading")

// readRequest reads one frame's payload, reserving its length in the
// server's budget before reading the body; the caller releases charge once
// the request is answered. While the reservation does not fit, the
// connection reads nothing more (backpressure), after handing the Forward
// hook's held-back requests on so that their answers can free room.
//
// A payload already whole in the read buffer is borrowed rather than
// copied: it is valid until the caller discards it from c.br, which the
// caller must do before reading on.
func (c *serverConn) readRequest() (payload []byte, charge int64, borrowed bool, err error) {
	if c.br == nil {
		// waitRequest saw a whole frame in the wait's chunk.
		if payload, charge, ok := c.chunkRequest(); ok {
			return payload, charge, true, nil
		}
		c.takeReader()
	}
	lb, err := c.br.Peek(lengthFieldSize)
	if err != nil {
		return nil, 0, false, unexpected(err)
	}
	n, err := checkLength([lengthFieldSize]byte(lb), c.srv.cfg.MaxFrameSize)
	if err != nil {
		return nil, 0, false, err
	}
	b := c.srv.cfg.Budget
	charge = int64(n)
	if !b.TryAcquire(charge) {
		c.flushForwarded()
		c.logger().Debug("request budget spent; waiting before reading more", "frame_bytes", n, "budget", b.Size())
		// At drain a held request waits for room until the connection
		// closes: the requests in flight free it as they are answered.
		ctx := c.readCtx
		if c.holding {
			ctx = c.ctx
		}
		if err := b.Acquire(ctx, charge); err != nil {
			return nil, 0, false, errStopReading
		}
		if !c.holding && !c.setReadDeadline(time.Now()) {
			b.Release(charge)
			return nil, 0, false, errStopReading
		}
		if c.holding {
			c.readHeldOnly() // the wait may have outlived a timed deadline
		}
	}
	c.br.Discard(lengthFieldSize)
	if c.br.Buffered() >= int(n) {
		if payload, err = c.br.Peek(int(n)); err == nil {
			return payload, charge, true, nil
		}
	}
	payload, err = readPayload(c.br, n)
	if err != nil {
		// The frame's length is read and part of its payload may be: the
		// stream has lost its place between frames.
		c.lostPlace = true
		b.Release(charge)
		return nil, 0, false, err
	}
	return payload, charge, false, nil
}

// chunkRequest borrows a request straight from the bytes the last wait
// read (readWaiter), without a read buffer: a small request's whole frame
// usually arrives in one piece. ok is false, and nothing is taken, when the
// frame is not whole there, its length is not valid (readRequest's usual
// path then answers it) or its charge must wait for room in the budget.
// The payload is valid until discardBorrowed.
func (c *serverConn) chunkRequest() (payload []byte, charge int64, ok bool) {
	b := c.rw.unread()
	if len(b) < lengthFieldSize {
		return nil, 0, false
	}
	n, err := checkLength([lengthFieldSize]byte(b), c.srv.cfg.MaxFrameSize)
	if err != nil || len(b)-lengthFieldSize < int(n) || !c.srv.cfg.Budget.TryAcquire(int64(n)) {
		return nil, 0, false
	}
	return b[lengthFieldSize : lengthFieldSize+int(n)], int64(n), true
}

// discardBorrowed drops a borrowed payload of n bytes, and the length
// field before it when it came from the wait's chunk, so that reading goes
// on after it.
func (c *serverConn) discardBorrowed(n int) {
	if c.br == nil {
		c.rw.consume(lengthFieldSize + n)
		return
	}
	c.br.Discard(n)
}

// frameHeld reports whether a whole frame is read and waiting: in the read
// buffer, or in the wait's chunk when the connection has no buffer.
func (c *serverConn) frameHeld() bool {
	if c.br == nil {
		return c.rw != nil && c.rw.frameHeld()
	}
	return frameBuffered(c.br)
}

// holdCharge records the budget charge of a request offered to the Forward
// hook, to be released when it is answered.
func (c *serverConn) holdCharge(id int32, charge int64) {
	c.chargeMu.Lock()
	if c.charges == nil {
		c.charges = map[int32][]int64{}
	}
	c.charges[id] = append(c.charges[id], charge)
	c.chargeMu.Unlock()
}

// releaseCharge releases the oldest charge recorded for request id. A
// client may reuse an id while it is in flight; the totals still match.
func (c *serverConn) releaseCharge(id int32) {
	c.srv.cfg.Budget.Release(c.takeCharge(id))
}

// takeCharge removes and returns the oldest charge recorded for id.
func (c *serverConn) takeCharge(id int32) int64 {
	c.chargeMu.Lock()
	q := c.charges[id]
	var n int64
	if len(q) > 0 {
		n = q[0]
		if len(q) == 1 {
			delete(c.charges, id)
		} else {
			c.charges[id] = q[1:]
		}
	}
	c.chargeMu.Unlock()
	return n
}

func (c *serverConn) logReadEnd(err error) {
	if peerGone(err) {
		c.gone.Store(true) // before the requests in flight are cancelled
	}
	switch {
	case c.draining.Load():
	case errors.Is(err, io.EOF):
		c.logger().Debug("client closed the connection")
	case isTimeout(err):
		c.logger().Debug("closing idle connection", "idle_timeout", c.srv.cfg.IdleTimeout)
	case errors.Is(err, net.ErrClosed):
	default:
		c.logger().Debug("read failed; closing connection", "error", err)
	}
}

// peerGone reports whether a read or write error says the client closed
// or reset the connection.
func peerGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
