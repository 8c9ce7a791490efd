package storetest_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
)

// fullSnapshots is a snapshot store offering every optional interface; the
// forwarding check looks at nothing but the interfaces, so no call is made.
type fullSnapshots struct{ storage.SnapshotStore }

func (fullSnapshots) GetSnapshotLinear(context.Context, string, func(context.Context) error) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	return offsets.Snapshot{}, offsets.Incarnation{}, false, nil
}
func (fullSnapshots) CachedSnapshot(string) (offsets.Snapshot, uint64, bool, bool) {
	return offsets.Snapshot{}, 0, false, false
}
func (fullSnapshots) HoldsSnapshot(string) bool { return false }
func (fullSnapshots) KnownAbsent(string) bool   { return false }

// cachedFiles is a file store offering CachedFiles.
type cachedFiles struct{ storage.FileStore }

func (cachedFiles) CachedOffsets(string) (offsets.TableOffsets, bool) {
	return offsets.TableOffsets{}, false
}

// wrapping is a harness whose stores under test wrap fullSnapshots and
// cachedFiles; only the methods the check calls are implemented.
type wrapping struct {
	storetest.Harness
	snaps storage.SnapshotStore
	files storage.FileStore
}

func (h wrapping) Snapshots() storage.SnapshotStore { return h.snaps }
func (h wrapping) Files() storage.FileStore         { return h.files }
func (h wrapping) Inner() (storage.SnapshotStore, storage.FileStore) {
	return fullSnapshots{}, cachedFiles{}
}

// hidingSnapshots and hidingFiles pass every call through and offer none
// of the optional interfaces: the wrapper the check is there to catch.
type hidingSnapshots struct{ storage.SnapshotStore }
type hidingFiles struct{ storage.FileStore }

// The check reports each optional interface a wrapper hides, and nothing
// for wrappers that forward them (the portable layer, the forwarding
// helpers) or for a store that wraps none.
func TestCheckForwarding(t *testing.T) {
	hiding := wrapping{snaps: hidingSnapshots{fullSnapshots{}}, files: hidingFiles{cachedFiles{}}}
	got := storetest.CheckForwarding(hiding)
	want := []string{"storage.LinearReads", "storage.CachedSnapshots", "storage.AbsenceHints", "storage.CachedFiles"}
	if len(got) != len(want) {
		t.Fatalf("CheckForwarding of a hiding wrapper = %q, want one line for each of %v", got, want)
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(line string) bool { return strings.Contains(line, w+",") }) {
			t.Errorf("CheckForwarding of a hiding wrapper = %q, nothing about %s", got, w)
		}
	}

	hidesOne := wrapping{
		snaps: storage.WithSnapshotExtras(hidingSnapshots{fullSnapshots{}}, storage.SnapshotExtras{Linear: fullSnapshots{}, Cached: fullSnapshots{}}),
		files: cachedFiles{},
	}
	if got := storetest.CheckForwarding(hidesOne); len(got) != 1 || !strings.Contains(got[0], "storage.AbsenceHints") {
		t.Errorf("CheckForwarding of a wrapper hiding AbsenceHints alone = %q", got)
	}

	for name, h := range map[string]wrapping{
		"layer":   {snaps: storage.CheckedSnapshots(fullSnapshots{}), files: storage.CheckedFiles(cachedFiles{})},
		"helpers": {snaps: storage.WithSnapshotExtras(hidingSnapshots{}, storage.SnapshotExtrasOf(fullSnapshots{})), files: storage.WithFileExtras(hidingFiles{}, cachedFiles{})},
	} {
		if got := storetest.CheckForwarding(h); len(got) != 0 {
			t.Errorf("CheckForwarding of the %s = %q, want nothing", name, got)
		}
	}

	// A harness that wraps nothing has nothing to forward.
	if got := storetest.CheckForwarding(notWrapping{hiding}); got != nil {
		t.Errorf("CheckForwarding of a harness that is no Wrapper = %q", got)
	}
}

// notWrapping is a Harness that is not a Wrapper.
type notWrapping struct{ h wrapping }

func (n notWrapping) Snapshots() storage.SnapshotStore { return n.h.snaps }
func (n notWrapping) Files() storage.FileStore         { return n.h.files }
func (n notWrapping) Orphans() storage.OrphanStore     { return nil }
func (n notWrapping) RawSnapshot(context.Context, string) ([]byte, offsets.Incarnation, bool, error) {
	return nil, offsets.Incarnation{}, false, nil
}
func (n notWrapping) SetRawSnapshot(context.Context, string, []byte) error { return nil }
func (n notWrapping) DeleteRawSnapshot(context.Context, string) error      { return nil }
func (n notWrapping) RawFile(context.Context, string) ([]byte, bool, error) {
	return nil, false, nil
}
func (n notWrapping) SetRawFile(context.Context, string, []byte) error { return nil }
func (n notWrapping) RawFiles(context.Context) ([]string, error)       { return nil, nil }
