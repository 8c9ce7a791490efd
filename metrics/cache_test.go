package metrics

import (
	"time"

	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
)

func TestSnapshotCacheMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := New(reg, buildinfo.Info{})
	if err != nil {
		t.Fatal(err)
	}
	scrapes := 0
	stats := snapcache.Stats{Hits: 7, Misses: 3, Shared: 2, Evictions: 1, Invalidations: 4, Drops: 5, KnownAbsent: 6,
		Entries: 8, Bytes: 900, Absences: 2, Files: 4, Watching: true, IndexedIDs: -1, IndexListTime: 1500 * time.Millisecond}
	if err := m.WatchSnapshotCache(func() snapcache.Stats { scrapes++; return stats }); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchSnapshotCache(func() snapcache.Stats { return stats }); err == nil {
		t.Fatal("the cache's metrics registered twice must fail")
	}
	want := map[string]string{
		"hitsTotal": "7", "missesTotal": "3", "sharedReadsTotal": "2", "evictionsTotal": "1",
		"invalidationsTotal": "4", "dropsTotal": "5", "knownAbsentTotal": "6",
		"entries": "8", "bytes": "900", "absences": "2", "files": "4", "watching": "1", "indexedProducerIds": "-1", "indexListSeconds": "1.5",
	}
	var names []string
	var text strings.Builder
	for _, name := range []string{"hitsTotal", "missesTotal", "sharedReadsTotal", "evictionsTotal", "invalidationsTotal", "dropsTotal", "knownAbsentTotal"} {
		full := Prefix + "snapshotCache_" + name
		names = append(names, full)
		text.WriteString("# HELP " + full + " h\n# TYPE " + full + " counter\n" + full + " " + want[name] + "\n")
	}
	for _, name := range []string{"entries", "bytes", "absences", "files", "watching", "indexedProducerIds", "indexListSeconds"} {
		full := Prefix + "snapshotCache_" + name
		names = append(names, full)
		text.WriteString("# HELP " + full + " h\n# TYPE " + full + " gauge\n" + full + " " + want[name] + "\n")
	}
	// Compare values and types, not help texts.
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	h := "h"
	for _, f := range fams {
		f.Help = &h
	}
	if err := testutil.GatherAndCompare(prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return fams, nil }),
		strings.NewReader(text.String()), names...); err != nil {
		t.Fatal(err)
	}
	if scrapes != 1 {
		t.Fatalf("the cache's Stats were read %d times for one scrape, want once", scrapes)
	}
}
