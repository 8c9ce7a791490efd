package remotestore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// mountTmpfs mounts a tmpfs with the given options on a new directory. The
// tests below need a real full or read-only file system; mounting one needs
// root, which make test runs as (it installs packages).
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

func bigOffsets(buckets int) offsets.TableOffsets {
	t := offsets.TableOffsets{TableID: 1}
	for b := range buckets {
		t.Buckets = append(t.Buckets, offsets.BucketOffset{BucketID: int32(b), LogEndOffset: 1234567890123})
	}
	return t
}

// countSleeps returns Options whose Sleep counts the store's retries.
func countSleeps(n *int) Options {
	return Options{Sleep: func(context.Context, time.Duration) error { *n++; return nil }}
}

// TestFullDiskLeavesNoFile: writes to a full file system fail as
// storeerr.ErrNoSpace, are not retried, and leave no file (before, 57
// failed registers left 94 zero-byte files).
func TestFullDiskLeavesNoFile(t *testing.T) {
	dir := mountTmpfs(t, "size=256k")
	ctx := context.Background()
	sleeps := 0
	s, err := Open(ctx, "file://"+dir, countSleeps(&sleeps))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var failures int
	for i := 0; i < 40 && failures < 5; i++ {
		_, err := s.WriteOffsets(ctx, "p", bigOffsets(4000)) // ~56 KB each
		if err == nil {
			continue
		}
		failures++
		if !errors.Is(err, storeerr.ErrNoSpace) || storeerr.Transient(err) {
			t.Fatalf("write to a full disk: class %v: %v", storeerr.Classify(err), err)
		}
	}
	if failures == 0 {
		t.Fatal("the disk never filled up")
	}
	if sleeps != 0 {
		t.Fatalf("a full disk was retried %d times", sleeps)
	}
	// Every file left is complete and decodes: none is partial or empty.
	err = filepath.Walk(filepath.Join(dir, "producers"), func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		if filepath.Ext(p) != ".offsets" {
			t.Errorf("temporary file left: %s", p)
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if _, err := flussjson.DecodeTableOffsets(data); err != nil {
			t.Errorf("partial file %s (%d bytes): %v", p, len(data), err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyFileSystemIsPermanent: a read-only file system is a refused
// access, not retried and not transient.
func TestReadOnlyFileSystemIsPermanent(t *testing.T) {
	dir := mountTmpfs(t, "size=64k")
	if err := os.MkdirAll(filepath.Join(dir, "producers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-o", "remount,ro", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot remount read-only: %v: %s", err, out)
	}
	sleeps := 0
	s, err := Open(context.Background(), "file://"+dir, countSleeps(&sleeps))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.WriteOffsets(context.Background(), "p", bigOffsets(1))
	if !errors.Is(err, storeerr.ErrPermission) || storeerr.Transient(err) {
		t.Fatalf("write to a read-only file system: class %v: %v", storeerr.Classify(err), err)
	}
	if sleeps != 0 {
		t.Fatalf("retried %d times", sleeps)
	}
}
