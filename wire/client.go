package wire

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

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
}

// Client is a pipelined Fluss RPC client on one connection. Any number of
// goroutines may call it at once; requests are numbered from 0 and replies
// are matched by request id, in whatever order they come.
type Client struct {
	nc       net.Conn
	maxFrame int32
	nextID   atomic.Int32
	writeCh  chan []byte
	wg       sync.WaitGroup

	mu      sync.Mutex
	pending map[int32]chan Response
	err     error
	done    chan struct{}
}

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
		writeCh:  make(chan []byte, 64),
		pending:  make(map[int32]chan Response),
		done:     make(chan struct{}),
	}
	c.wg.Add(2)
	go c.readLoop()
	go c.writeLoop()
	return c
}

// Call sends req as apiKey/apiVersion and waits for the answer. A SUCCESS is
// decoded into resp (which may be nil to ignore the body); an ERROR is
// returned as *flusserr.Error. A nil req sends an empty body. If ctx ends
// first, Call returns ctx.Err() and a late answer is dropped.
func (c *Client) Call(ctx context.Context, apiKey, apiVersion int16, req, resp proto.Message) error {
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
func (c *Client) CallRaw(ctx context.Context, apiKey, apiVersion int16, body []byte) (Response, error) {
	id := c.nextID.Add(1) - 1
	ch := make(chan Response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return Response{}, err
	}
	if _, busy := c.pending[id]; busy {
		c.mu.Unlock()
		return Response{}, fmt.Errorf("wire: request id %d is still in flight", id)
	}
	c.pending[id] = ch
	c.mu.Unlock()

	frame := AppendRequest(nil, RequestHeader{APIKey: apiKey, APIVersion: apiVersion, RequestID: id}, body)
	select {
	case c.writeCh <- frame:
	case <-ctx.Done():
		c.forget(id)
		return Response{}, ctx.Err()
	case <-c.done:
		return Response{}, c.Err()
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

// SendRawFrame writes b to the connection as is, through the client's
// writer. It is for tests that send malformed frames.
func (c *Client) SendRawFrame(b []byte) error {
	select {
	case c.writeCh <- append([]byte(nil), b...):
		return nil
	case <-c.done:
		return c.Err()
	}
}

// Handshake sends API_VERSIONS v0 the way the Java client does and returns
// the server's answer.
func (c *Client) Handshake(ctx context.Context) (*messages.ApiVersionsResponse, error) {
	req := &messages.ApiVersionsRequest{
		ClientSoftwareName:    proto.String("fluss"),
		ClientSoftwareVersion: proto.String("0.1.0"),
	}
	resp := &messages.ApiVersionsResponse{}
	if err := c.Call(ctx, apiVersionsKey, 0, req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

const apiVersionsKey = 1000

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
	return nil
}

func (c *Client) forget(id int32) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// fail ends the connection with err; the first error wins.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
		c.pending = nil
		close(c.done)
	}
	c.mu.Unlock()
	c.nc.Close()
}

func (c *Client) readLoop() {
	defer c.wg.Done()
	br := bufio.NewReaderSize(c.nc, 64<<10)
	for {
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
			sf := &ServerFailureError{Code: flusserr.UnknownServerError, Message: "undecodable ErrorResponse"}
			if fe, ok := flusserr.From(r.Err()); ok {
				sf.Code, sf.Message = fe.Code, fe.Message
			}
			c.fail(sf)
			return
		}
		c.mu.Lock()
		ch, ok := c.pending[r.RequestID]
		delete(c.pending, r.RequestID)
		c.mu.Unlock()
		if ok {
			ch <- r // buffered; each id is delivered at most once
		}
	}
}

func (c *Client) writeLoop() {
	defer c.wg.Done()
	bw := bufio.NewWriterSize(c.nc, 64<<10)
	for {
		select {
		case f := <-c.writeCh:
			if _, err := bw.Write(f); err != nil {
				c.fail(fmt.Errorf("wire: write: %w", err))
				return
			}
			if len(c.writeCh) == 0 {
				if err := bw.Flush(); err != nil {
					c.fail(fmt.Errorf("wire: write: %w", err))
					return
				}
			}
		case <-c.done:
			return
		}
	}
}
