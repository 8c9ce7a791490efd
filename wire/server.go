package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
)

// Defaults applied by NewServer to zero fields of ServerConfig.
const (
	DefaultMaxInFlightPerConn = 1024
	DefaultIdleTimeout        = 10 * time.Minute
	DefaultDrainTimeout       = 30 * time.Second
	DefaultMaxConns           = 1024
	DefaultMaxRunningPerConn  = 2
)

// ErrServerClosed is returned by Serve when it is called after Close.
var ErrServerClosed = errors.New("wire: server closed")

// ErrDrainTimeout is returned (possibly joined with other errors) by Close
// when requests were still in flight after DrainTimeout and were cut.
var ErrDrainTimeout = errors.New("wire: drain timed out; requests in flight were cancelled")

// ServerConfig configures a Server. Zero values take the documented
// defaults.
type ServerConfig struct {
	// Mux holds the locally served APIs. Nil serves none (every request then
	// goes to Fallback or is answered UNSUPPORTED_VERSION).
	Mux *Mux
	// Logger is the parent logger; the server logs to its "wire" sub-logger.
	// Nil discards logs.
	Logger hclog.Logger
	// MaxFrameSize is the largest accepted frame including its 4-byte length
	// field, like Fluss's netty.server.max-request-size. Default
	// DefaultMaxFrameSize.
	MaxFrameSize int32
	// MaxInFlightPerConn bounds the requests being served at once on one
	// connection; when it is reached the server stops reading from that
	// connection until one finishes. Default DefaultMaxInFlightPerConn.
	MaxInFlightPerConn int
	// MaxRunningPerConn bounds the requests of one connection whose
	// handlers run at once; the connection's other requests in flight wait
	// their turn (in no set order). It keeps a client that pipelines thousands of
	// requests from filling the stores' queues ahead of everyone else's.
	// Requests taken by a Forwarder do not count. Default
	// DefaultMaxRunningPerConn.
	MaxRunningPerConn int
	// MaxConns bounds open connections; a connection accepted beyond it is
	// closed at once, counted by the Observer (ConnRefused "limit") and
	// logged at most once a second with the number refused since the
	// previous line. Default DefaultMaxConns.
	MaxConns int
	// Budget bounds the request bytes held in memory across every
	// connection (see Budget); several servers may share one. Nil gives
	// this server a budget of DefaultRequestBudget bytes of its own.
	Budget *Budget
	// IdleTimeout closes a connection that has sent nothing for this long
	// while no request of it is in flight. It also bounds how long one
	// response write may block. Default DefaultIdleTimeout.
	IdleTimeout time.Duration
	// DrainTimeout bounds how long Close waits for in-flight requests before
	// it cancels them and closes their connections. Default
	// DefaultDrainTimeout.
	DrainTimeout time.Duration
	// ListenerName is copied into every Session.
	ListenerName string
	// Gate, if set, runs before every request; see GateFunc. It runs on
	// the connection's reader goroutine for the requests offered to an
	// API's Quick hook (and to Forward), so with either it must not block;
	// serve a Mux.WithoutQuick when it may.
	Gate GateFunc
	// Fallback, if set, serves api keys the Mux does not hold; see
	// FallbackFunc.
	Fallback FallbackFunc
	// RawFallback, if set, serves api keys the Mux does not hold and takes
	// precedence over Fallback; see RawFallbackFunc.
	RawFallback RawFallbackFunc
	// Forward, if set, is offered every request the Mux does not hold
	// before RawFallback, on the connection's reader goroutine, so that a
	// proxy can pass it on without a goroutine per request; see Forwarder.
	// For those requests the Gate runs on the reader goroutine too, so with
	// Forward set the Gate must not block.
	Forward Forwarder
	// OnConnect, if set, runs once per connection before its first request
	// is read; see ConnectFunc.
	OnConnect ConnectFunc
	// Observer, if set, is told about connections and requests (metrics);
	// see Observer.
	Observer Observer
}

