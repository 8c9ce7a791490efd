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
func dialer(connectTimeout, ioTimeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &timedConn{Conn: c, io: ioTimeout}, nil
	}
}

type timedConn struct {
	net.Conn
	io time.Duration

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
		_ = c.Conn.Close()
	}
	return n, err
}

func (c *timedConn) Write(p []byte) (int, error) {
	c.arm()
	n, err := c.Conn.Write(p)
	if err != nil {
		_ = c.Conn.Close()
	}
	return n, err
}

func (c *timedConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return c.Conn.SetDeadline(t)
}
