package wire

import (
	"errors"
	"time"
)

// A server that shuts down answers what its clients had already sent: the
// requests in flight, and the requests whose bytes the sockets hold but
// the readers had not read yet (they were reading their way to them, or
// waiting for room in the budget). drainHeld does the second part on each
// connection's reader goroutine once the reader has stopped. It waits for
// nothing new: a round takes only what the socket holds at that moment
// (a read that does not wait), and the drain ends at the first round that
// finds no whole frame once every answer is written. A frame whose bytes
// are still arriving is not waited for; a client that keeps pipelining
// through the whole drain is cut at the drain timeout.

// errNothingHeld is what a read returns during the drain when the socket
// holds nothing more right now.
var errNothingHeld = errors.New("wire: the socket holds nothing more")

// heldReadWait bounds a drain round's read where no read that does not
// wait is available (not Linux, or no raw socket): bytes already in the
// socket arrive at once.
const heldReadWait = 5 * time.Millisecond

// drainHeld answers, round after round, the whole frames the socket holds,
// until a round finds none with nothing in flight; or until the drain
// timeout closes the connection, or the client goes away (the requests
// in flight are then cancelled: nobody reads their answers).
func (c *serverConn) drainHeld() {
	r := &c.reader
	if r.lostPlace {
		// The drain's deadline stopped the reader in the middle of a large
		// frame: what follows in the socket is not a frame's start.
		return
	}
	r.holding = true
	var started int64
	defer func() {
		r.holding = false
		c.srv.heldStarted.Add(started)
		r.releaseReader()
	}()
	for c.ctx.Err() == nil {
		n, err := c.startHeld()
		started += int64(n)
		if peerGone(err) {
			c.gone.Store(true)
			c.cancel()
			return
		}
		resumable := err == nil || errors.Is(err, errNothingHeld) || isTimeout(err)
		if !resumable || (n == 0 && c.requests.inflight.Load() == 0) {
			return
		}
		// Let this round's answers (and those of the requests in flight
		// before it) go out: a client may send its next request only then.
		// The requests Forward.Try held back go first, or their answers
		// would never come.
		c.flushForwarded()
		c.requests.handlers.Wait()
		c.writer.w.flush()
	}
}

// startHeld starts every whole frame the socket and the read buffer hold
// now, and returns how many it started. Its error is errNothingHeld (or a
// timeout) when the socket ran dry, possibly in front of a partial frame
// left for the next round; any other error ends the drain.
func (c *serverConn) startHeld() (started int, err error) {
	r := &c.reader
	r.takeReader()
	c.readHeldOnly()
	for {
		// Fill the buffer with what the socket holds, without waiting.
		_, err = r.br.Peek(r.br.Size())
		if err != nil && !errors.Is(err, errNothingHeld) && !isTimeout(err) {
			return started, err
		}
		if !frameBuffered(r.br) && r.br.Buffered() < r.br.Size() {
			// Nothing, or the start of a frame whose rest has not come.
			return started, err
		}
		// A whole frame, or one larger than the buffer: read on from the
		// socket, which may run dry in its middle (the frame is then lost,
		// and so is the connection's place in the stream).
		ok, ferr := c.serveFrame(time.Now())
		if !ok {
			if ferr == nil {
				ferr = errStopReading // the connection died while start waited
			}
			if errors.Is(ferr, errNothingHeld) || isTimeout(ferr) {
				ferr = errPartialFrame
			}
			return started, ferr
		}
		started++
	}
}

// errPartialFrame ends a drain whose socket ran dry in the middle of a
// frame too large for the read buffer.
var errPartialFrame = errors.New("wire: the socket ran dry in the middle of a frame at drain")

// readHeldOnly makes the connection's reads return what the socket holds
// without waiting for more.
func (c *serverConn) readHeldOnly() {
	if c.reader.rw != nil && c.reader.rw.readNowOnly() {
		// A raw read checks the deadline first: clear the drain's.
		c.nc.SetReadDeadline(time.Time{})
		return
	}
	c.nc.SetReadDeadline(time.Now().Add(heldReadWait))
}