// Validate reports a configuration that cannot work.
func (c ServerConfig) Validate() error {
	var errs []error
	if c.MaxFrameSize < 0 || (c.MaxFrameSize > 0 && c.MaxFrameSize < lengthFieldSize+requestHeaderSize) {
		errs = append(errs, fmt.Errorf("MaxFrameSize %d is below the %d bytes of an empty request", c.MaxFrameSize, lengthFieldSize+requestHeaderSize))
	}
	if c.MaxInFlightPerConn < 0 {
		errs = append(errs, fmt.Errorf("MaxInFlightPerConn %d is negative", c.MaxInFlightPerConn))
	}
	if c.MaxRunningPerConn < 0 {
		errs = append(errs, fmt.Errorf("MaxRunningPerConn %d is negative", c.MaxRunningPerConn))
	}
	if c.MaxConns < 0 {
		errs = append(errs, fmt.Errorf("MaxConns %d is negative", c.MaxConns))
	}
	if c.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("IdleTimeout %v is negative", c.IdleTimeout))
	}
	if c.DrainTimeout < 0 {
		errs = append(errs, fmt.Errorf("DrainTimeout %v is negative", c.DrainTimeout))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("wire: invalid ServerConfig: %w", err)
	}
	return nil
}

func (c ServerConfig) withDefaults() ServerConfig {
	if c.MaxFrameSize == 0 {
		c.MaxFrameSize = DefaultMaxFrameSize
	}
	if c.MaxInFlightPerConn == 0 {
		c.MaxInFlightPerConn = DefaultMaxInFlightPerConn
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.MaxRunningPerConn == 0 {
		c.MaxRunningPerConn = DefaultMaxRunningPerConn
	}
	if c.Budget == nil {
		c.Budget = NewBudget(DefaultRequestBudget)
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return c
}

// Server serves the Fluss RPC protocol on any number of listeners.
type Server struct {
	cfg       ServerConfig
	configErr error
	log       hclog.Logger

	nextConnID atomic.Uint64
	active     atomic.Int64
	refusals   *refusalLog // connections refused at MaxConns

	mu        sync.Mutex
	closing   bool
	listeners map[net.Listener]struct{}
	conns     map[*serverConn]struct{}
	connWG    sync.WaitGroup

	closeOnce sync.Once
	shutdown  chan struct{} // closed when Close starts
	done      chan struct{} // closed when Close has finished
	closeErr  error
}

// NewServer returns a server for cfg. An invalid cfg makes Serve fail.
func NewServer(cfg ServerConfig) *Server {
	err := cfg.Validate()
	cfg = cfg.withDefaults()
	log := cfg.Logger.Named("wire")
	return &Server{
		cfg:       cfg,
		configErr: err,
		log:       log,
		refusals:  newRefusalLog(log),
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[*serverConn]struct{}),
		shutdown:  make(chan struct{}),
		done:      make(chan struct{}),
	}
}

// ActiveConns returns the number of open connections.
func (s *Server) ActiveConns() int64 { return s.active.Load() }

// Serve accepts connections on ln until ctx is done or Close is called, and
// then returns nil after the shutdown that Close performs has finished. It
// owns ln and closes it. Temporary accept errors are retried with backoff;
// any other accept error is returned.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.configErr != nil {
		ln.Close()
		return s.configErr
	}
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
	}()

	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-ctx.Done():
			s.Close()
		case <-stop:
		case <-s.shutdown:
		}
	}()

	s.log.Info("serving", "addr", ln.Addr().String())
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				<-s.done
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			delay = nextBackoff(delay)
			s.log.Warn("accept failed; retrying", "error", err, "backoff", delay)
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-s.shutdown:
				t.Stop()
			}
			continue
		}
		delay = 0
		s.startConn(nc)
	}
}

func nextBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return 5 * time.Millisecond
	}
	return min(2*d, time.Second)
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Close stops accepting, lets in-flight requests finish for up to
// DrainTimeout while reading no new ones, then cancels what is left and
// closes every connection. It is idempotent and safe to call concurrently;
// every call returns after the shutdown has finished. A handler that ignores
// its context may outlive Close. The error wraps ErrDrainTimeout when
// requests were cut.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		close(s.shutdown)
		lns := make([]net.Listener, 0, len(s.listeners))
		for ln := range s.listeners {
			lns = append(lns, ln)
		}
		conns := make([]*serverConn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()

		var errs []error
		for _, ln := range lns {
			if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
		for _, c := range conns {
			c.drain()
		}
		finished := make(chan struct{})
		go func() {
			s.connWG.Wait()
			close(finished)
		}()
		t := time.NewTimer(s.cfg.DrainTimeout)
		select {
		case <-finished:
			t.Stop()
		case <-t.C:
			s.log.Warn("drain timeout; closing connections with requests in flight", "timeout", s.cfg.DrainTimeout)
			for _, c := range conns {
				c.abort()
			}
			errs = append(errs, ErrDrainTimeout)
		}
		s.refusals.stop()
		s.closeErr = errors.Join(errs...)
		close(s.done)
	})
	<-s.done
	return s.closeErr
}

func (s *Server) startConn(nc net.Conn) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		s.refused("closing") // counted before the peer can see the close
		nc.Close()
		return
	}
	if s.cfg.MaxConns > 0 && len(s.conns) >= s.cfg.MaxConns {
		s.mu.Unlock()
		s.refused("limit") // counted before the peer can see the close
		s.refusals.refused(nc.RemoteAddr().String(), s.cfg.MaxConns)
		nc.Close()
		return
	}
	c := newServerConn(s, nc)
	s.conns[c] = struct{}{}
	s.connWG.Add(1)
	s.active.Add(1)
	s.mu.Unlock()
	if s.cfg.Observer != nil {
		s.cfg.Observer.ConnAccepted(s.cfg.ListenerName)
	}
	go c.run()
}

func (s *Server) refused(reason string) {
	if s.cfg.Observer != nil {
		s.cfg.Observer.ConnRefused(s.cfg.ListenerName, reason)
	}
}

func (s *Server) removeConn(c *serverConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.active.Add(-1)
	if s.cfg.Observer != nil {
		s.cfg.Observer.ConnClosed(s.cfg.ListenerName)
	}
	s.connWG.Done()
}

// maxQueuedOut bounds the response bytes queued on one connection beyond
// which a goroutine answering a request waits for the socket, so a client
// that does not read its answers stops the server from reading requests.
const maxQueuedOut = 1 << 20

// serverConn is one client connection: a reader (run), one goroutine per
// request (or a Forward hook answering through a Replier), and the single
// writer that owns the socket's write side.
type serverConn struct {
	srv  *Server
	nc   net.Conn
	br   *bufio.Reader
	sess *Session
	log  hclog.Logger

	ctx    context.Context // cancelled when the connection closes
	cancel context.CancelFunc
	// readCtx is cancelled when the connection drains or closes; the
	// reader waits for room in the budget under it.
	readCtx    context.Context
	readCancel context.CancelFunc

	chargeMu sync.Mutex
	charges  map[int32][]int64 // budget charges of forwarded requests

	w          *sockWriter
	scratch    []byte // the reader's buffer for Quick answers
	writerStop chan struct{}
	rep        *Replier
	sem        chan struct{}
	running    chan struct{} // slots of handlers running at once
	handlers   sync.WaitGroup
	inflight   atomic.Int64
	draining   atomic.Bool
	// readDeadline is the idle deadline last set by the reader (only the
	// reader goroutine touches it; drain sets its own deadline).
	readDeadline time.Time
	closeOnce    sync.Once

	// pending traces the requests the Forward hook took, by request id,
	// while tracking() holds.
	pendingMu sync.Mutex
	pending   map[int32]reqTrace
}

