//go:build !linux

package wire

import (
	"io"
	"net"
)

// readWaiter is not available here: every connection keeps its read
// buffer, and waits for a request by reading into it.
type readWaiter struct{}

func newReadWaiter(net.Conn) *readWaiter { return nil }

func (*readWaiter) wait() error { return nil }

func (*readWaiter) Read([]byte) (int, error) { return 0, io.EOF }

func (*readWaiter) pending() bool { return false }

func (*readWaiter) readNowOnly() bool { return false }

func (*readWaiter) unread() []byte { return nil }

func (*readWaiter) frameHeld() bool { return false }

func (*readWaiter) consume(int) {}
