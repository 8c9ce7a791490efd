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

// serverConn is one client connection. Its state is in three parts, each
// named after the goroutine that owns it: reader (the read goroutine),
// requests (the requests in flight) and writer (the socket's one writer).
// The fields here are shared by all of them: set at construction and only
// read after, atomic, or safe for concurrent use (the context and its
// cancel, closeOnce, lg).
type serverConn struct {
	srv  *Server
	nc   net.Conn
	sess *Session
	lg   atomic.Pointer[hclog.Logger] // see logger

	ctx    context.Context // cancelled when the connection closes
	cancel context.CancelFunc
	// cut: the drain timeout closed the connection; gone: the client
	// closed or reset it, or a write to it failed. Requests ending
	// afterwards are counted as such (outcome), not as answered.
	cut  atomic.Bool
	gone atomic.Bool
	// ended: cancel ran (ctx is cancelled or about to be). Beside cut and
	// gone, which answering a request reads too, it spares that path a
	// look at the context's own memory.
	ended     atomic.Bool
	closeOnce sync.Once

	reader   connReader
	requests connRequests
	writer   connWriter
}

func newServerConn(s *Server, nc net.Conn) *serverConn {
	id := s.nextConnID.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	// Not a child of ctx: a child context costs its parent a map of
	// children for the connection's life. cancel cancels both.
	readCtx, readCancel := context.WithCancel(context.Background())
	c := &serverConn{
		srv: s,
		nc:  nc,
		sess: &Session{
			ConnID:       id,
			RemoteAddr:   nc.RemoteAddr(),
			LocalAddr:    nc.LocalAddr(),
			ListenerName: s.cfg.ListenerName,
		},
		ctx: ctx,
		reader: connReader{
			rw:         newReadWaiter(nc),
			readCtx:    readCtx,
			readCancel: readCancel,
		},
		requests: connRequests{
			maxInFlight: int64(s.cfg.MaxInFlightPerConn),
			slotFreed:   make(chan struct{}, 1),
			running:     make(chan struct{}, s.cfg.MaxRunningPerConn),
		},
	}
	// Cancelling also withdraws the requests parked for a Quick.Wait.
	c.cancel = func() { c.ended.Store(true); cancel(); readCancel(); s.withdrawParked(c) }
	if c.reader.rw == nil {
		c.reader.br = bufio.NewReaderSize(nc, readBufferSize)
	}
	c.writer.w = newSockWriter(nc, s.cfg.IdleTimeout, c.writeFailed)
	c.writer.w.maxQueued = maxQueuedOut
	c.writer.rep = &Replier{c: c}
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
		if c.reader.answerHeld.Load() {
			c.drainHeld()
		} else {
			go c.watchPeer()
		}
	} else {
		// The peer is gone or out of sync: nobody will read the answers.
		c.cancel()
		c.reader.releaseReader()
	}
	c.requests.handlers.Wait()
	c.writer.w.flush()
	c.writer.w.wait()
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
	c.reader.answerHeld.Store(true)
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
	c.reader.draining.Store(true)
	c.reader.readCancel()
	c.nc.SetReadDeadline(time.Now())
}

// abort cancels in-flight requests and closes the socket.
func (c *serverConn) abort() {
	c.cancel()
	c.closeConn()
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