func newServerConn(s *Server, nc net.Conn) *serverConn {
	id := s.nextConnID.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	readCtx, readCancel := context.WithCancel(ctx)
	c := &serverConn{
		readCtx:    readCtx,
		readCancel: readCancel,
		charges:    map[int32][]int64{},
		srv:        s,
		nc:         nc,
		br:         bufio.NewReaderSize(nc, 64<<10),
		sess: &Session{
			ConnID:       id,
			RemoteAddr:   nc.RemoteAddr(),
			LocalAddr:    nc.LocalAddr(),
			ListenerName: s.cfg.ListenerName,
		},
		log:        s.log.With("conn", id),
		ctx:        ctx,
		cancel:     cancel,
		writerStop: make(chan struct{}),
		sem:        make(chan struct{}, s.cfg.MaxInFlightPerConn),
		running:    make(chan struct{}, s.cfg.MaxRunningPerConn),
	}
	c.w = newSockWriter(nc, s.cfg.IdleTimeout, c.writerStop, c.writeFailed)
	c.w.maxQueued = maxQueuedOut
	c.rep = &Replier{c: c}
	c.sess.closeWhenIdle = c.drain
	c.sess.closeNow = c.abort
	return c
}

func (c *serverConn) run() {
	defer c.srv.removeConn(c)
	c.log.Debug("connection opened", "remote", c.sess.RemoteAddr.String())
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		c.w.run()
	}()
	if c.srv.cfg.OnConnect != nil {
		c.srv.cfg.OnConnect(c.ctx, c.sess)
	}
	if c.readLoop() {
		go c.watchPeer()
	} else {
		// The peer is gone or out of sync: nobody will read the answers.
		c.cancel()
	}
	c.handlers.Wait()
	c.w.flush()
	close(c.writerStop)
	<-writerDone
	c.closeConn()
	c.cancel()
	c.log.Debug("connection closed")
}

func (c *serverConn) closeConn() {
	c.closeOnce.Do(func() { c.nc.Close() })
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
	io.Copy(io.Discard, c.br)
	c.cancel()
}

// abort cancels in-flight requests and closes the socket.
func (c *serverConn) abort() {
	c.cancel()
	c.closeConn()
}

// setReadDeadline sets the idle deadline unless the connection is draining;
// it reports false when draining. Checking after setting closes the race
// with drain, which sets the flag before its own (past) deadline.
//
// Moving a socket's deadline costs a timer update, twice per request, so
// the deadline is moved only when it is nearer than IdleTimeout, and then
// to IdleTimeout plus a sixteenth: a connection is closed after between
// IdleTimeout and 17/16 of it without a request.
func (c *serverConn) setReadDeadline() bool {
	if c.draining.Load() {
		return false
	}
	idle := c.srv.cfg.IdleTimeout
	if want := time.Now().Add(idle); c.readDeadline.Before(want) {
		c.readDeadline = want.Add(idle / 16)
		c.nc.SetReadDeadline(c.readDeadline)
	}
	return !c.draining.Load()
}

// readLoop reads requests until the connection ends or drains. It reports
// whether requests in flight should still be answered: true only when it
// stopped because the server is draining and the peer is still there. On an
// unreadable frame it queues the SERVER_FAILURE first.
func (c *serverConn) readLoop() (answerInFlight bool) {
	defer c.flushForwarded()
	for {
		if !frameBuffered(c.br) {
			c.flushForwarded()
		}
		if !c.setReadDeadline() {
			return true
		}
		// Wait for the first byte of a frame, so that an idle timeout never
		// strikes in the middle of one.
		if _, err := c.br.Peek(1); err != nil {
			if isTimeout(err) && !c.draining.Load() && c.inflight.Load() > 0 {
				continue
			}
			c.logReadEnd(err)
			return c.draining.Load() && isTimeout(err)
		}
		if !c.setReadDeadline() {
			return true
		}
		payload, charge, borrowed, err := c.readRequest()
		if err == nil {
			var h RequestHeader
			var body []byte
			h, body, err = ParseRequest(payload)
			started := err == nil && c.start(h, body, borrowed, charge)
			if borrowed {
				c.br.Discard(len(payload))
			}
			if started {
				continue
			}
			c.srv.cfg.Budget.Release(charge)
			if err == nil {
				return false // the connection died while start waited
			}
		}
		if errors.Is(err, errStopReading) {
			return c.draining.Load()
		}
		var fe *FrameError
		if errors.As(err, &fe) {
			c.log.Warn("unreadable frame; closing connection", "code", fe.Code().Name(), "error_code", int32(fe.Code()), "error", fe)
			c.send(AppendServerFailure(nil, fe.Code(), fe.Error()))
			c.w.flush()
			c.closeConn()
			return false
		}
		c.logReadEnd(err)
		return c.draining.Load() && isTimeout(err)
	}
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
		c.log.Debug("request budget spent; waiting before reading more", "frame_bytes", n, "budget", b.Size())
		if err := b.Acquire(c.readCtx, charge); err != nil {
			return nil, 0, false, errStopReading
		}
		if !c.setReadDeadline() {
			b.Release(charge)
			return nil, 0, false, errStopReading
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
		b.Release(charge)
		return nil, 0, false, err
	}
	return payload, charge, false, nil
}

