package admin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// scaleSnapshots is how many snapshots TestScale plants; override with
// ADMIN_SCALE_SNAPSHOTS for a bigger run.
func scaleSnapshots(t *testing.T) int {
	if v := os.Getenv("ADMIN_SCALE_SNAPSHOTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	return 10_000
}

// peakHeap samples the live heap while fn runs and returns the largest
// value seen, with fn's wall time.
func peakHeap(fn func()) (peak uint64, took time.Duration) {
	runtime.GC()
	var max atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > max.Load() {
				max.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	fn()
	took = time.Since(start)
	close(stop)
	<-done
	return max.Load(), took
}

// TestScale runs list, fsck and export end to end over 10,000 snapshots in
// real ZooKeeper (one table of three buckets each, partitioned for odd
// snapshots: 10,000 offsets files and 30,000 export rows)
// and logs each command's wall time and peak live heap (docs/admin.md).
// It asserts results, not speed.
func TestScale(t *testing.T) {
	needReaders(t)
	n := scaleSnapshots(t)
	e := newEnv(t)
	expiredCount := 0
	ctx := t.Context()
	plantStart := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 1)
	ids := make(chan int)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range ids {
				if err := plantScale(ctx, e, i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		if i%4 == 0 {
			expiredCount++
		}
		ids <- i
	}
	close(ids)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
	t.Logf("planted %d snapshots in %v", n, time.Since(plantStart).Round(time.Millisecond))

	var listed, expired int
	heap, took := peakHeap(func() {
		if err := e.admin.List(t.Context(), ListOptions{}, func(le ListEntry) error {
			listed++
			if le.State == StateExpired {
				expired++
			}
			if le.Buckets != 3 || len(le.Errors) != 0 {
				return fmt.Errorf("entry %+v", le)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
	if listed != n || expired != expiredCount {
		t.Fatalf("listed %d (%d expired), want %d (%d)", listed, expired, n, expiredCount)
	}
	t.Logf("list:   %d snapshots in %v, peak heap %.1f MiB", n, took.Round(time.Millisecond), float64(heap)/(1<<20))

	var rep FsckReport
	heap, took = peakHeap(func() {
		var err error
		rep, err = e.admin.Fsck(t.Context(), FsckOptions{}, func(f Finding) error { return fmt.Errorf("finding %+v", f) }, nil)
		if err != nil {
			t.Fatal(err)
		}
	})
	if !rep.Clean() || rep.Snapshots != n || rep.Files != n {
		t.Fatalf("fsck: %+v", rep)
	}
	t.Logf("fsck:   %d snapshots, %d files in %v, peak heap %.1f MiB", n, rep.Files, took.Round(time.Millisecond), float64(heap)/(1<<20))

	for _, format := range Formats {
		path := filepath.Join(t.TempDir(), "scale."+format)
		var er ExportReport
		heap, took = peakHeap(func() {
			var err error
			er, err = e.admin.ExportFile(t.Context(), format, path, func(s Skip) error { return fmt.Errorf("skip %+v", s) })
			if err != nil {
				t.Fatal(err)
			}
		})
		st, _ := os.Stat(path)
		t.Logf("export %-7s %d rows in %v, peak heap %.1f MiB, %d bytes", format, er.Rows, took.Round(time.Millisecond), float64(heap)/(1<<20), st.Size())
		_, rows := readBack(t, format, path)
		if er.Rows != 3*n || len(rows) != 3*n {
			t.Fatalf("%s: wrote %d rows, read back %d, want %d", format, er.Rows, len(rows), 3*n)
		}
		// Every row, in order: producers sorted by id as text.
		i := 0
		for _, id := range sortedScaleIDs(n) {
			for _, r := range scaleRows(id) {
				if rows[i] != canonical(r) {
					t.Fatalf("%s row %d: %s, want %s", format, i, rows[i], canonical(r))
				}
				i++
			}
		}
	}
}

func scaleID(i int) string { return fmt.Sprintf("job-%d", i) }

func scaleExpiration(i int) int64 {
	if i%4 == 0 {
		return now.Add(-time.Hour).UnixMilli()
	}
	return now.Add(time.Hour).UnixMilli()
}

func scaleTables(i int) []offsets.TableOffsets {
	if i%2 == 0 {
		return []offsets.TableOffsets{table(int64(1000+i%50), nb(0, int64(i)), nb(1, int64(i)+1), nb(2, int64(i)+2))}
	}
	return []offsets.TableOffsets{table(int64(2000+i%7), pb(int64(i%3), 0, int64(i)*10), pb(int64(i%3), 1, 1), pb(int64(i%3)+1, 0, 2))}
}

func scaleRows(id string) []Row {
	i, _ := strconv.Atoi(id[len("job-"):])
	var rows []Row
	for _, t := range scaleTables(i) {
		for _, b := range t.Buckets {
			r := Row{ProducerID: id, TableID: t.TableID, BucketID: b.BucketID, LogEndOffset: b.LogEndOffset,
				ExpirationTime: scaleExpiration(i), Expired: i%4 == 0}
			if b.Partitioned {
				r.PartitionID = i64(b.PartitionID)
			}
			rows = append(rows, r)
		}
	}
	return rows
}

func sortedScaleIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = scaleID(i)
	}
	// Sorted as strings, as the commands order producers.
	slices.Sort(ids)
	return ids
}

// plantScale writes snapshot i's files and znode directly.
func plantScale(ctx context.Context, e *env, i int) error {
	id := scaleID(i)
	var refs []offsets.FileRef
	for k, t := range scaleTables(i) {
		data, err := flussjson.EncodeTableOffsets(t)
		if err != nil {
			return err
		}
		p := filepath.Join(e.dir, "producers", id, strconv.FormatInt(t.TableID, 10), fmt.Sprintf("f%d.offsets", k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		refs = append(refs, offsets.FileRef{TableID: t.TableID, OffsetsPath: "file:" + p})
	}
	data := flussjson.EncodeSnapshot(offsets.Snapshot{ExpirationTime: scaleExpiration(i), Tables: refs})
	_, err := e.zc.Create(ctx, zkstore.ProducersPath+"/"+id, data, zk.Persistent)
	return err
}
