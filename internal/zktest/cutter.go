package zktest

import (
	"net"
	"sync"
	"testing"
	"time"
)

// Cutter is a TCP forwarder, listening on 127.0.0.1 only, that sits between
// a client and a server that keeps running. Cut drops every forwarded
// connection and makes the forwarder refuse new ones, so the client is cut
// off exactly as by a network partition; Restore lets it connect again.
//
// Against ZooKeeper this is how a test makes a session expire (stay cut off
// longer than the session timeout) or survive a plain reconnect (Restore
// before the timeout), while other clients keep using the server directly:
//
//	cut := zktest.NewCutter(t, srv.Addr)
//	c := connect(cut.Addr(), 2*time.Second) // the client under test
//	cut.Cut()
//	// ... wait until a direct observer sees the client's ephemeral znode go
//	cut.Restore()
type Cutter struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup // the accept loop and every copy goroutine

	mu      sync.Mutex
	cut     bool
	conns   map[net.Conn]struct{}
	stalled chan struct{} // non-nil while Stall holds traffic; closed by Resume
	// held is closed once the current stall holds bytes a client sent
	held chan struct{}
}

// dialTimeout bounds the forwarder's connection to the target.
const dialTimeout = 5 * time.Second

// NewCutter starts forwarding connections made to Addr to target, which must
// be a loopback "host:port" (the tests never talk to another address). The
// forwarder stops, and drops every connection, when the test ends. It skips
// under -short when target is empty (Main started no server).
func NewCutter(tb testing.TB, target string) *Cutter {
	tb.Helper()
	skipIfUnstarted(tb, target)
	if !isLoopback(target) {
		tb.Fatalf("zktest: the cutter only forwards to a loopback address, not %q", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("zktest: cutter: %v", err)
	}
	c := &Cutter{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	c.wg.Add(1)
	go c.accept()
	tb.Cleanup(func() {
		ln.Close()
		c.Resume()
		c.Cut()
		c.wg.Wait()
	})
	return c
}

func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr is the "127.0.0.1:port" clients connect to instead of the target.
func (c *Cutter) Addr() string { return c.ln.Addr().String() }

// Cut closes every forwarded connection and refuses new ones (they are
// accepted and closed at once) until Restore.
func (c *Cutter) Cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	for conn := range c.conns {
		conn.Close()
	}
	clear(c.conns)
}

// Restore forwards new connections again. Connections dropped by Cut stay
// closed; the client has to reconnect.
func (c *Cutter) Restore() {
	c.mu.Lock()
	c.cut = false
	c.mu.Unlock()
}

// Stall holds every byte in both directions, on open connections and new
// ones, until Resume: the server seems to hang while the connections stay
// up, as a ZooKeeper server in a long pause does. Requests sent meanwhile
// reach the server after Resume.
func (c *Cutter) Stall() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stalled == nil {
		c.stalled = make(chan struct{})
		c.held = make(chan struct{})
	}
}

// Resume lets traffic held by Stall through.
func (c *Cutter) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stalled != nil {
		close(c.stalled)
		c.stalled, c.held = nil, nil
	}
}

// gate returns the channel to wait on while stalled, or nil. upstream
// bytes held mark the stall as holding a request (Held).
func (c *Cutter) gate(upstream bool) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stalled != nil && upstream {
		select {
		case <-c.held:
		default:
			close(c.held)
		}
	}
	return c.stalled
}

// Held returns a channel closed once the current stall holds bytes that a
// client sent: a request sent during the stall, or one still on its way
// when it began, is held and has not reached the server. It is nil when
// nothing is stalled. A client's periodic ping counts too.
func (c *Cutter) Held() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held
}

// track registers conns to be closed by Cut; it refuses (false) while cut.
func (c *Cutter) track(conns ...net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return false
	}
	for _, conn := range conns {
		c.conns[conn] = struct{}{}
	}
	return true
}

func (c *Cutter) untrack(conns ...net.Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range conns {
		conn.Close()
		delete(c.conns, conn)
	}
}

func (c *Cutter) accept() {
	defer c.wg.Done()
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return // listener closed at the end of the test
		}
		c.mu.Lock()
		cut := c.cut
		c.mu.Unlock()
		if cut {
			in.Close()
			continue
		}
		out, err := net.DialTimeout("tcp", c.target, dialTimeout)
		if err != nil {
			in.Close()
			continue
		}
		// Cut may have run during the dial.
		if !c.track(in, out) {
			in.Close()
			out.Close()
			continue
		}
		c.wg.Add(2)
		go c.pipe(out, in, true)
		go c.pipe(in, out, false)
	}
}

// pipe copies src to dst until either side ends, then closes both so the
// other direction ends too. upstream is true for the client's side.
func (c *Cutter) pipe(dst, src net.Conn, upstream bool) {
	defer c.wg.Done()
	defer c.untrack(dst, src)
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if g := c.gate(upstream); g != nil {
				<-g
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
