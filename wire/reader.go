package wire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connReader is the connection's read side, owned by its read goroutine:
// the one that runs the connection (run: readLoop, then drainHeld at
// shutdown), or watchPeer, which takes the reader over once readLoop has
// returned for a drain. Only that goroutine touches br, rw, holding,
// lostPlace, readDeadline and deadlineStale. Other goroutines only stop
// it: drain and shutDown set draining and answerHeld (atomic), and drain
// and the connection's cancel end readCtx.
type connReader struct {
	// br is the read buffer, taken from readerPool when bytes arrive and
	// given back when it is empty again, so that an idle connection holds
	// none; without a readWaiter (rw nil) the connection keeps it.
	br *bufio.Reader
	rw *readWaiter

	// readCtx is cancelled when the connection drains or closes; the
	// reader waits for room in the budget under it.
	readCtx    context.Context
	readCancel context.CancelFunc
	draining   atomic.Bool
	// answerHeld: the server is shutting down, so the requests the socket
	// already holds are read and answered before the connection closes
	// (drainHeld). A connection drained on its own (Session.CloseWhenIdle)
	// reads nothing more.
	answerHeld atomic.Bool

	// holding: the reader runs drainHeld; lostPlace: a read failed in the
	// middle of a frame, so no later byte can be taken for a frame's start.
	holding   bool
	lostPlace bool
	// readDeadline is the idle deadline last set by the reader;
	// deadlineStale: the reader waited since, so the deadline must be set
	// again before it waits for a request (see readLoop). drain sets its
	// own deadline.
	readDeadline  time.Time
	deadlineStale bool
}

// readBufferSize is the size of a connection's read buffer while it reads.
const readBufferSize = 64 << 10

// readerPool holds the read buffers (*bufio.Reader) of connections that
// are waiting for a request.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}

// takeReader gives the connection a read buffer if it has none.
func (r *connReader) takeReader() {
	if r.br == nil {
		r.br = readerPool.Get().(*bufio.Reader)
		r.br.Reset(r.rw) // what the wait read, then the socket
	}
}

// releaseReader gives an empty read buffer back to the pool; a buffer that
// still holds bytes (a request, or what a peer sent during the drain) is
// kept.
func (r *connReader) releaseReader() {
	if r.rw == nil || r.br == nil || r.br.Buffered() > 0 || r.rw.pending() {
		return
	}
	r.br.Reset(nil)
	readerPool.Put(r.br)
	r.br = nil
}

// waitRequest waits for the first byte of a request, so that an idle
// timeout never strikes in the middle of one, and makes sure the
// connection has a read buffer holding it. While it waits with nothing
// buffered, the buffer goes back to the pool (see readWaiter).
func (r *connReader) waitRequest() error {
	if r.rw != nil && (r.br == nil || r.br.Buffered() == 0) {
		r.releaseReader()
		if err := r.rw.wait(); err != nil {
			return err
		}
		if r.br == nil && r.rw.frameHeld() {
			return nil // readRequest takes it from the wait's chunk
		}
	}
	r.takeReader()
	_, err := r.br.Peek(1)
	return err
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
	r := &c.reader
	if r.draining.Load() {
		return false
	}
	idle := c.srv.cfg.IdleTimeout
	if want := now.Add(idle); r.readDeadline.Before(want) {
		r.readDeadline = want.Add(idle / 16)
		c.nc.SetReadDeadline(r.readDeadline)
	}
	r.deadlineStale = false
	return !r.draining.Load()
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
	r := &c.reader
	defer c.flushForwarded()
	r.deadlineStale = true
	for {
		if !r.frameHeld() {
			c.flushForwarded()
		}
		if r.draining.Load() || r.deadlineStale && !c.setReadDeadline(time.Now()) {
			return true
		}
		if err := r.waitRequest(); err != nil {
			if isTimeout(err) && !r.draining.Load() && c.requests.inflight.Load() > 0 {
				r.deadlineStale = true
				continue
			}
			c.logReadEnd(err)
			return r.draining.Load() && isTimeout(err)
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
			return r.draining.Load()
		}
		var fe *FrameError
		if errors.As(err, &fe) {
			return false
		}
		c.logReadEnd(err)
		return r.draining.Load() && isTimeout(err)
	}
}

