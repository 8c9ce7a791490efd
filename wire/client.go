package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// ErrClientClosed is the error of calls made on, or in flight during, a
// closed Client.
var ErrClientClosed = errors.New("wire: client closed")

// ServerFailureError is the error of every call in flight when the server
// sends SERVER_FAILURE. It is deliberately not a *flusserr.Error: it fails
// the connection, not one request.
type ServerFailureError struct {
	Code    flusserr.Code
	Message string
}

func (e *ServerFailureError) Error() string {
	return fmt.Sprintf("wire: server failure %s (%d): %s", e.Code.Name(), int32(e.Code), e.Message)
}

// ClientOptions configures Dial. The zero value is usable.
type ClientOptions struct {
	// Dial opens the connection. Default: a net.Dialer's DialContext.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxFrameSize bounds response frames, including the length field.
	// Default math.MaxInt32, like the Java client.
	MaxFrameSize int32
	// OnReadIdle, if set, runs on the client's reader goroutine each time it
	// has handled every response received so far and is about to wait for
	// more: the moment to flush answers that SendFunc callbacks queued.
	OnReadIdle func()
}

// Client is a pipelined Fluss RPC client on one connection. Any number of
// goroutines may call it at once; requests are numbered from 0 and replies
// are matched by request id, in whatever order they come.
type Client struct {
	nc       net.Conn
	maxFrame int32
	onIdle   func()
	nextID   atomic.Int32
	w        *sockWriter
	wg       sync.WaitGroup

	mu      sync.Mutex
	pending map[int32]pendingCall
	err     error
	done    chan struct{}
}

// pendingCall is one request waiting for its answer: either a caller
// blocked in CallRaw (ch) or a Send callback (fn, with its tag).
type pendingCall struct {
	ch  chan Response
	fn  SendFunc
	tag int64
}

// SendFunc receives the answer to a request written by Client.Send: the
// SUCCESS or ERROR response (err nil), or the error that ended the
// connection first. tag is the value given to Send. It runs on the client's
// reader goroutine, or on the goroutine that ends the connection, so it
// must not block and must not call Client.Close.
type SendFunc func(tag int64, r Response, err error)

// Dial connects to addr over TCP and starts the client's reader and writer.
func Dial(ctx context.Context, addr string, opts ClientOptions) (*Client, error) {
	dial := opts.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return NewClient(nc, opts), nil
}

// NewClient runs a client on an established connection, which it owns.
func NewClient(nc net.Conn, opts ClientOptions) *Client {
	maxFrame := opts.MaxFrameSize
	if maxFrame <= 0 {
		maxFrame = math.MaxInt32
	}
	c := &Client{
		nc:       nc,
		maxFrame: maxFrame,
		onIdle:   opts.OnReadIdle,
		pending:  make(map[int32]pendingCall),
		done:     make(chan struct{}),
	}
	c.w = newSockWriter(nc, 0, func(err error) { c.fail(fmt.Errorf("wire: write: %w", err)) })
	c.wg.Add(1)
	go c.readLoop()
	return c
}

// Call sends req as apiKey/apiVersion and waits for the answer. A SUCCESS is
// decoded into resp (which may be nil to ignore the body); an ERROR is
// returned as *flusserr.Error. A nil req sends an empty body. If ctx ends
// first, Call returns ctx.Err() and a late answer is dropped.
func (c *Client) Call(ctx context.Context, apiKey messages.Key, apiVersion int16, req, resp proto.Message) error {
	var body []byte
	if req != nil {
		var err error
		if body, err = proto.Marshal(req); err != nil {
			return fmt.Errorf("wire: encode %s: %w", req.ProtoReflect().Descriptor().Name(), err)
		}
	}
	r, err := c.CallRaw(ctx, apiKey, apiVersion, body)
	if err != nil {
		return err
	}
	if r.Type != ResponseSuccess {
		return r.Err()
	}
	if resp != nil {
		if err := proto.Unmarshal(r.Body, resp); err != nil {
			return fmt.Errorf("wire: decode %s: %w", resp.ProtoReflect().Descriptor().Name(), err)
		}
	}
	return nil
}

// CallRaw sends body unchanged and returns the SUCCESS or ERROR response
// that answers it. The error is non-nil only when no answer arrived.
func (c *Client) CallRaw(ctx context.Context, apiKey messages.Key, apiVersion int16, body []byte) (Response, error) {
	ch := make(chan Response, 1)
	id, err := c.register(pendingCall{ch: ch})
	if err != nil {
		return Response{}, err
	}
	if err := c.writeReq(apiKey, apiVersion, id, body, true); err != nil {
		c.forget(id)
		return Response{}, err
	}
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		c.forget(id)
		return Response{}, ctx.Err()
	case <-c.done:
		// The answer may have arrived just before the failure.
		select {
		case r := <-ch:
			return r, nil
		default:
			return Response{}, c.Err()
		}
	}
}

// Send writes a request with body unchanged and returns without waiting:
// fn is called exactly once with the answer, or with the error that ended
// the connection before an answer arrived, and is given tag unchanged. If
// Send returns an error, the request was not sent and fn is never called.
// Send never waits for the peer to read, so it may be called from a
// goroutine that must not block, such as a proxy's reader.
func (c *Client) Send(apiKey messages.Key, apiVersion int16, body []byte, tag int64, fn SendFunc) error {
	return c.send(apiKey, apiVersion, body, tag, fn, true)
}

