package hdfsblob

import (
	"context"
	"net"
	"sync"
	"time"
)

// dialer returns a dial function whose connections bound every read and
// write by ioTimeout and close themselves on any failure: the client keeps
// a NameNode connection after a failed read, and a connection whose
// answer was cut off can only answer the wrong call afterwards.
// The connections are kept in open until they close, so that Close can
// end them all, a call stuck on one included.
func dialer(connectTimeout, ioTimeout time.Duration, open *connSet) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &timedConn{Conn: c, io: ioTimeout, set: open}
		if !open.add(tc) {
			_ = c.Close()
			return nil, net.ErrClosed
		}
		return tc, nil
	}
}

// connSet holds the open connections of one client.
type connSet struct {
	mu     sync.Mutex
	conns  map[*timedConn]struct{}
	closed bool
}

func (s *connSet) add(c *timedConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.conns == nil {
		s.conns = map[*timedConn]struct{}{}
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *connSet) remove(c *timedConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// closeAll closes every connection and refuses new ones.
func (s *connSet) closeAll() {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for c := range conns {
		_ = c.Conn.Close()
	}
}

type timedConn struct {
	net.Conn
	io  time.Duration
	set *connSet

	mu       sync.Mutex
	deadline time.Time // set by the client (SetDeadline), zero if none
}

func (c *timedConn) arm() {
	c.mu.Lock()
	d := time.Now().Add(c.io)
	if !c.deadline.IsZero() && c.deadline.Before(d) {
		d = c.deadline
	}
	c.mu.Unlock()
	_ = c.Conn.SetDeadline(d)
}

func (c *timedConn) Read(p []byte) (int, error) {
	c.arm()
	n, err := c.Conn.Read(p)
	if err != nil {
		_ = c.Close()
	}
	return n, err
}

func (c *timedConn) Close() error {
	c.set.remove(c)
	return c.Conn.Close()
}

func (c *timedConn) Write(p []byte) (int, error) {
	c.arm()
	n, err := c.Conn.Write(p)
	if err != nil {
		_ = c.Close()
	}
	return n, err
}

func (c *timedConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}
