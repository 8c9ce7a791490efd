// Package rawconn is the tests' bare client connection to a Fluss RPC
// server, for what a real client hides: chosen request ids, bytes written
// as they are, frames read in the order they arrive, and a connection the
// server closes. It frames requests itself rather than through package
// wire, so that wire's own tests can use it; the caller hands it the
// function that parses a response payload (wire.ParseResponse).
package rawconn

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// Deadline bounds every read and write of a connection unless the test
// sets another (SetDeadline); it only keeps a broken test from hanging.
const Deadline = 60 * time.Second

// maxFrame is the largest response payload read; larger lengths are a
// broken stream.
const maxFrame = 1 << 30

// Conn is one raw connection; R is what its parse function makes of a
// response payload. A failure fails the test that dialled it.
type Conn[R any] struct {
	tb    testing.TB
	nc    net.Conn
	br    *bufio.Reader
	parse func(payload []byte) (R, error)
	// deadline is the read and write deadline's length, for messages.
	deadline time.Duration
}

// Dial connects to addr and closes the connection when the test ends.
// parse turns a response payload (the frame without its length) into an
// R.
func Dial[R any](tb testing.TB, addr string, parse func(payload []byte) (R, error)) *Conn[R] {
	tb.Helper()
	nc, err := net.DialTimeout("tcp", addr, Deadline)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nc.Close() })
	c := &Conn[R]{tb: tb, nc: nc, br: bufio.NewReader(nc), parse: parse}
	c.SetDeadline(Deadline)
	return c
}

// Net is the underlying connection.
func (c *Conn[R]) Net() net.Conn { return c.nc }

// SetDeadline bounds the connection's reads and writes to d from now.
func (c *Conn[R]) SetDeadline(d time.Duration) {
	c.deadline = d
	c.nc.SetDeadline(time.Now().Add(d))
}

// Write writes b as it is.
func (c *Conn[R]) Write(b []byte) {
	c.tb.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.tb.Fatalf("write: %v", err)
	}
}

// AppendRequest appends the frame of one request to dst: the length, the
// 8-byte header (api key, api version, request id) and body.
func AppendRequest(dst []byte, key messages.Key, version int16, id int32, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(8+len(body)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(key))
	dst = binary.BigEndian.AppendUint16(dst, uint16(version))
	dst = binary.BigEndian.AppendUint32(dst, uint32(id))
	return append(dst, body...)
}

// Send writes one request with body as it is.
func (c *Conn[R]) Send(key messages.Key, version int16, id int32, body []byte) {
	c.tb.Helper()
	c.Write(AppendRequest(nil, key, version, id, body))
}

// SendMsg writes one request whose body is m encoded (empty for nil) and
// returns the body.
func (c *Conn[R]) SendMsg(key messages.Key, version int16, id int32, m proto.Message) []byte {
	c.tb.Helper()
	var body []byte
	if m != nil {
		var err error
		if body, err = proto.Marshal(m); err != nil {
			c.tb.Fatal(err)
		}
	}
	c.Send(key, version, id, body)
	return body
}

// TryReadFrame returns the next frame whole, its length included, or the
// error that ended the connection.
func (c *Conn[R]) TryReadFrame() ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(c.br, head[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxFrame {
		return nil, fmt.Errorf("frame length %d is beyond %d", n, maxFrame)
	}
	frame := make([]byte, 4+n)
	copy(frame, head[:])
	if _, err := io.ReadFull(c.br, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// ReadFrame returns the next frame whole, its length included.
func (c *Conn[R]) ReadFrame() []byte {
	c.tb.Helper()
	frame, err := c.TryReadFrame()
	if err != nil {
		c.tb.Fatalf("read frame: %v", err)
	}
	return frame
}

// TryRead returns the next response, or the error that ended the
// connection or that parsing it gave.
func (c *Conn[R]) TryRead() (R, error) {
	frame, err := c.TryReadFrame()
	if err != nil {
		var zero R
		return zero, err
	}
	return c.parse(frame[4:])
}

// Read returns the next response.
func (c *Conn[R]) Read() R {
	c.tb.Helper()
	frame := c.ReadFrame()
	r, err := c.parse(frame[4:])
	if err != nil {
		c.tb.Fatalf("parse response: %v", err)
	}
	return r
}

// ExpectClosed reads until the server closes the connection; it fails,
// saying why the close was expected, on any byte read, or when the
// connection is still open at its deadline.
func (c *Conn[R]) ExpectClosed(why string) {
	c.tb.Helper()
	var b [1]byte
	n, err := c.br.Read(b[:])
	var ne net.Error
	switch {
	case n != 0 || err == nil:
		c.tb.Fatalf("%s: expected the connection to be closed, read %d bytes, err %v", why, n, err)
	case errors.As(err, &ne) && ne.Timeout():
		c.tb.Fatalf("%s: the connection is still open after %v", why, c.deadline)
	}
}

// Handshake sends API_VERSIONS (v0, request id 0), as a client's first
// request, and fails unless it is answered SUCCESS under id 0.
func (c *Conn[R]) Handshake() {
	c.tb.Helper()
	c.SendMsg(messages.KeyAPIVersions, 0, 0, &messages.ApiVersionsRequest{
		ClientSoftwareName: proto.String("fluss"), ClientSoftwareVersion: proto.String("0.1.0")})
	frame := c.ReadFrame()
	if len(frame) < 9 || frame[4] != 0 || binary.BigEndian.Uint32(frame[5:9]) != 0 {
		c.tb.Fatalf("handshake: answer %x is not SUCCESS for request id 0", frame[4:min(len(frame), 9)])
	}
}
