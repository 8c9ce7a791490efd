package bench

import (
	"context"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// BenchmarkGet is one GET of a two-table snapshot through the whole
// sidecar over loopback, 8 goroutines per CPU each with its own
// connection, with the snapshot cache (cached) and without (uncached). Its
// allocations per op (-benchmem) count the load generator's too: the
// do-nothing server (which allocates nothing per request) shows the
// client's share. Profile the server side with
//
//	go test ./tests/bench -run '^$' -bench 'Get$/cached' -benchmem -cpuprofile cpu.out -memprofile mem.out
func BenchmarkGet(b *testing.B) {
	e := startStormEnv(b, 0, true, false)
	for _, tc := range []struct {
		name string
		addr string
	}{{"cached", e.sidecar}, {"uncached", e.nocache}, {"do-nothing", e.nothing}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetParallelism(parallelism)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				c, err := wire.Dial(ctx, tc.addr, wire.ClientOptions{})
				if err != nil {
					b.Error(err)
					return
				}
				defer c.Close()
				for pb.Next() {
					r, err := c.CallRaw(ctx, messages.KeyGetProducerOffsets, 0, e.bodies[0])
					if err != nil || r.Type != wire.ResponseSuccess {
						b.Errorf("get: %v %v", err, r.Err())
						return
					}
				}
			})
		})
	}
}
