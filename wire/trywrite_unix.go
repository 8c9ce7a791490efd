//go:build unix

package wire

import (
	"errors"
	"net"
	"syscall"
)

// rawConnOf returns the connection's raw socket when non-blocking writes can
// be tried on it, or nil.
func rawConnOf(nc net.Conn) syscall.RawConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// rawWriter tries non-blocking writes on one socket. Its state lives in
// the struct, and the callback handed to RawConn.Write is bound once, so a
// write allocates nothing. One write at a time (the socket writer's busy
// flag guarantees it).
type rawWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool
	b   []byte
	n   int
	err error
}

// newRawWriter returns a writer through rc, or nil when rc is nil.
func newRawWriter(rc syscall.RawConn) *rawWriter {
	if rc == nil {
		return nil
	}
	w := &rawWriter{rc: rc}
	w.fn = w.writeFD
	return w
}

// tryWrite writes as much of b as the socket takes right now, without
// waiting for it to become writable. It returns how many bytes were written;
// a short count with a nil error means the socket is full.
func (w *rawWriter) tryWrite(b []byte) (int, error) {
	w.b, w.n, w.err = b, 0, nil
	err := w.rc.Write(w.fn)
	n, werr := w.n, w.err
	w.b, w.err = nil, nil
	if err != nil {
		return n, err
	}
	return n, werr
}

func (w *rawWriter) writeFD(fd uintptr) bool {
	for w.n < len(w.b) {
		m, err := syscall.Write(int(fd), w.b[w.n:])
		if m > 0 {
			w.n += m
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.EAGAIN) {
			return true
		}
		if err != nil {
			w.err = err
			return true
		}
		if m == 0 {
			return true
		}
	}
	return true
}
