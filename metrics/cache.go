package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
)

// cacheCollector exports the snapshot cache's counters and size, read once
// per scrape.
type cacheCollector struct {
	stats func() snapcache.Stats
	descs []cacheDesc
}

type cacheDesc struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	value func(snapcache.Stats) float64
}

// WatchSnapshotCache exports stats, the snapshot cache's Stats, as the
// snapshotCache_* metrics. Calling it twice is an error.
func (m *Metrics) WatchSnapshotCache(stats func() snapcache.Stats) error {
	d := func(name, help string, kind prometheus.ValueType, value func(snapcache.Stats) float64) cacheDesc {
		return cacheDesc{prometheus.NewDesc(Prefix+"snapshotCache_"+name, help, nil, nil), kind, value}
	}
	c := &cacheCollector{stats: stats, descs: []cacheDesc{
		d("hitsTotal", "Snapshot and offsets file reads answered from memory.", prometheus.CounterValue,
			func(s snapcache.Stats) float64 { return float64(s.Hits) }),
		d("missesTotal", "Snapshot and offsets file reads sent to ZooKeeper or remote storage.", prometheus.CounterValue,
			func(s snapcache.Stats) float64 { return float64(s.Misses) }),
		d("sharedReadsTotal", "Reads that waited for the same read already in flight instead of sending their own.", prometheus.CounterValue,
			func(s snapcache.Stats) float64 { return float64(s.Shared) }),
		d("evictionsTotal", "Entries removed to stay within the cache's bounds.", prometheus.CounterValue,
			func(s snapcache.Stats) float64 { return float64(s.Evictions) }),
		d("invalidationsTotal", "Entries removed because the snapshot changed (a ZooKeeper notification or this sidecar's write) or the file was deleted.", prometheus.CounterValue,
			func(s snapcache.Stats) float64 { return float64(s.Invalidations) }),
		d("dropsTotal", "Times every snapshot entry was dropped: the connection or session was lost (the watch could have missed changes).", prometheus.CounterValue,
			func(s snapcache.Stats) float64 { return float64(s.Drops) }),
		d("knownAbsentTotal", "Registers of a producer with no snapshot that skipped their ZooKeeper read, told by the index of producer ids.", prometheus.CounterValue,
			func(s snapcache.Stats) float64 { return float64(s.KnownAbsent) }),
		d("entries", "Entries cached now (snapshots and offsets files).", prometheus.GaugeValue,
			func(s snapcache.Stats) float64 { return float64(s.Entries) }),
		d("bytes", "Estimated memory of the entries cached now.", prometheus.GaugeValue,
			func(s snapcache.Stats) float64 { return float64(s.Bytes) }),
		d("absences", "Entries cached now that record a producer with no snapshot (bounded on their own).", prometheus.GaugeValue,
			func(s snapcache.Stats) float64 { return float64(s.Absences) }),
		d("files", "Offsets files cached now, each belonging to a live snapshot or one this sidecar is writing.", prometheus.GaugeValue,
			func(s snapcache.Stats) float64 { return float64(s.Files) }),
		d("watching", "1 while the ZooKeeper watch is set and snapshots are cached, else 0.", prometheus.GaugeValue,
			func(s snapcache.Stats) float64 { return Bool(s.Watching) }),
		d("indexedProducerIds", "Producer ids in the index, -1 when there is none.", prometheus.GaugeValue,
			func(s snapcache.Stats) float64 { return float64(s.IndexedIDs) }),
		d("indexListSeconds", "How long the last listing of producer ids that installed the index took, 0 before one.", prometheus.GaugeValue,
			func(s snapcache.Stats) float64 { return s.IndexListTime.Seconds() }),
	}}
	if err := m.reg.Register(c); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

func (c *cacheCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d.desc
	}
}

func (c *cacheCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, d := range c.descs {
		ch <- prometheus.MustNewConstMetric(d.desc, d.kind, d.value(s))
	}
}

// Bool is a gauge's value for b: 1 or 0.
func Bool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
