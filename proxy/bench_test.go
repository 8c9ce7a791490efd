package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

const (
	benchConns       = 64
	benchReqsPerConn = 400
)

// benchMix is the request mix of one connection, cycled: opaque admin
// calls of a few sizes and GET_METADATA, all answered by the fake.
var benchMix = []struct {
	key  messages.Key
	body []byte
}{
	{messages.KeyListDatabases, make([]byte, 64)},
	{messages.KeyGetTableInfo, make([]byte, 512)},
	{messages.KeyDatabaseExists, make([]byte, 16)},
	{messages.KeyGetMetadata, nil},
}

type benchResult struct {
	reqs      int
	elapsed   time.Duration
	latencies []time.Duration
}

func (r benchResult) rate() float64 { return float64(r.reqs) / r.elapsed.Seconds() }

func (r benchResult) pct(p float64) time.Duration {
	return r.latencies[int(p*float64(len(r.latencies)-1))]
}

// runLoad opens benchConns connections to addr and sends benchReqsPerConn
// requests on each, depth at a time, all connections at once.
func runLoad(b *testing.B, addr string, depth int) benchResult {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clients := make([]*wire.Client, benchConns)
	for i := range clients {
		c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Handshake(ctx); err != nil {
			b.Fatal(err)
		}
		clients[i] = c
	}
	lat := make([][]time.Duration, benchConns*depth)
	errs := make(chan error, benchConns*depth)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range benchConns * depth {
		c := clients[w%benchConns]
		i := w
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := make([]time.Duration, 0, benchReqsPerConn/depth)
			for n := range benchReqsPerConn / depth {
				m := benchMix[(i+n)%len(benchMix)]
				t0 := time.Now()
				r, err := c.CallRaw(ctx, m.key, 0, m.body)
				if err != nil || r.Type != wire.ResponseSuccess {
					errs <- fmt.Errorf("api key %d: %v %v", m.key, err, r.Err())
					return
				}
				l = append(l, time.Since(t0))
			}
			lat[i] = l
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	res := benchResult{reqs: benchConns * depth * (benchReqsPerConn / depth), elapsed: elapsed}
	for _, l := range lat {
		res.latencies = append(res.latencies, l...)
	}
	slices.Sort(res.latencies)
	return res
}

// BenchmarkForwardingOverhead sends the same request mix at 64 concurrent
// connections, one request in flight on each, straight to a fake
// coordinator, through a plain TCP relay and through the proxy, in
// alternating rounds within one run, and reports proxied/relay and
// proxied/direct ratios of throughput and latency. The relay copies bytes
// both ways without looking at frames: the best any forwarding proxy can
// do, and so the limit the proxy is measured against. Run it with:
//
//	go test ./proxy -run '^$' -bench ForwardingOverhead -benchtime 5x
func BenchmarkForwardingOverhead(b *testing.B) { benchForwarding(b, 1) }

// BenchmarkForwardingOverheadPipelined is the same with 8 requests in
// flight on each connection, as a pipelining Fluss client sends them.
func BenchmarkForwardingOverheadPipelined(b *testing.B) { benchForwarding(b, 8) }

func benchForwarding(b *testing.B, depth int) {
	fake, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	ln := listener(b)
	serveProxy(b, ln, proxy.Config{Upstream: proxy.StaticUpstream(fake.Addr()), Logger: hclog.NewNullLogger()}, wire.ServerConfig{})

	relay := startRelay(b, fake.Addr())

	var direct, relayed, proxied benchResult
	merge := func(into *benchResult, r benchResult) {
		into.reqs += r.reqs
		into.elapsed += r.elapsed
		into.latencies = append(into.latencies, r.latencies...)
	}
	runLoad(b, fake.Addr(), depth) // warm-up, not counted
	runLoad(b, ln.Addr().String(), depth)
	runLoad(b, relay, depth)
	b.ResetTimer()
	for round := range b.N {
		// Rotate the order so that no mode always runs first.
		modes := []func(){
			func() { merge(&direct, runLoad(b, fake.Addr(), depth)) },
			func() { merge(&relayed, runLoad(b, relay, depth)) },
			func() { merge(&proxied, runLoad(b, ln.Addr().String(), depth)) },
		}
		for k := range modes {
			modes[(k+round)%len(modes)]()
		}
	}
	b.StopTimer()
	slices.Sort(direct.latencies)
	slices.Sort(relayed.latencies)
	slices.Sort(proxied.latencies)
	ratio := proxied.rate() / direct.rate()
	b.ReportMetric(direct.rate(), "direct-req/s")
	b.ReportMetric(relayed.rate(), "relay-req/s")
	b.ReportMetric(proxied.rate(), "proxied-req/s")
	b.ReportMetric(ratio, "throughput-ratio")
	b.ReportMetric(float64(proxied.pct(0.5))/float64(direct.pct(0.5)), "p50-ratio")
	b.ReportMetric(float64(proxied.pct(0.99))/float64(direct.pct(0.99)), "p99-ratio")
	b.ReportMetric(proxied.rate()/relayed.rate(), "relay-throughput-ratio")
	b.ReportMetric(float64(proxied.pct(0.5))/float64(relayed.pct(0.5)), "relay-p50-ratio")
	b.ReportMetric(float64(proxied.pct(0.99))/float64(relayed.pct(0.99)), "relay-p99-ratio")
	b.ReportMetric(relayed.rate()/direct.rate(), "relay/direct")
	b.Logf("%d connections x %d in flight, %d requests per mode, %d CPUs (shared machine; ratios within this run)",
		benchConns, depth, direct.reqs, runtime.NumCPU())
	for _, m := range []struct {
		name string
		r    benchResult
	}{{"direct", direct}, {"relay", relayed}, {"proxied", proxied}} {
		b.Logf("%-8s %8.0f req/s  p50 %-10v p99 %v", m.name, m.r.rate(), m.r.pct(0.5), m.r.pct(0.99))
	}
	b.Logf("proxied/relay: throughput %.2f, p50 %.2f, p99 %.2f; proxied/direct: throughput %.2f; relay/direct %.2f",
		proxied.rate()/relayed.rate(), float64(proxied.pct(0.5))/float64(relayed.pct(0.5)),
		float64(proxied.pct(0.99))/float64(relayed.pct(0.99)), ratio, relayed.rate()/direct.rate())
}

// startRelay listens on loopback and relays every connection to target,
// copying bytes both ways without parsing frames.
func startRelay(tb testing.TB, target string) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	tb.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			wg.Add(2)
			pipe := func(dst, src net.Conn) {
				defer wg.Done()
				io.Copy(dst, src)
				// Half-close so the other direction ends as well.
				dst.Close()
				src.Close()
			}
			go pipe(out, in)
			go pipe(in, out)
		}
	}()
	return ln.Addr().String()
}

