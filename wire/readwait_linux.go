//go:build linux

package wire

import (
	"net"
	"syscall"
	"unsafe"
)

// readWaiter waits until a socket has something to read (bytes, the peer's
// close or an error) without reading it, so that an idle connection needs
// no read buffer: the buffer is taken from a pool once bytes are there.
// The wait goes through the runtime's network poller and honours the read
// deadline, like a read.
type readWaiter struct {
	rc syscall.RawConn
	fn func(fd uintptr) bool
}

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
	return &readWaiter{rc: rc, fn: readable}
}

// wait returns once the socket is readable, or the deadline's or the
// closed connection's error.
func (w *readWaiter) wait() error { return w.rc.Read(w.fn) }

// readable peeks at one byte without taking it; it reports false (wait)
// only when the socket has nothing to read yet. A peer's close or an error
// report true and are found by the read that follows.
func readable(fd uintptr) bool {
	var b byte
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b)), 1,
			syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		return errno != syscall.EAGAIN
	}
}
