package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
)

// maxQueuedOut bounds the response bytes queued on one connection beyond
// which a goroutine answering a request waits for the socket, so a client
// that does not read its answers stops the server from reading requests.
const maxQueuedOut = 1 << 20

// connWriter is the connection's write side: the socket's one writer and
// the Replier through which Forward.Try's requests are answered. Both are
// set at construction; every goroutine answering a request writes through
// them, and sockWriter serializes the writes under its own lock (the
// goroutine that finds the socket idle writes, and a goroutine of the
// writer's own writes what the socket could not take at once).
type connWriter struct {
	w   *sockWriter
	rep *Replier
}

// send queues one response frame, or drops it if the writer has failed. It
// waits while much is queued and the client is not reading.
func (wr *connWriter) send(b []byte) {
	wr.w.write(b)
}

// writeFailed is the socket writer's onFail: the connection ends, as
// nobody can be answered any more.
func (c *serverConn) writeFailed(err error) {
	if !errors.Is(err, net.ErrClosed) {
		// Not this server's close: the client reset the connection or
		// stopped reading. Set before the requests in flight are
		// cancelled, so that they count as the client's doing.
		c.gone.Store(true)
		c.logger().Debug("write failed; closing connection", "error", err)
	}
	c.cancel()
	c.closeConn()
}

// Replier answers the requests that Forward.Try took, from any goroutine.
// Each taken request must be answered exactly once; the answer releases
// the request's in-flight slot.
type Replier struct {
	c *serverConn
}

// Reply answers requestID with a SUCCESS or ERROR response carrying body
// unchanged (body is copied). Any other type is answered as an error. It
// may wait while the client is not reading its answers.
func (r *Replier) Reply(requestID int32, t ResponseType, body []byte) {
	r.answer(requestID, t, body, true)
}

// Queue is Reply without starting to write: the answer goes out with the
// next answer written on the connection or with Flush, so that a batch of
// answers costs one write. The caller must call Flush after the batch.
func (r *Replier) Queue(requestID int32, t ResponseType, body []byte) {
	r.answer(requestID, t, body, false)
}

func (r *Replier) answer(requestID int32, t ResponseType, body []byte, start bool) {
	c := r.c
	defer c.requests.done()
	c.releaseCharge(requestID)
	if tr, ok := c.requests.untrack(requestID); ok {
		c.finish(tr, t, body, true)
	}
	var err error
	switch {
	case t != ResponseSuccess && t != ResponseError:
		err = fmt.Errorf("forwarder answered with a %v response", t)
	case len(body) > math.MaxInt32-responseHeaderSize:
		err = fmt.Errorf("response of %d bytes is too large for a frame", len(body))
	}
	if err != nil {
		c.writer.send(c.errorFrame(RequestHeader{RequestID: requestID}, err))
		return
	}
	var hdr [lengthFieldSize + responseHeaderSize]byte
	binary.BigEndian.PutUint32(hdr[0:4], uint32(responseHeaderSize+len(body)))
	hdr[4] = byte(t)
	binary.BigEndian.PutUint32(hdr[5:9], uint32(requestID))
	if start {
		c.writer.w.write(hdr[:], body)
	} else {
		c.writer.w.queue(hdr[:], body)
	}
}

// Flush starts writing the answers that Queue left, without waiting for
// the client.
func (r *Replier) Flush() { r.c.writer.w.start() }

// ReplyError answers requestID with err, mapped like a handler error.
func (r *Replier) ReplyError(requestID int32, err error) {
	c := r.c
	defer c.requests.done()
	c.releaseCharge(requestID)
	frame := c.errorFrame(RequestHeader{RequestID: requestID}, err)
	if tr, ok := c.requests.untrack(requestID); ok {
		c.finishFrame(tr, frame)
	} else {
		// Not traced, but an error this server made is always logged.
		c.logUntracked(requestID, frame)
	}
	c.writer.send(frame)
}
