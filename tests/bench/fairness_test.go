package bench

import (
	"bufio"
	"context"
	"net"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// fairnessGets is how many GETs the well-behaved client times in each
// phase.
const fairnessGets = 1000

// BenchmarkFairness measures a well-behaved client's GET latency on one
// connection, first with the server otherwise idle (the baseline), then
// while another connection has pipelined 10,000 GETs. It reports both p99s
// and their ratio (p99-ratio); the goal is at most 5. Run with
// -benchtime=1x: each iteration is a whole measurement.
func BenchmarkFairness(b *testing.B) {
	a := startApp(b)
	ctx := context.Background()
	good, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer good.Close()
	if _, err := good.Handshake(ctx); err != nil {
		b.Fatal(err)
	}
	reg := &messages.RegisterProducerOffsetsRequest{ProducerId: proto.String("fair"),
		TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(1), BucketOffsets: []*messages.PbBucketOffset{
			{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(5)}}}}}
	if err := good.Call(ctx, messages.KeyRegisterProducerOffsets, 0, reg, &messages.RegisterProducerOffsetsResponse{}); err != nil {
		b.Fatal(err)
	}
	get := &messages.GetProducerOffsetsRequest{ProducerId: proto.String("fair")}
	// measure times GETs until stop is closed (or fairnessGets of them
	// when stop is nil).
	measure := func(stop <-chan struct{}) []time.Duration {
		lat := make([]time.Duration, 0, fairnessGets)
		for {
			if stop == nil && len(lat) == fairnessGets {
				break
			}
			if stop != nil {
				select {
				case <-stop:
					slices.Sort(lat)
					return lat
				default:
				}
			}
			start := time.Now()
			if err := good.Call(ctx, messages.KeyGetProducerOffsets, 0, get, &messages.GetProducerOffsetsResponse{}); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		slices.Sort(lat)
		return lat
	}
	body, _ := proto.Marshal(get)
	var idleP99, busyP99, idleP50, busyP50 time.Duration
	var busyN int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		idle := measure(nil)

		// The flood: 10,000 GETs written back to back on one connection,
		// its answers read (and dropped) as they come.
		nc, err := net.Dial("tcp", a.Addr())
		if err != nil {
			b.Fatal(err)
		}
		var frames []byte
		for id := int32(1); id <= 10000; id++ {
			frames = wire.AppendRequest(frames, wire.RequestHeader{APIKey: messages.KeyGetProducerOffsets, RequestID: id}, body)
		}
		readDone := make(chan int, 1)
		stop := make(chan struct{})
		go func() {
			br := bufio.NewReader(nc)
			n := 0
			for ; n < 10000; n++ {
				if _, err := wire.ReadFrame(br, 0); err != nil {
					break
				}
			}
			close(stop)
			readDone <- n
		}()
		go nc.Write(frames)
		// Time GETs for as long as the flood is being answered.
		busy := measure(stop)
		if n := <-readDone; n != 10000 {
			b.Fatalf("flood got %d answers", n)
		}
		if len(busy) < 5 {
			b.Fatalf("only %d GETs timed during the flood", len(busy))
		}
		nc.Close()
		idleP50, idleP99 = idle[len(idle)/2], idle[len(idle)*99/100]
		busyP50, busyP99 = busy[len(busy)/2], busy[len(busy)*99/100]
		busyN = len(busy)
	}
	b.StopTimer()
	b.ReportMetric(float64(idleP50.Microseconds()), "idle-p50-us")
	b.ReportMetric(float64(idleP99.Microseconds()), "idle-p99-us")
	b.ReportMetric(float64(busyP50.Microseconds()), "busy-p50-us")
	b.ReportMetric(float64(busyP99.Microseconds()), "busy-p99-us")
	b.ReportMetric(float64(busyP99)/float64(idleP99), "p99-ratio")
	b.ReportMetric(float64(busyN), "busy-gets")
}
