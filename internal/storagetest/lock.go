package storagetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ProducersLock makes <dir>/producers refuse writes while the directory
// above it stays writable, and returns what turns the refusal on and what
// lifts it. As root (make test) permission bits do not stop writes, so
// producers becomes a tmpfs remounted read-only; otherwise its mode drops
// to 0555. Where a tmpfs cannot be mounted the test is skipped.
func ProducersLock(t testing.TB, dir string) (lock, unlock func()) {
	t.Helper()
	p := filepath.Join(dir, "producers")
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		return func() { os.Chmod(p, 0o555) }, func() { os.Chmod(p, 0o755) }
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", p).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", p).Run() })
	remount := func(mode string) func() {
		return func() {
			if out, err := exec.Command("mount", "-o", "remount,"+mode, p).CombinedOutput(); err != nil {
				t.Fatalf("remount %s %s: %v: %s", mode, p, err, out)
			}
		}
	}
	return remount("ro"), remount("rw")
}
