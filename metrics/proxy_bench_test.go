package metrics

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func proxyServer(b *testing.B, upstream string, obs wire.Observer) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	p, err := proxy.New(proxy.Config{Upstream: proxy.StaticUpstream(upstream), Local: wire.NewMux(),
		SelfAddrs: []string{ln.Addr().String()}, Logger: hclog.NewNullLogger()})
	if err != nil {
		b.Fatal(err)
	}
	cfg := p.ServerConfig(wire.ServerConfig{Logger: hclog.NewNullLogger()})
	if obs != nil {
		cfg.Observer = obs
	}
	srv := wire.NewServer(cfg)
	go srv.Serve(context.Background(), ln)
	b.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func forwardRound(b *testing.B, c *wire.Client, n int) time.Duration {
	ctx := context.Background()
	body := make([]byte, 64)
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/16; i++ {
				if r, err := c.CallRaw(ctx, messages.KeyListDatabases, 0, body); err != nil || r.Type != wire.ResponseSuccess {
					b.Error(err, r.Type)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkProxyReporterOverhead is BenchmarkReporterOverhead for requests
// the proxy forwards on its fast path, where the reporter adds a per
// connection map of requests in flight:
//
//	go test ./metrics -run '^$' -bench ProxyReporterOverhead -benchtime 5x
func BenchmarkProxyReporterOverhead(b *testing.B) {
	fake, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
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
		if _, err := c.Handshake(context.Background()); err != nil {
			b.Fatal(err)
		}
		return c
	}
	plain, instrumented := dial(proxyServer(b, fake.Addr(), nil)), dial(proxyServer(b, fake.Addr(), m))
	const n = 20000
	forwardRound(b, plain, n) // warm-up
	forwardRound(b, instrumented, n)
	var tPlain, tInstr time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tPlain += forwardRound(b, plain, n)
		tInstr += forwardRound(b, instrumented, n)
	}
	b.ReportMetric(float64(tPlain.Nanoseconds())/float64(b.N*n), "plain-ns/call")
	b.ReportMetric(float64(tInstr.Nanoseconds())/float64(b.N*n), "reporter-ns/call")
	b.ReportMetric(float64(tInstr)/float64(tPlain), "reporter/plain")
}
