package wire

import (
	"context"
	"net"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// BenchmarkRoundTrip measures pipelined echo calls over loopback from many
// goroutines sharing one client connection.
func BenchmarkRoundTrip(b *testing.B) {
	_, addr := startServer(b, ServerConfig{Logger: hclog.NewNullLogger()}, newControl())
	c := dialClient(b, addr)
	ctx := context.Background()
	req := echoReq("fluss-benchmark")
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var resp messages.ApiVersionsRequest
		for pb.Next() {
			if err := c.Call(ctx, keyEcho, 0, req, &resp); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkNewServerConn measures what accepting a connection allocates
// before it reads anything: its state, session, reader and writer (over
// one loopback TCP socket, so that the raw read and write paths are set
// up as for a real client).
func BenchmarkNewServerConn(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- nc
	}()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	nc, ok := <-accepted
	if !ok {
		b.Fatal("accept failed")
	}
	defer nc.Close()
	srv := NewServer(ServerConfig{Mux: NewMux(), Logger: hclog.NewNullLogger()})
	b.ReportAllocs()
	for b.Loop() {
		c := newServerConn(srv, nc)
		c.cancel()
	}
}
