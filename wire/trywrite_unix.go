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

// tryWrite writes as much of b as the socket takes right now, without
// waiting for it to become writable. It returns how many bytes were written;
// a short count with a nil error means the socket is full.
func tryWrite(rc syscall.RawConn, b []byte) (int, error) {
	var n int
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, err := syscall.Write(int(fd), b[n:])
			if m > 0 {
				n += m
			}
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if errors.Is(err, syscall.EAGAIN) {
				return true
			}
			if err != nil {
				werr = err
				return true
			}
			if m == 0 {
				return true
			}
		}
		return true
	})
	if err != nil {
		return n, err
	}
	return n, werr
}
