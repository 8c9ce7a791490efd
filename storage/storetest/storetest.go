// Package storetest is the conformance suite that every store of the
// producer offsets registry must pass, in the manner of go-cloud's
// blob/drivertest: RunConformance runs one set of cases against the stores
// a Harness makes, and reaches behind their backs, through the harness, to
// see and change the backend as another writer (a Fluss coordinator,
// another sidecar) would.
//
// The cases check the contract of package storage: versions and creation
// ids, the conditional writes, not-found answers, the error classes of
// package storeerr, the three-outcome write contract, Sync, listings, the
// offsets files' round trip and the optional interfaces. A case that needs
// what only some stores have runs where the store has it and is skipped,
// saying why, elsewhere: an optional interface of the store (LinearReads,
// CachedSnapshots, AbsenceHints, CachedFiles), an OrphanStore, or a backend
// that can stall or become unreachable (Stalls, Outages). A difference in
// behaviour between stores is never skipped: it is a bug of one of them,
// and neither is a wrapper (a Harness that is a Wrapper) that does not
// offer an optional interface its inner store offers (CheckForwarding).
//
// The suite assumes the default znode size limit, ZooKeeper's jute.maxbuffer
// of 1 MiB. Every context it passes carries a deadline, only so that a bug
// cannot hang it; no assertion depends on timing.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

// Harness gives the suite one set of stores, fresh and empty, and access
// behind their backs to the backend beneath them. The raw methods act at
// once on the backend, as another writer would; the stores under test may
// see their effect only after a Sync.
type Harness interface {
	// Snapshots and Files are the stores under test.
	Snapshots() storage.SnapshotStore
	Files() storage.FileStore
	// Orphans is the store's OrphanStore over the same files, or nil when
	// it has none.
	Orphans() storage.OrphanStore

	// RawSnapshot returns the producer's znode as the backend holds it:
	// its bytes and incarnation, and whether it exists.
	RawSnapshot(ctx context.Context, producerID string) (data []byte, inc offsets.Incarnation, found bool, err error)
	// SetRawSnapshot writes data into the producer's znode as a Fluss
	// coordinator would: it creates the znode (at data version 0) when it
	// is absent, else sets its data whatever its version.
	SetRawSnapshot(ctx context.Context, producerID string, data []byte) error
	// DeleteRawSnapshot deletes the producer's znode whatever its version,
	// as a coordinator's deleteProducerOffsets does; an absent znode is not
	// an error.
	DeleteRawSnapshot(ctx context.Context, producerID string) error

	// RawFile returns the bytes of the offsets file at path (a path of the
	// form WriteOffsets returns), and whether it exists.
	RawFile(ctx context.Context, path string) (data []byte, found bool, err error)
	// SetRawFile writes data as the offsets file at path (a path of the form
	// WriteOffsets returns), as another writer would.
	SetRawFile(ctx context.Context, path string, data []byte) error
	// RawFiles lists every file the backend holds for the file store, in
	// the form WriteOffsets returns, temporary files of a write included.
	RawFiles(ctx context.Context) ([]string, error)
}

// HarnessMaker makes a Harness whose stores no other test sees; it closes
// them with t.Cleanup.
type HarnessMaker func(t *testing.T) Harness

// Stalls is implemented by a Harness whose snapshot backend can hang, as a
// ZooKeeper server in a long pause or a stalled network does.
type Stalls interface {
	// Stall holds every request the stores under test send to the
	// snapshot backend from now on, unanswered, until Resume; the raw
	// methods are not held. Requests held reach the backend after Resume.
	Stall(t *testing.T) Stall
}

// Stall is one stall begun by Stalls.Stall.
type Stall interface {
	// Held returns a channel closed once a request of the stores is held.
	Held() <-chan struct{}
	// Resume lets the held requests through. It is idempotent.
	Resume()
}

// Outages is implemented by a Harness whose snapshot backend can become
// unreachable.
type Outages interface {
	// Cut makes the snapshot backend unreachable to the stores under test,
	// not to the raw methods: their requests fail rather than wait, and
	// writes in flight may or may not be applied. restore makes it
	// reachable again; the suite then retries Sync until it succeeds.
	Cut(t *testing.T) (restore func())
}

// RunConformance runs the suite against the stores newHarness makes, one
// fresh set per case.
func RunConformance(t *testing.T, newHarness HarnessMaker) {
	cases := []struct {
		name string
		run  func(e *env)
	}{
		{"Versions", testVersions},
		{"CreationIDs", testCreationIDs},
		{"ConditionalCreate", testConditionalCreate},
		{"ConditionalReplace", testConditionalReplace},
		{"ConditionalDelete", testConditionalDelete},
		{"NotFound", testNotFound},
		{"ListProducerIDs", testListProducerIDs},
		{"SyncShowsOtherWriters", testSyncShowsOtherWriters},
		{"TooLarge", testTooLarge},
		{"CorruptSnapshot", testCorruptSnapshot},
		{"CorruptOffsetsFile", testCorruptOffsetsFile},
		{"EndedContext", testEndedContext},
		{"InvalidProducerIDs", testInvalidProducerIDs},
		{"FileRoundTrip", testFileRoundTrip},
		{"DeleteOffsets", testDeleteOffsets},
		{"OutsidePath", testOutsidePath},
		{"Orphans", testOrphans},
		{"LinearReads", testLinearReads},
		{"CachedSnapshots", testCachedSnapshots},
		{"AbsenceHints", testAbsenceHints},
		{"CachedFiles", testCachedFiles},
		{"Stall", testStall},
		{"Outage", testOutage},
		{"Forwarding", testForwarding},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			t.Cleanup(cancel)
			h := newHarness(t)
			c.run(&env{t: t, ctx: ctx, h: h, s: h.Snapshots(), f: h.Files()})
		})
	}
}
