//go:build linux

package wire

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// readWaiter waits until a socket has something to read (bytes, the peer's
// close or an error), so that an idle connection needs no read buffer: the
// buffer is taken from a pool once bytes are there. The wait goes through
// the runtime's network poller and honours the read deadline, like a read.
//
// The wait reads: its callback tries a non-blocking read into a small
// pooled chunk, which it gives back when the socket has nothing yet. So a
// request costs the same system calls as a plain read (one that finds
// nothing, the poller's wait, one that reads). The chunk's bytes are served
// by Read, the source of the connection's read buffer, before the socket's.
type readWaiter struct {
	nc    net.Conn
	rc    syscall.RawConn
	fn    func(fd uintptr) bool
	chunk []byte  // bytes the last wait read and Read has not served (pooled)
	held  *[]byte // the pooled buffer chunk is in, given back once served
	off   int
	// nowOnly: Read returns what the socket holds without waiting, or
	// errNothingHeld (the drain, see drainHeld).
	nowOnly bool
}

// chunkSize is what a wait reads at most: a whole small request; a larger
// one is read on from the socket.
const chunkSize = 4 << 10

var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// newReadWaiter returns a waiter for nc, or nil when nc has no raw socket
// (the connection then keeps its read buffer).
func newReadWaiter(nc net.Conn) *readWaiter {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &readWaiter{nc: nc, rc: rc}
	w.fn = w.readFD
	return w
}

// wait returns once the socket had something to read, or the deadline's or
// the closed connection's error.
func (w *readWaiter) wait() error {
	if w.off < len(w.chunk) {
		return nil
	}
	return w.rc.Read(w.fn)
}

// readFD reports false (wait) only when the socket has nothing to read
// yet. A peer's close or an error report true and are left for the read
// that follows, which returns them as the net package does.
func (w *readWaiter) readFD(fd uintptr) bool {
	p := chunkPool.Get().(*[]byte)
	for {
		n, err := syscall.Read(int(fd), *p)
		if err == syscall.EINTR {
			continue
		}
		if n > 0 {
			w.chunk, w.off, w.held = (*p)[:n], 0, p
			return true
		}
		chunkPool.Put(p)
		return err != syscall.EAGAIN
	}
}

// Read serves what the last wait read, then reads the socket.
func (w *readWaiter) Read(b []byte) (int, error) {
	if w.off < len(w.chunk) {
		n := copy(b, w.chunk[w.off:])
		w.off += n
		if w.off == len(w.chunk) {
			// The pointer the pool gave is given back: a new one would be
			// an allocation per read.
			chunkPool.Put(w.held)
			w.chunk, w.off, w.held = nil, 0, nil
		}
		return n, nil
	}
	if w.nowOnly {
		return w.readNow(b)
	}
	return w.nc.Read(b)
}

// readNowOnly switches Read to reads that do not wait; it reports true.
func (w *readWaiter) readNowOnly() bool {
	w.nowOnly = true
	return true
}

// readNow reads what the socket holds, without waiting for more.
func (w *readWaiter) readNow(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := w.rc.Read(func(fd uintptr) bool {
		for {
			n, rerr = syscall.Read(int(fd), b)
			if rerr != syscall.EINTR {
				return true // never wait
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr == syscall.EAGAIN:
		return 0, errNothingHeld
	case rerr != nil:
		return 0, os.NewSyscallError("read", rerr)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// unread returns the last wait's bytes not served yet.
func (w *readWaiter) unread() []byte { return w.chunk[w.off:] }

// frameHeld reports whether unread starts with a whole frame (see
// frameWhole).
func (w *readWaiter) frameHeld() bool {
	b := w.unread()
	return frameWhole(b[:min(len(b), lengthFieldSize)], len(b))
}

// consume marks the first n unread bytes served, giving the chunk back to
// its pool once all are.
func (w *readWaiter) consume(n int) {
	w.off += n
	if w.off == len(w.chunk) {
		chunkPool.Put(w.held)
		w.chunk, w.off, w.held = nil, 0, nil
	}
}

// pending reports whether the last wait's bytes are not all served.
func (w *readWaiter) pending() bool { return w.off < len(w.chunk) }
