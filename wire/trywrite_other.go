//go:build !unix

package wire

import (
	"net"
	"syscall"
)

// rawConnOf returns nil: without non-blocking writes every write goes
// through the socket writer's goroutine.
func rawConnOf(net.Conn) syscall.RawConn { return nil }

type rawWriter struct{}

func newRawWriter(syscall.RawConn) *rawWriter { return nil }

func (*rawWriter) tryWrite([]byte) (int, error) { return 0, nil }