// serveFrame reads one request, whose first byte was there at arrived, and
// starts it; it reports false when the connection cannot go on, with the
// read's error (nil when the connection died while start waited). On an
// unreadable frame it sends the SERVER_FAILURE and closes the connection.
func (c *serverConn) serveFrame(arrived time.Time) (bool, error) {
	payload, charge, borrowed, err := c.readRequest()
	if err == nil {
		var h RequestHeader
		var body []byte
		h, body, err = ParseRequest(payload)
		started := err == nil && c.start(h, body, borrowed, charge, arrived)
		if borrowed {
			c.reader.discardBorrowed(len(payload))
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
		c.writer.send(AppendServerFailure(nil, a.Code, a.Message))
		c.writer.w.flush()
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
// copied: it is valid until the caller discards it (discardBorrowed),
// which the caller must do before reading on.
func (c *serverConn) readRequest() (payload []byte, charge int64, borrowed bool, err error) {
	r := &c.reader
	if r.br == nil {
		// waitRequest saw a whole frame in the wait's chunk.
		if payload, charge, ok := c.chunkRequest(); ok {
			return payload, charge, true, nil
		}
		r.takeReader()
	}
	lb, err := r.br.Peek(lengthFieldSize)
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
		ctx := r.readCtx
		if r.holding {
			ctx = c.ctx
		}
		if err := b.Acquire(ctx, charge); err != nil {
			return nil, 0, false, errStopReading
		}
		if !r.holding && !c.setReadDeadline(time.Now()) {
			b.Release(charge)
			return nil, 0, false, errStopReading
		}
		if r.holding {
			c.readHeldOnly() // the wait may have outlived a timed deadline
		}
	}
	r.br.Discard(lengthFieldSize)
	if r.br.Buffered() >= int(n) {
		if payload, err = r.br.Peek(int(n)); err == nil {
			return payload, charge, true, nil
		}
	}
	payload, err = readPayload(r.br, n)
	if err != nil {
		// The frame's length is read and part of its payload may be: the
		// stream has lost its place between frames.
		r.lostPlace = true
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
	b := c.reader.rw.unread()
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
func (r *connReader) discardBorrowed(n int) {
	if r.br == nil {
		r.rw.consume(lengthFieldSize + n)
		return
	}
	r.br.Discard(n)
}

// frameHeld reports whether a whole frame is read and waiting: in the read
// buffer, or in the wait's chunk when the connection has no buffer.
func (r *connReader) frameHeld() bool {
	if r.br == nil {
		return r.rw != nil && r.rw.frameHeld()
	}
	return frameBuffered(r.br)
}

func (c *serverConn) logReadEnd(err error) {
	if peerGone(err) {
		c.gone.Store(true) // before the requests in flight are cancelled
	}
	switch {
	case c.reader.draining.Load():
	case errors.Is(err, io.EOF):
		c.logger().Debug("client closed the connection")
	case isTimeout(err):
		c.logger().Debug("closing idle connection", "idle_timeout", c.srv.cfg.IdleTimeout)
	case errors.Is(err, net.ErrClosed):
	default:
		c.logger().Debug("read failed; closing connection", "error", err)
	}
}

// watchPeer runs while a draining connection finishes its requests. The
// reader stopped on the drain deadline, which can also hide a peer that has
// just gone away; watchPeer cancels the requests in flight as soon as the
// peer is seen gone. Requests that arrive during the drain are not served:
// the connection closes once the drain ends.
func (c *serverConn) watchPeer() {
	r := &c.reader
	c.nc.SetReadDeadline(time.Time{})
	if r.br != nil {
		io.Copy(io.Discard, r.br)
	} else {
		io.Copy(io.Discard, r.rw)
	}
	c.cancel()
	r.releaseReader()
}
