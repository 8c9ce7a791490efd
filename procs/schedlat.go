package procs

import (
	"runtime/metrics"
	"time"
)

// schedLatencyMetric is the runtime's histogram of how long goroutines
// waited, runnable, before they ran.
const schedLatencyMetric = "/sched/latencies:seconds"

// schedWaits reads the runtime's scheduling latencies and reports, for the
// events since its last call, the share that waited at least long.
type schedWaits struct {
	sample []metrics.Sample
	prev   []uint64
}

func newSchedWaits() *schedWaits {
	return &schedWaits{sample: []metrics.Sample{{Name: schedLatencyMetric}}}
}

// share returns the share of scheduling events since the last call that
// waited at least long, and false when the runtime does not keep the
// histogram.
func (w *schedWaits) share(long time.Duration) (float64, bool) {
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0, false
	}
	h := w.sample[0].Value.Float64Histogram()
	if len(w.prev) != len(h.Counts) {
		w.prev = make([]uint64, len(h.Counts))
		copy(w.prev, h.Counts)
		return 0, true
	}
	var all, slow uint64
	for i, c := range h.Counts {
		d := c - w.prev[i]
		w.prev[i] = c
		all += d
		// Bucket i holds [Buckets[i], Buckets[i+1]).
		if h.Buckets[i] >= long.Seconds() {
			slow += d
		}
	}
	if all == 0 {
		return 0, true
	}
	return float64(slow) / float64(all), true
}
