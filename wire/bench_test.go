package wire

import (
	"context"
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
