package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
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
	// goes to Forward or is answered UNSUPPORTED_VERSION).
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
	// Requests taken by Forward.Try do not count. Default
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
	// API's Quick path (and to Forward.Try), so with either it must not
	// block; serve a Mux.WithoutQuick when it may.
	Gate GateFunc
	// Forward, if set, passes on every request the Mux does not hold
	// (proxy mode); see Forwarder. With Forward.Try set, the Gate runs on
	// the connection's reader goroutine for those requests too, so it must
	// not block.
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
	// heldStarted counts the requests the drain found held in sockets.
	heldStarted atomic.Int64
	refusals    *refusalLog // connections refused at MaxConns

	mu        sync.Mutex
	closing   bool
	listeners map[net.Listener]struct{}
	conns     map[*serverConn]struct{}
	connWG    sync.WaitGroup

	lot *parkLot // requests waiting for their Quick.Wait condition

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
		lot:       newParkLot(),
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

// Close stops accepting and drains for up to DrainTimeout: it answers the
// requests in flight and those whose frames the sockets already hold (see
// drainHeld), waiting for no new ones, then cuts what is left and closes
// every connection. It is idempotent and safe to call concurrently;
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
			c.shutDown()
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
			// One line for all: each cut request is told at DEBUG and
			// counted as cut (RequestDone.Outcome), not as an error.
			var inflight int64
			for _, c := range conns {
				inflight += c.requests.inflight.Load()
			}
			s.log.Warn("drain timeout; cutting the requests still in flight and closing their connections",
				"timeout", s.cfg.DrainTimeout, "requests", inflight)
			for _, c := range conns {
				c.cutAtDrainTimeout()
			}
			errs = append(errs, ErrDrainTimeout)
		}
		if n := s.heldStarted.Load(); n > 0 {
			s.log.Info("drain answered the requests the sockets held", "requests", n)
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
