package metrics

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func echoServer(b *testing.B, obs wire.Observer) string {
	mux := wire.NewMux(wire.API{Key: 1054, Name: "GET_PRODUCER_OFFSETS",
		NewRequest: func() proto.Message { return &messages.GetProducerOffsetsRequest{} },
		Handle: func(_ context.Context, _ *wire.Session, req *wire.Request) (proto.Message, error) {
			return &messages.GetProducerOffsetsResponse{}, nil
		}})
	cfg := wire.ServerConfig{Mux: mux, Logger: hclog.NewNullLogger()}
	if obs != nil {
		cfg.Observer = obs
	}
	srv := wire.NewServer(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(context.Background(), ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// round sends n calls from 16 goroutines sharing one connection.
func round(b *testing.B, c *wire.Client, n int) time.Duration {
	ctx := context.Background()
	req := &messages.GetProducerOffsetsRequest{ProducerId: proto.String("bench")}
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var resp messages.GetProducerOffsetsResponse
			for i := 0; i < n/16; i++ {
				if err := c.Call(ctx, 1054, 0, req, &resp); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkReporterOverhead serves the same pipelined calls from a server
// without an observer and one reporting to Prometheus, in alternating
// rounds within one run, and reports the instrumented/plain time ratio:
//
//	go test ./metrics -run '^$' -bench ReporterOverhead -benchtime 5x
func BenchmarkReporterOverhead(b *testing.B) {
	m, err := New(prometheus.NewRegistry(), buildinfo.Get())
	if err != nil {
		b.Fatal(err)
	}
	dial := func(addr string) *wire.Client {
		c, err := wire.Dial(context.Background(), addr, wire.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		return c
	}
	plain, instrumented := dial(echoServer(b, nil)), dial(echoServer(b, m))
	const n = 20000
	round(b, plain, n) // warm-up
	round(b, instrumented, n)
	var tPlain, tInstr time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tPlain += round(b, plain, n)
		tInstr += round(b, instrumented, n)
	}
	b.ReportMetric(float64(tPlain.Nanoseconds())/float64(b.N*n), "plain-ns/call")
	b.ReportMetric(float64(tInstr.Nanoseconds())/float64(b.N*n), "reporter-ns/call")
	b.ReportMetric(float64(tInstr)/float64(tPlain), "reporter/plain")
}

// BenchmarkObserverCalls is the reporter's own work per request: one
// RequestStarted and one RequestDone, from parallel goroutines.
func BenchmarkObserverCalls(b *testing.B) {
	m, err := New(prometheus.NewRegistry(), buildinfo.Get())
	if err != nil {
		b.Fatal(err)
	}
	h := wire.RequestHeader{APIKey: 1054, RequestID: 1}
	d := wire.RequestDone{Header: h, API: "GET_PRODUCER_OFFSETS", Local: true, Size: 40, Duration: time.Millisecond}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.RequestStarted("FLUSS", h, 40)
			m.RequestDone("FLUSS", d)
		}
	})
}
