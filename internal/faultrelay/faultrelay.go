// Package faultrelay is a TCP relay for tests that sits between a client
// and a server on loopback and injects one network fault at a time:
// refuse, reset part-way through a request or after the server answered,
// stall, trickle bytes, or answer HTTP 500/503 in the server's place. It is
// for tests only.
package faultrelay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the relay does to connections.
type Fault int

const (
	// None relays bytes both ways unchanged.
	None Fault = iota
	// Refuse closes the listening port: connections are refused.
	Refuse
	// ResetRequest relays half of a connection's first request bytes to
	// the server, then resets both sides: the server sees a cut request.
	ResetRequest
	// ResetResponse relays the request whole and resets the client's
	// connection when the server's answer starts: the server may have
	// applied the request, the client cannot know.
	ResetResponse
	// Stall accepts connections and reads what the client sends, but
	// relays nothing and answers nothing until the fault ends.
	Stall
	// Slow relays both ways SlowChunk bytes at a time, SlowDelay apart.
	Slow
	// HTTP500 and HTTP503 answer every request with that status and an
	// empty body, without reaching the server.
	HTTP500
	HTTP503
)

// Faults lists every fault but None, for table tests.
var Faults = []Fault{Refuse, ResetRequest, ResetResponse, Stall, Slow, HTTP500, HTTP503}

func (f Fault) String() string {
	switch f {
	case None:
		return "none"
	case Refuse:
		return "refuse"
	case ResetRequest:
		return "reset-request"
	case ResetResponse:
		return "reset-response"
	case Stall:
		return "stall"
	case Slow:
		return "slow"
	case HTTP500:
		return "http-500"
	case HTTP503:
		return "http-503"
	}
	return fmt.Sprintf("fault(%d)", int(f))
}

// Pace of the Slow fault: 64-byte pieces, 2 ms apart (about 32 KB/s each
// way), so every answer arrives in many partial reads while the matrix's
// requests still fit in their timeout.
const (
	SlowChunk = 64
	SlowDelay = 2 * time.Millisecond
)

// Relay listens on a loopback port and relays to one target.
type Relay struct {
	target string
	addr   string

	mu     sync.Mutex
	fault  Fault
	ln     net.Listener // nil while refusing
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	// faulted counts connections (or, for Refuse, Set calls) that met a
	// fault, so a test can prove the fault was exercised.
	faulted atomic.Int64
}

// Start listens on 127.0.0.1 (a free port) and relays to target
// (host:port).
func Start(target string) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Relay{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	r.serve(ln)
	return r, nil
}

// Addr is the relay's host:port; URL is "http://" + Addr.
func (r *Relay) Addr() string { return r.addr }
func (r *Relay) URL() string  { return "http://" + r.addr }

// Faulted reports how many connections met a fault since Start.
func (r *Relay) Faulted() int64 { return r.faulted.Load() }

// Set switches to fault f. Every open connection is reset first, so that
// pooled keep-alive connections meet the new fault too and nothing held
// by a stall outlives it.
func (r *Relay) Set(f Fault) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("faultrelay: closed")
	}
	r.fault = f
	for c := range r.conns {
		reset(c)
	}
	switch {
	case f == Refuse && r.ln != nil:
		r.ln.Close()
		r.ln = nil
	case f != Refuse && r.ln == nil:
		// Reopen on the same port: clients keep the address they have.
		ln, err := net.Listen("tcp", r.addr)
		if err != nil {
			return fmt.Errorf("faultrelay: listen again on %s: %w", r.addr, err)
		}
		r.serveLocked(ln)
	}
	return nil
}

// Close stops listening and resets every connection.
func (r *Relay) Close() {
	r.mu.Lock()
	r.closed = true
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for c := range r.conns {
		reset(c)
	}
	r.mu.Unlock()
	r.wg.Wait()
}

func (r *Relay) serve(ln net.Listener) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.serveLocked(ln)
}

func (r *Relay) serveLocked(ln net.Listener) {
	r.ln = ln
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed by Set(Refuse) or Close
			}
			r.mu.Lock()
			if r.closed {
				r.mu.Unlock()
				c.Close()
				return
			}
			f := r.fault
			r.conns[c] = struct{}{}
			r.wg.Add(1)
			r.mu.Unlock()
			go func() {
				defer r.wg.Done()
				defer r.forget(c)
				r.handle(c, f)
			}()
		}
	}()
}

// track registers a connection the relay opened, so Set resets it too; it
// reports false if the relay closed meanwhile.
func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.conns[c] = struct{}{}
	return true
}

func (r *Relay) forget(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

// reset closes c with an RST rather than a FIN.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.Close()
}

func (r *Relay) dial() (net.Conn, error) {
	up, err := net.DialTimeout("tcp", r.target, 5*time.Second)
	if err != nil {
		return nil, err
	}
	if !r.track(up) {
		up.Close()
		return nil, errors.New("faultrelay: closed")
	}
	return up, nil
}

func (r *Relay) handle(c net.Conn, f Fault) {
	switch f {
	case None:
		r.relay(c, io.Copy, nil)
	case Slow:
		r.faulted.Add(1)
		r.relay(c, slowCopy, nil)
	case ResetRequest:
		buf := make([]byte, 32<<10)
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		r.faulted.Add(1)
		up, err := r.dial()
		if err != nil {
			reset(c)
			return
		}
		defer r.forget(up)
		up.Write(buf[:max(1, n/2)])
		reset(up)
		reset(c)
	case ResetResponse:
		r.relay(c, io.Copy, func(first []byte) bool {
			r.faulted.Add(1)
			reset(c)
			return false
		})
	case Stall:
		r.faulted.Add(1)
		io.Copy(io.Discard, c) // until the client or Set closes it
	case HTTP500, HTTP503:
		status := "500 Internal Server Error"
		if f == HTTP503 {
			status = "503 Service Unavailable"
		}
		if !readHeader(c) {
			return
		}
		r.faulted.Add(1)
		fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", status)
		// Half-close and drain what the client still sends (a body), so
		// the close is a FIN and the client reads the answer.
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, c)
	}
}

// readHeader reads one HTTP request header (up to the blank line), and
// reports whether it got one.
func readHeader(c net.Conn) bool {
	var got []byte
	buf := make([]byte, 4096)
	for len(got) < 1<<20 {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if bytes.Contains(got, []byte("\r\n\r\n")) {
			return true
		}
		if err != nil {
			return false
		}
	}
	return false
}

type copier func(dst io.Writer, src io.Reader) (int64, error)

// relay copies c to the target and back with cp. If onAnswer is set, it
// sees the first bytes of the server's answer and decides whether they
// and the rest pass.
func (r *Relay) relay(c net.Conn, cp copier, onAnswer func(first []byte) bool) {
	up, err := r.dial()
	if err != nil {
		reset(c)
		return
	}
	defer r.forget(up)
	done := make(chan struct{})
	go func() {
		defer close(done)
		cp(up, c)
		if tc, ok := up.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	if onAnswer != nil {
		buf := make([]byte, 32<<10)
		n, err := up.Read(buf)
		if n > 0 && !onAnswer(buf[:n]) {
			reset(up)
			<-done
			return
		}
		if n > 0 {
			c.Write(buf[:n])
		}
		if err != nil {
			c.Close()
			<-done
			return
		}
	}
	cp(c, up)
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	<-done
}

// slowCopy copies SlowChunk bytes at a time, SlowDelay apart.
func slowCopy(dst io.Writer, src io.Reader) (int64, error) {
	buf := make([]byte, SlowChunk)
	var total int64
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(SlowDelay)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if err != nil {
			return total, err
		}
	}
}
