//go:build !linux

package wire

import "net"

// readWaiter is not available here: every connection keeps its read
// buffer, and waits for a request by reading into it.
type readWaiter struct{}

func newReadWaiter(net.Conn) *readWaiter { return nil }

func (*readWaiter) wait() error { return nil }
