package remotestore_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
)

// twoSidecars opens two stores over one local directory, as two sidecars
// sharing a remote.data.dir do; sleeps counts the first one's retries.
func twoSidecars(t *testing.T, sleeps *int) (a, b *remotestore.Store, dir string) {
	t.Helper()
	dir = t.TempDir()
	ctx := context.Background()
	a, err := remotestore.Open(ctx, "file://"+dir, remotestore.Options{Sleep: func(context.Context, time.Duration) error { *sleeps++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, err = remotestore.Open(ctx, "file://"+dir, remotestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return a, b, dir
}

// TestWriteSurvivesPruneOfItsDirectory: the other sidecar's cleanup prunes
// the directories a write has just made, before the write creates its file
// in them. The write makes them again and succeeds at once, without a
// retry; only a prune in the window of every one of its attempts makes it
// fail, and then it leaves no file.
func TestWriteSurvivesPruneOfItsDirectory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prunes int // prunes in a row, one per attempt
		fails  bool
	}{
		{"one prune", 1, false},
		{"a prune at every attempt but the last", remotestore.DirAttempts - 1, false},
		{"a prune at every attempt", 1 << 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			sleeps := 0
			a, b, dir := twoSidecars(t, &sleeps)
			pruned := 0
			remotestore.SetDirsMade(a, func(made string) {
				if pruned >= tc.prunes {
					return
				}
				gone, err := b.PruneEmptyDirs(ctx, "p")
				if err != nil || !gone {
					t.Fatalf("the other sidecar's prune: gone %v, %v", gone, err)
				}
				if _, err := os.Stat(made); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%s survived the prune: %v", made, err)
				}
				pruned++
			})
			want := offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: 42}}}
			path, err := a.WriteOffsets(ctx, "p", want)
			if tc.fails {
				if err == nil {
					t.Fatalf("a write whose directories were pruned %d times succeeded", pruned)
				}
				if left := files(t, dir); len(left) != 0 {
					t.Fatalf("a failed write left %v", left)
				}
				return
			}
			if err != nil {
				t.Fatalf("write after %d prunes: %v", pruned, err)
			}
			if pruned != tc.prunes || sleeps != 0 {
				t.Fatalf("%d prunes, %d retries; want %d prunes and no retry", pruned, sleeps, tc.prunes)
			}
			got, err := b.ReadOffsets(ctx, path)
			if err != nil || got.TableID != 5 || len(got.Buckets) != 1 || got.Buckets[0].LogEndOffset != 42 {
				t.Fatalf("read back by the other sidecar: %+v %v", got, err)
			}
			if left := files(t, dir); len(left) != 1 || strings.HasSuffix(left[0], ".tmp") {
				t.Fatalf("files left: %v, want the one written", left)
			}
		})
	}
}

// files lists the regular files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestRegisterSurvivesOtherSidecarsCleanup: a register on sidecar A whose
// file directories sidecar B's orphan cleanup prunes mid-write is
// acknowledged without a retry, and what it acknowledged is there for both
// sidecars, also after B's next cleanup.
func TestRegisterSurvivesOtherSidecarsCleanup(t *testing.T) {
	ctx := context.Background()
	sleeps := 0
	fa, fb, dir := twoSidecars(t, &sleeps)
	snaps := memstore.New(memstore.Options{}) // the ZooKeeper both share
	ra, err := producer.New(producer.Config{Snapshots: snaps, Files: fa, FastPaths: storage.FastPathsOf(snaps, fa)})
	if err != nil {
		t.Fatal(err)
	}
	rb, err := producer.New(producer.Config{Snapshots: snaps, Files: fb, FastPaths: storage.FastPathsOf(snaps, fb)})
	if err != nil {
		t.Fatal(err)
	}
	const id = "racer"
	// A file of the producer's earlier snapshot, long gone: B's cleanup
	// has a directory to visit and prunes it once empty.
	if err := os.MkdirAll(filepath.Join(dir, "producers", id, "9"), 0o777); err != nil {
		t.Fatal(err)
	}
	var reports []producer.OrphanReport
	remotestore.SetDirsMade(fa, func(made string) {
		if len(reports) > 0 {
			return
		}
		rep, err := rb.CleanupOrphans(ctx, fb, time.Hour)
		if err != nil {
			t.Fatalf("B's cleanup: %v", err)
		}
		reports = append(reports, rep)
		if _, err := os.Stat(made); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("B's cleanup left %s: %v", made, err)
		}
	})
	off := int64(77)
	res, err := ra.Register(ctx, producer.RegisterInput{
		ProducerID: ptr(id),
		Tables:     []producer.TableInput{{TableID: 3, Buckets: []producer.BucketInput{{BucketID: 1, LogEndOffset: &off}}}},
	})
	if err != nil || res != producer.Created {
		t.Fatalf("register on A: %v %v", res, err)
	}
	if len(reports) != 1 || sleeps != 0 {
		t.Fatalf("%d cleanups mid-write, %d retries; want 1 and none", len(reports), sleeps)
	}
	check := func(when string) {
		t.Helper()
		for name, r := range map[string]*producer.Registry{"A": ra, "B": rb} {
			s, found, err := r.Get(ctx, ptr(id))
			if err != nil || !found || len(s.Tables) != 1 || s.Tables[0].Buckets[0].LogEndOffset != 77 {
				t.Fatalf("%s: get on %s: %+v %v %v", when, name, s, found, err)
			}
		}
	}
	check("after the register")
	rep, err := rb.CleanupOrphans(ctx, fb, 0)
	if err != nil || rep.Deleted != 0 {
		t.Fatalf("B's next cleanup: %+v %v", rep, err)
	}
	check("after B's next cleanup")
}

func ptr(s string) *string { return &s }