// holdCharge records the budget charge of a request offered to the Forward
// hook, to be released when it is answered.
func (c *serverConn) holdCharge(id int32, charge int64) {
	c.chargeMu.Lock()
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
	switch {
	case c.draining.Load():
	case errors.Is(err, io.EOF):
		c.log.Debug("client closed the connection")
	case isTimeout(err):
		c.log.Debug("closing idle connection", "idle_timeout", c.srv.cfg.IdleTimeout)
	case errors.Is(err, net.ErrClosed):
	default:
		c.log.Debug("read failed; closing connection", "error", err)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// start runs one request: at once on the reader goroutine when the API's
// Quick hook answers it; otherwise, once an in-flight slot is free, through
// the Forward hook when it takes the request, else on its own goroutine. It
// reports false if the connection died while waiting for a slot. A borrowed
// body lives in the read buffer (see readRequest): it is copied before
// anything keeps it.
func (c *serverConn) start(h RequestHeader, body []byte, borrowed bool, charge int64) bool {
	api, local := c.srv.cfg.Mux.Lookup(h.APIKey)
	tr := c.begin(h, requestHeaderSize+len(body), &api, local)
	gated := false
	if local && api.Quick != nil && h.APIVersion >= api.MinVersion && h.APIVersion <= api.MaxVersion {
		// Answered here and now, a Quick request takes no in-flight slot:
		// it holds nothing once this returns.
		var frame []byte
		var pid string
		var wait Waiter
		frame, pid, gated, wait = c.quick(&api, h, body)
		if wait != nil {
			if !c.acquireSlot() {
				c.finishFrame(tr, c.errorFrame(h, c.ctx.Err())) // nobody reads it
				return false
			}
			if borrowed {
				body = bytes.Clone(body)
			}
			go c.serveAfter(&api, wait, h, body, charge, tr)
			return true
		}
		if frame != nil {
			tr.producerID = flusserr.Echo(pid)
			c.srv.cfg.Budget.Release(charge)
			if len(frame) > maxScratch {
				c.srv.cfg.Budget.NoteLarge(int64(len(frame)))
			}
			c.finishFrame(tr, frame)
			c.send(frame)
			if cap(frame) <= maxScratch && len(c.scratch) == 0 && cap(frame) > cap(c.scratch) {
				c.scratch = frame[:0]
			}
			return true
		}
	}
	if !c.acquireSlot() {
		c.finishFrame(tr, c.errorFrame(h, c.ctx.Err())) // nobody reads it
		return false
	}
	if borrowed {
		body = bytes.Clone(body)
	}
	if c.srv.cfg.Forward != nil {
		if !local {
			// Tracked before the offer: the answer may come before it
			// returns. Untracked requests are finished here or not at all.
			tracked := c.tracking() && c.track(tr)
			var frame []byte
			c.holdCharge(h.RequestID, charge)
			frame, gated = c.offer(h, body)
			if frame != nil || gated {
				c.takeCharge(h.RequestID) // not taken: charge stays with this request
			}
			if frame != nil {
				c.srv.cfg.Budget.Release(charge)
				if tracked {
					c.untrack(h.RequestID)
				}
				go c.answer(tr, frame)
				return true
			}
			if !gated {
				if !tracked {
					c.finishUntracked(tr)
				}
				return true // the Forward hook took it
			}
			if tracked {
				c.untrack(h.RequestID)
			}
		}
	}
	go c.serve(h, body, gated, charge, tr)
	return true
}

// answer sends a ready answer on its own goroutine, since sending may wait
// for the client.
func (c *serverConn) answer(tr reqTrace, frame []byte) {
	defer c.done()
	c.finishFrame(tr, frame)
	c.send(frame)
}

// acquireSlot takes an in-flight slot for a request that is not answered at
// once, waiting while MaxInFlightPerConn are taken; it reports false if the
// connection died meanwhile.
func (c *serverConn) acquireSlot() bool {
	select {
	case c.sem <- struct{}{}:
	default:
		// Requests the Forward hook holds back must go out before waiting
		// for a slot, or their answers could never free one.
		c.flushForwarded()
		select {
		case c.sem <- struct{}{}:
		case <-c.ctx.Done():
			return false
		}
	}
	c.inflight.Add(1)
	c.handlers.Add(1)
	return true
}

// serve answers one request on its own goroutine. A method rather than a
// closure, so that the request's bytes are garbage once the handler has
// decoded them instead of living as long as the goroutine.
func (c *serverConn) serve(h RequestHeader, body []byte, gated bool, charge int64, tr reqTrace) {
	defer c.done()
	var frame []byte
	select {
	case c.running <- struct{}{}:
		frame = c.process(h, body, gated, &tr)
		<-c.running
	case <-c.ctx.Done():
		frame = c.errorFrame(h, c.ctx.Err()) // nobody reads it
	}
	c.srv.cfg.Budget.NoteLarge(int64(len(frame)))
	c.srv.cfg.Budget.Release(charge)
	// Counted and logged before the client can see the answer.
	c.finishFrame(tr, frame)
	c.send(frame)
}

// panicFrame logs a panic of what (a handler or hook) serving h, with its
// stack, and returns the internal-error answer for it.
func (c *serverConn) panicFrame(what string, h RequestHeader, r any) []byte {
	c.log.Error(what+" panicked", "api_key", h.APIKey, "request_id", h.RequestID,
		"error", fmt.Sprint(r), "stack", string(debug.Stack()))
	return AppendError(nil, h.RequestID, flusserr.UnknownServerError,
		truncate(fmt.Sprintf("internal server error: panic: %v", r)))
}

// maxScratch bounds the buffer a connection keeps for building Quick
// answers.
const maxScratch = 64 << 10

// quick runs the Gate and the API's Quick hook on the reader goroutine. It
// returns the frame to answer with: the Quick answer (built in c.scratch),
// a Gate error or a panic; or nil with gated=true when Quick declined, so
// that the request is served as usual without running the Gate again.
func (c *serverConn) quick(api *API, h RequestHeader, body []byte) (frame []byte, producerID string, gated bool, wait Waiter) {
	defer func() {
		if r := recover(); r != nil {
			frame, wait = c.panicFrame("handler", h, r), nil
		}
	}()
	if g := c.srv.cfg.Gate; g != nil {
		if err := g(c.ctx, c.sess, h); err != nil {
			return c.errorFrame(h, err), "", false, nil
		}
	}
	if api.QuickWait != nil {
		if w := api.QuickWait(c.sess, h.APIVersion, body); w != nil {
			return nil, "", true, w
		}
	}
	buf := c.scratch
	c.scratch = nil // not shared with a send that panics half-way
	frame, pid, ok := c.quickFrame(api, h, body, buf[:0])
	if !ok {
		c.scratch = buf
		return nil, "", true, nil
	}
	return frame, pid, false, nil
}

// quickFrame offers the request to Quick, building the answer's frame in
// buf; ok is false when Quick declined.
func (c *serverConn) quickFrame(api *API, h RequestHeader, body, buf []byte) (frame []byte, producerID string, ok bool) {
	frame, off := beginFrame(buf)
	frame = append(frame, byte(ResponseSuccess))
	frame = binary.BigEndian.AppendUint32(frame, uint32(h.RequestID))
	frame, pid, ok := api.Quick(c.sess, h.APIVersion, body, frame)
	if !ok {
		return nil, "", false
	}
	if len(frame)-off-lengthFieldSize > math.MaxInt32 {
		return c.errorFrame(h, fmt.Errorf("response of %d bytes is too large for a frame", len(frame)-off-lengthFieldSize)), pid, true
	}
	return endFrame(frame, off), pid, true
}

// serveAfter answers, on its own goroutine and in its in-flight slot, a
// request whose Quick answer must wait for w (API.QuickWait): by Quick once
// w is met, else as serve does. The Gate already ran.
func (c *serverConn) serveAfter(api *API, w Waiter, h RequestHeader, body []byte, charge int64, tr reqTrace) {
	select {
	case <-w.Done():
	case <-c.ctx.Done():
		defer c.done()
		c.srv.cfg.Budget.Release(charge)
		c.finishFrame(tr, c.errorFrame(h, c.ctx.Err())) // nobody reads it
		return
	}
	if w.Err() == nil {
		frame, pid, ok := c.quickAfter(api, h, body)
		if ok {
			defer c.done()
			tr.producerID = flusserr.Echo(pid)
			c.srv.cfg.Budget.Release(charge)
			c.srv.cfg.Budget.NoteLarge(int64(len(frame)))
			c.finishFrame(tr, frame)
			c.send(frame)
			return
		}
	}
	c.serve(h, body, true, charge, tr)
}

// quickAfter is quickFrame with a fresh buffer, recovering a panic.
func (c *serverConn) quickAfter(api *API, h RequestHeader, body []byte) (frame []byte, producerID string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			frame, ok = c.panicFrame("handler", h, r), true
		}
	}()
	return c.quickFrame(api, h, body, nil)
}