// BenchmarkForwardingResends measures what keeping requests for a resend
// after NOT_COORDINATOR_LEADER costs the fast path: the same request mix
// at 64 connections, one request in flight on each, through two proxies
// in front of one fake coordinator, one with resending on (the default)
// and one with it off (MaxResends NoResends), in alternating rounds within
// one run. It reports on/off ratios of throughput and latency. Run it
// with:
//
//	go test ./proxy -run '^$' -bench ForwardingResends -benchtime 5x -count 6
func BenchmarkForwardingResends(b *testing.B) { benchResends(b, 1) }

// BenchmarkForwardingResendsPipelined is the same with 8 requests in
// flight on each connection.
func BenchmarkForwardingResendsPipelined(b *testing.B) { benchResends(b, 8) }

func benchResends(b *testing.B, depth int) {
	fake, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	lnOn, lnOff := listener(b), listener(b)
	serveProxy(b, lnOn, proxy.Config{Upstream: proxy.StaticUpstream(fake.Addr()), Logger: hclog.NewNullLogger()}, wire.ServerConfig{})
	serveProxy(b, lnOff, proxy.Config{Upstream: proxy.StaticUpstream(fake.Addr()), Logger: hclog.NewNullLogger(),
		MaxResends: proxy.NoResends}, wire.ServerConfig{})
	on, off := lnOn.Addr().String(), lnOff.Addr().String()

	var withResends, without benchResult
	merge := func(into *benchResult, r benchResult) {
		into.reqs += r.reqs
		into.elapsed += r.elapsed
		into.latencies = append(into.latencies, r.latencies...)
	}
	runLoad(b, on, depth) // warm-up, not counted
	runLoad(b, off, depth)
	b.ResetTimer()
	for round := range b.N {
		// Alternate which mode runs first.
		if round%2 == 0 {
			merge(&withResends, runLoad(b, on, depth))
			merge(&without, runLoad(b, off, depth))
		} else {
			merge(&without, runLoad(b, off, depth))
			merge(&withResends, runLoad(b, on, depth))
		}
	}
	b.StopTimer()
	slices.Sort(withResends.latencies)
	slices.Sort(without.latencies)
	b.ReportMetric(withResends.rate(), "resends-on-req/s")
	b.ReportMetric(without.rate(), "resends-off-req/s")
	b.ReportMetric(withResends.rate()/without.rate(), "on/off-throughput")
	b.ReportMetric(float64(withResends.pct(0.5))/float64(without.pct(0.5)), "on/off-p50")
	b.ReportMetric(float64(withResends.pct(0.99))/float64(without.pct(0.99)), "on/off-p99")
	b.Logf("%d connections x %d in flight, %d requests per mode, %d CPUs (shared machine; ratios within this run)",
		benchConns, depth, without.reqs, runtime.NumCPU())
}
