package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
)

// send queues one response frame, or drops it if the writer has failed. It
// waits while much is queued and the client is not reading.
func (c *serverConn) send(b []byte) {
	c.w.write(b)
}

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
	defer c.done()
	c.releaseCharge(requestID)
	if tr, ok := c.untrack(requestID); ok {
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
		c.send(c.errorFrame(RequestHeader{RequestID: requestID}, err))
		return
	}
	var hdr [lengthFieldSize + responseHeaderSize]byte
	binary.BigEndian.PutUint32(hdr[0:4], uint32(responseHeaderSize+len(body)))
	hdr[4] = byte(t)
	binary.BigEndian.PutUint32(hdr[5:9], uint32(requestID))
	if start {
		c.w.write(hdr[:], body)
	} else {
		c.w.queue(hdr[:], body)
	}
}

// Flush starts writing the answers that Queue left, without waiting for
// the client.
func (r *Replier) Flush() { r.c.w.start() }

// ReplyError answers requestID with err, mapped like a handler error.
func (r *Replier) ReplyError(requestID int32, err error) {
	c := r.c
	defer c.done()
	c.releaseCharge(requestID)
	frame := c.errorFrame(RequestHeader{RequestID: requestID}, err)
	if tr, ok := c.untrack(requestID); ok {
		c.finishFrame(tr, frame)
	} else {
		// Not traced, but an error this server made is always logged.
		c.logUntracked(requestID, frame)
	}
	c.send(frame)
}
