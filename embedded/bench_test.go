package embedded_test

import (
	"context"
	"net"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// BenchmarkStartToAPIVersions measures, in process, starting a server,
// connecting, answering API_VERSIONS and closing it ("embedded"), against
// a baseline of binding a loopback listener and connecting to it
// ("listen-baseline"). Compare the two as a ratio; the process start-up of
// the binary is measured by scripts/embedded-startup.sh.
func BenchmarkStartToAPIVersions(b *testing.B) {
	ctx := context.Background()
	b.Run("embedded", func(b *testing.B) {
		for b.Loop() {
			s, err := embedded.Start(ctx, embedded.Config{})
			if err != nil {
				b.Fatal(err)
			}
			c, err := wire.Dial(ctx, s.Addr(), wire.ClientOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Handshake(ctx); err != nil {
				b.Fatal(err)
			}
			c.Close()
			s.Close()
		}
	})
	b.Run("listen-baseline", func(b *testing.B) {
		for b.Loop() {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				if nc, err := ln.Accept(); err == nil {
					nc.Write([]byte{0})
					nc.Close()
				}
			}()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			nc.Read(make([]byte, 1))
			nc.Close()
			<-done
			ln.Close()
		}
	})
}