// Queue is Send without starting to write: the request goes out with the
// next Send, CallRaw or Flush, so that a batch of requests costs one write.
// The caller must call Flush after the batch.
func (c *Client) Queue(apiKey messages.Key, apiVersion int16, body []byte, tag int64, fn SendFunc) error {
	return c.send(apiKey, apiVersion, body, tag, fn, false)
}

// Flush starts writing the requests that Queue left, without waiting for
// the peer.
func (c *Client) Flush() { c.w.start() }

func (c *Client) send(apiKey messages.Key, apiVersion int16, body []byte, tag int64, fn SendFunc, start bool) error {
	id, err := c.register(pendingCall{fn: fn, tag: tag})
	if err != nil {
		return err
	}
	if err := c.writeReq(apiKey, apiVersion, id, body, start); err != nil {
		c.mu.Lock()
		_, stillPending := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if !stillPending {
			// The connection failed meanwhile and fn has been (or is
			// being) called with that failure.
			return nil
		}
		return err
	}
	return nil
}

// register takes the next request id for call.
func (c *Client) register(call pendingCall) (int32, error) {
	id := c.nextID.Add(1) - 1
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	if _, busy := c.pending[id]; busy {
		return 0, fmt.Errorf("wire: request id %d is still in flight", id)
	}
	c.pending[id] = call
	return id, nil
}

// writeReq queues one request frame and, with start, starts writing; the
// body is copied, not kept.
func (c *Client) writeReq(apiKey messages.Key, apiVersion int16, id int32, body []byte, start bool) error {
	if len(body) > math.MaxInt32-requestHeaderSize {
		return fmt.Errorf("wire: request body of %d bytes is too large for a frame", len(body))
	}
	var hdr [lengthFieldSize + requestHeaderSize]byte
	binary.BigEndian.PutUint32(hdr[0:4], uint32(requestHeaderSize+len(body)))
	binary.BigEndian.PutUint16(hdr[4:6], uint16(apiKey))
	binary.BigEndian.PutUint16(hdr[6:8], uint16(apiVersion))
	binary.BigEndian.PutUint32(hdr[8:12], uint32(id))
	if !start {
		return c.w.queue(hdr[:], body)
	}
	return c.w.write(hdr[:], body)
}

// SendRawFrame writes b to the connection as is, through the client's
// writer. It is for tests that send malformed frames.
func (c *Client) SendRawFrame(b []byte) error {
	return c.w.write(b)
}

// Handshake sends API_VERSIONS v0 the way the Java client does and returns
// the server's answer.
func (c *Client) Handshake(ctx context.Context) (*messages.ApiVersionsResponse, error) {
	req := &messages.ApiVersionsRequest{
		ClientSoftwareName:    proto.String("fluss"),
		ClientSoftwareVersion: proto.String("0.1.0"),
	}
	resp := &messages.ApiVersionsResponse{}
	if err := c.Call(ctx, messages.KeyAPIVersions, 0, req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// Done is closed when the connection has failed or been closed.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is up.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection, fails every call in flight with
// ErrClientClosed and waits for the client's goroutines. It is idempotent.
func (c *Client) Close() error {
	c.fail(ErrClientClosed)
	c.wg.Wait()
	c.w.wait() // the socket is closed: a write in progress fails at once
	return nil
}

func (c *Client) forget(id int32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// fail ends the connection with err; the first error wins. Requests sent
// with Send get err through their callbacks.
func (c *Client) fail(err error) {
	var calls []pendingCall
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		for _, p := range c.pending {
			if p.fn != nil {
				calls = append(calls, p)
			}
		}
		c.pending = nil
		close(c.done)
	}
	err = c.err
	c.mu.Unlock()
	c.nc.Close()
	for _, p := range calls {
		p.fn(p.tag, Response{}, err)
	}
}

func (c *Client) readLoop() {
	defer c.wg.Done()
	br := bufio.NewReaderSize(c.nc, 64<<10)
	for {
		if c.onIdle != nil && !frameBuffered(br) {
			c.onIdle()
		}
		payload, err := ReadFrame(br, c.maxFrame)
		if err != nil {
			c.fail(fmt.Errorf("wire: connection lost: %w", err))
			return
		}
		r, err := ParseResponse(payload)
		if err != nil {
			c.fail(fmt.Errorf("wire: bad response: %w", err))
			return
		}
		if r.Type == ResponseServerFailure {
			a := apierr.Of(r.Err())
			c.fail(&ServerFailureError{Code: a.Code, Message: a.Message})
			return
		}
		c.mu.Lock()
		p, ok := c.pending[r.RequestID]
		delete(c.pending, r.RequestID)
		c.mu.Unlock()
		switch {
		case !ok:
		case p.fn != nil:
			p.fn(p.tag, r, nil)
		default:
			p.ch <- r // buffered; each id is delivered at most once
		}
	}
}

// frameBuffered reports whether br holds a whole frame, so that reading it
// will not wait for the network.
func frameBuffered(br *bufio.Reader) bool {
	lb, _ := br.Peek(min(br.Buffered(), lengthFieldSize))
	return frameWhole(lb, br.Buffered())
}

// frameWhole reports whether have bytes starting with the length field lb
// (shorter when fewer than its four bytes are there) hold a whole frame,
// or a length no frame can have, which the reader must see to refuse.
func frameWhole(lb []byte, have int) bool {
	if len(lb) < lengthFieldSize {
		return false
	}
	l := int32(binary.BigEndian.Uint32(lb))
	return l < 0 || int64(have) >= int64(l)+lengthFieldSize
}