// offer runs the Gate and the Forward hook on the reader goroutine. It
// returns a frame to answer with (a Gate error or a panic), or taken=false
// with gated=true when the hook declined the request.
func (c *serverConn) offer(h RequestHeader, body []byte) (frame []byte, gated bool) {
	defer func() {
		if r := recover(); r != nil {
			frame = c.panicFrame("forward hook", h, r)
		}
	}()
	cfg := &c.srv.cfg
	if cfg.Gate != nil {
		if err := cfg.Gate(c.ctx, c.sess, h); err != nil {
			return c.errorFrame(h, err), false
		}
	}
	if cfg.Forward.Forward(c.sess, h, body, c.rep) {
		return nil, false
	}
	return nil, true
}

// flushForwarded tells the Forward hook that the reader is about to wait.
func (c *serverConn) flushForwarded() {
	if c.srv.cfg.Forward == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("forward hook panicked", "error", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	c.srv.cfg.Forward.Flush(c.sess)
}

// done releases the in-flight slot of one answered request.
func (c *serverConn) done() {
	c.inflight.Add(-1)
	<-c.sem
	c.handlers.Done()
}

// send queues one response frame, or drops it if the writer has failed. It
// waits while much is queued and the client is not reading.
func (c *serverConn) send(b []byte) {
	c.w.write(b)
}

func (c *serverConn) writeFailed(err error) {
	if !errors.Is(err, net.ErrClosed) {
		c.log.Debug("write failed; closing connection", "error", err)
	}
	c.cancel()
	c.closeConn()
}

// Replier answers the requests that a Forwarder took, from any goroutine.
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

// process answers one request. It never panics and always returns a
// complete response frame. gated says the Gate has already admitted the
// request.
func (c *serverConn) process(h RequestHeader, body []byte, gated bool, tr *reqTrace) (frame []byte) {
	defer func() {
		if r := recover(); r != nil {
			frame = c.panicFrame("handler", h, r)
		}
	}()
	cfg := &c.srv.cfg
	if cfg.Gate != nil && !gated {
		if err := cfg.Gate(c.ctx, c.sess, h); err != nil {
			return c.errorFrame(h, err)
		}
	}
	api, ok := cfg.Mux.Lookup(h.APIKey)
	if !ok {
		if cfg.RawFallback != nil {
			r, err := cfg.RawFallback(c.ctx, c.sess, h, body)
			if err != nil {
				return c.errorFrame(h, err)
			}
			if r.Type != ResponseSuccess && r.Type != ResponseError {
				return c.errorFrame(h, fmt.Errorf("fallback answered with a %v response", r.Type))
			}
			if len(r.Body) > math.MaxInt32-responseHeaderSize {
				return c.errorFrame(h, fmt.Errorf("response of %d bytes is too large for a frame", len(r.Body)))
			}
			tr.passed = true
			return appendResponse(nil, r.Type, h.RequestID, r.Body)
		}
		if cfg.Fallback != nil {
			out, err := cfg.Fallback(c.ctx, c.sess, h, body)
			if err != nil {
				return c.errorFrame(h, err)
			}
			if len(out) > math.MaxInt32-responseHeaderSize {
				return c.errorFrame(h, fmt.Errorf("response of %d bytes is too large for a frame", len(out)))
			}
			return AppendSuccess(nil, h.RequestID, out)
		}
		c.log.Debug("unsupported api key", "api_key", h.APIKey, "request_id", h.RequestID)
		return AppendError(nil, h.RequestID, flusserr.UnsupportedVersion,
			fmt.Sprintf("The server does not support api key %d version %d; the key is not served.", h.APIKey, h.APIVersion))
	}
	if h.APIVersion < api.MinVersion || h.APIVersion > api.MaxVersion {
		c.log.Debug("unsupported api version", "api_key", h.APIKey, "request_id", h.RequestID, "api_version", h.APIVersion)
		return AppendError(nil, h.RequestID, flusserr.UnsupportedVersion,
			fmt.Sprintf("The server does not support %v version %d; supported range is [%d,%d].",
				api, h.APIVersion, api.MinVersion, api.MaxVersion))
	}
	var resp proto.Message
	var err error
	ctx := context.WithValue(c.ctx, arrivalKey{}, tr.start)
	if api.HandleRaw != nil {
		tr.producerID = rawProducerID(api, body)
		resp, err = api.HandleRaw(ctx, c.sess, h.APIVersion, body)
	} else {
		req := api.NewRequest()
		if err := DecodeBody(api, h.APIVersion, body, req); err != nil {
			c.log.Debug("undecodable request body", "api_key", h.APIKey, "request_id", h.RequestID, "error", err)
			return c.errorFrame(h, err)
		}
		tr.producerID = producerIDOf(req)
		resp, err = api.Handle(ctx, c.sess, req)
	}
	if err != nil {
		return c.errorFrame(h, err)
	}
	if resp == nil || !resp.ProtoReflect().IsValid() {
		return c.errorFrame(h, fmt.Errorf("handler of %v returned neither a response nor an error", api))
	}
	return c.successFrame(h, api, resp)
}

// successFrame encodes resp straight into a SUCCESS frame. Encoding checks
// required fields, so a response a strict decoder would reject becomes an
// error answer instead.
func (c *serverConn) successFrame(h RequestHeader, api API, resp proto.Message) []byte {
	frame, off := beginFrame(nil)
	frame = append(frame, byte(ResponseSuccess))
	frame = binary.BigEndian.AppendUint32(frame, uint32(h.RequestID))
	frame, err := proto.MarshalOptions{}.MarshalAppend(frame, resp)
	if err != nil {
		return c.errorFrame(h, fmt.Errorf("failed to encode %s of %v: %w", resp.ProtoReflect().Descriptor().Name(), api, err))
	}
	if len(frame)-lengthFieldSize > math.MaxInt32 {
		return c.errorFrame(h, fmt.Errorf("response of %d bytes is too large for a frame", len(frame)))
	}
	return endFrame(frame, off)
}

// errorFrame maps err to an ERROR frame: a *flusserr.Error keeps its code
// and message; anything else is UNKNOWN_SERVER_ERROR with the error text.
func (c *serverConn) errorFrame(h RequestHeader, err error) []byte {
	// The request's log line (see finish) carries the code and message.
	if fe, ok := flusserr.From(err); ok && fe.Code != flusserr.None {
		return AppendError(nil, h.RequestID, fe.Code, fe.Message)
	}
	return AppendError(nil, h.RequestID, flusserr.UnknownServerError, truncate(err.Error()))
}
