package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// env is one case's stores and the helpers the cases share. Its helpers
// stop the case on an error the case does not expect.
type env struct {
	t   *testing.T
	ctx context.Context
	h   Harness
	s   storage.SnapshotStore
	f   storage.FileStore
}

// The snapshots of Fluss's ProducerOffsetsJsonSerdeTest, with the exact
// bytes a coordinator stores for them (docs/storage-format.md §1.2).
var (
	snapEmpty      = offsets.Snapshot{ExpirationTime: 1735538268000, Tables: []offsets.FileRef{}}
	snapEmptyBytes = `{"version":1,"expiration_time":1735538268000,"tables":[]}`
	snapTwo        = offsets.Snapshot{ExpirationTime: 1735538268000, Tables: []offsets.FileRef{
		{TableID: 100, OffsetsPath: "oss://bucket/path/uuid1.offsets"},
		{TableID: 200, OffsetsPath: "s3://bucket/path/uuid2.offsets"},
	}}
	snapTwoBytes = `{"version":1,"expiration_time":1735538268000,"tables":[{"table_id":100,"offsets_path":"oss://bucket/path/uuid1.offsets"},{"table_id":200,"offsets_path":"s3://bucket/path/uuid2.offsets"}]}`
)

// snapN returns a snapshot that differs from every other snapN.
func snapN(n int64) offsets.Snapshot {
	return offsets.Snapshot{ExpirationTime: 1735538268000 + n, Tables: []offsets.FileRef{
		{TableID: n, OffsetsPath: fmt.Sprintf("s3://bucket/fluss/producers/p/%d/00000000-0000-4000-8000-%012d.offsets", n, n)},
	}}
}

// bigSnapshot returns a snapshot whose znode holds at least n bytes.
func bigSnapshot(n int) offsets.Snapshot {
	ref := func(i int64) offsets.FileRef {
		id := 1_000_000_000 + i // every entry as long as the others
		return offsets.FileRef{TableID: id,
			OffsetsPath: fmt.Sprintf("s3://bucket/fluss/producers/big/%d/00000000-0000-4000-8000-%012d.offsets", id, i)}
	}
	one := len(flussjson.EncodeSnapshot(offsets.Snapshot{Tables: []offsets.FileRef{ref(0), ref(1)}})) -
		len(flussjson.EncodeSnapshot(offsets.Snapshot{Tables: []offsets.FileRef{ref(0)}}))
	s := offsets.Snapshot{ExpirationTime: 1735538268000}
	for i := int64(0); i <= int64(n/one); i++ {
		s.Tables = append(s.Tables, ref(i))
	}
	return s
}

// maxSnapshotBytes is the largest znode data a store accepts by default:
// ZooKeeper's default jute.maxbuffer (0xfffff) less the 4096 bytes the
// ZooKeeper client keeps for a request's header, path and multi framing
// (zk.RequestOverhead). Written out rather than imported, so that the
// suite pins the number instead of following it.
const maxSnapshotBytes = 0xfffff - 4096

// snapshotOfSize returns a snapshot whose znode holds exactly n bytes.
func snapshotOfSize(n int) offsets.Snapshot {
	s := bigSnapshot(n - 2000)
	base := len(flussjson.EncodeSnapshot(s))
	s.Tables = append(s.Tables, offsets.FileRef{TableID: 1})
	pad := n - len(flussjson.EncodeSnapshot(s))
	s.Tables[len(s.Tables)-1].OffsetsPath = strings.Repeat("x", pad)
	if got := len(flussjson.EncodeSnapshot(s)); got != n || base > n {
		panic(fmt.Sprintf("storetest: snapshot of %d bytes, want %d", got, n))
	}
	return s
}

// znode is a producer znode as the backend holds it.
type znode struct {
	data  []byte
	inc   offsets.Incarnation
	found bool
}

func (z znode) String() string {
	if !z.found {
		return "absent"
	}
	return fmt.Sprintf("%s at %+v", z.data, z.inc)
}

// holds reports whether z exists and holds s's exact bytes.
func (z znode) holds(s offsets.Snapshot) bool {
	return z.found && bytes.Equal(z.data, flussjson.EncodeSnapshot(s))
}

func (e *env) raw(id string) znode {
	e.t.Helper()
	data, inc, found, err := e.h.RawSnapshot(e.ctx, id)
	if err != nil {
		e.t.Fatalf("raw read of %s: %v", id, err)
	}
	return znode{data: data, inc: inc, found: found}
}

func (e *env) rawSet(id string, data []byte) {
	e.t.Helper()
	if err := e.h.SetRawSnapshot(e.ctx, id, data); err != nil {
		e.t.Fatalf("raw write of %s: %v", id, err)
	}
}

func (e *env) rawDelete(id string) {
	e.t.Helper()
	if err := e.h.DeleteRawSnapshot(e.ctx, id); err != nil {
		e.t.Fatalf("raw delete of %s: %v", id, err)
	}
}

// wantRaw fails the case unless the backend holds want for id.
func (e *env) wantRaw(what, id string, want znode) {
	e.t.Helper()
	if got := e.raw(id); got.found != want.found || !bytes.Equal(got.data, want.data) || got.inc != want.inc {
		e.t.Errorf("%s: znode %s is %v, want %v", what, id, got, want)
	}
}

func (e *env) wantRawAbsent(what, id string) {
	e.t.Helper()
	if got := e.raw(id); got.found {
		e.t.Errorf("%s: znode %s exists: %v", what, id, got)
	}
}

// create creates id through the store and returns its incarnation.
func (e *env) create(id string, s offsets.Snapshot) offsets.Incarnation {
	e.t.Helper()
	created, err := e.s.CreateSnapshot(e.ctx, id, s)
	if err != nil || !created {
		e.t.Fatalf("CreateSnapshot(%s) = %v, %v; want created", id, created, err)
	}
	z := e.raw(id)
	if !z.holds(s) {
		e.t.Fatalf("CreateSnapshot(%s) created, but the znode is %v", id, z)
	}
	return z.inc
}

func (e *env) sync() {
	e.t.Helper()
	if err := e.s.Sync(e.ctx); err != nil {
		e.t.Fatalf("Sync: %v", err)
	}
}

// settle retries Sync until it succeeds: after a stall or an outage the
// store may need a moment to reach its backend again. The case's deadline
// bounds it.
func (e *env) settle() {
	e.t.Helper()
	for {
		err := e.s.Sync(e.ctx)
		if err == nil {
			return
		}
		if e.ctx.Err() != nil {
			e.t.Fatalf("Sync never succeeded again: %v", err)
		}
		select {
		case <-e.ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// get reads id through the store after a Sync and checks the answer
// against the backend: the store must report what the backend holds.
func (e *env) get(id string) (offsets.Snapshot, offsets.Incarnation, bool) {
	e.t.Helper()
	e.sync()
	s, inc, found, err := e.s.GetSnapshot(e.ctx, id)
	if err != nil {
		e.t.Fatalf("GetSnapshot(%s): %v", id, err)
	}
	e.checkAnswer("GetSnapshot after Sync", id, s, inc, found)
	return s, inc, found
}

// checkAnswer fails the case unless a read's answer is the backend's
// current state of id.
func (e *env) checkAnswer(what, id string, s offsets.Snapshot, inc offsets.Incarnation, found bool) {
	e.t.Helper()
	z := e.raw(id)
	switch {
	case found != z.found:
		e.t.Errorf("%s(%s): found %v, but the znode is %v", what, id, found, z)
	case found && (!z.holds(s) || inc != z.inc):
		e.t.Errorf("%s(%s) = %+v at %+v, but the znode is %v", what, id, s, inc, z)
	case !found && (inc != offsets.Incarnation{} || len(s.Tables) != 0 || s.ExpirationTime != 0):
		e.t.Errorf("%s(%s): not found, yet it returned %+v at %+v", what, id, s, inc)
	}
}

// wantClass fails the case unless err is of class want, with no unknown
// outcome unless unknownOK.
func (e *env) wantClass(what string, err, want error, unknownOK bool) {
	e.t.Helper()
	switch {
	case err == nil:
		e.t.Errorf("%s: no error, want one of class %v", what, want)
	case storeerr.Classify(err) != want:
		e.t.Errorf("%s: error %q is of class %v, want %v", what, err, storeerr.Classify(err), want)
	case !unknownOK && storeerr.OutcomeUnknown(err):
		e.t.Errorf("%s: error %q says the outcome is unknown", what, err)
	}
}

// wantRefused fails the case unless err refuses a request for good: an
// error that no retry can fix and that leaves no doubt about the outcome.
func (e *env) wantRefused(what string, err error) {
	e.t.Helper()
	switch {
	case err == nil:
		e.t.Errorf("%s: accepted", what)
	case storeerr.Transient(err) || storeerr.OutcomeUnknown(err):
		e.t.Errorf("%s: refused with %q, which says a retry might succeed or the outcome is unknown", what, err)
	}
}

// rawFiles lists the backend's files, sorted.
func (e *env) rawFiles() []string {
	e.t.Helper()
	files, err := e.h.RawFiles(e.ctx)
	if err != nil {
		e.t.Fatalf("raw listing of files: %v", err)
	}
	slices.Sort(files)
	return files
}

// write writes t through the file store and checks that the backend holds
// Fluss's exact bytes for it.
func (e *env) write(id string, t offsets.TableOffsets) string {
	e.t.Helper()
	path, err := e.f.WriteOffsets(e.ctx, id, t)
	if err != nil {
		e.t.Fatalf("WriteOffsets(%s, table %d): %v", id, t.TableID, err)
	}
	want, err := flussjson.EncodeTableOffsets(t)
	if err != nil {
		e.t.Fatal(err)
	}
	data, found, err := e.h.RawFile(e.ctx, path)
	if err != nil || !found || !bytes.Equal(data, want) {
		e.t.Fatalf("WriteOffsets(%s, table %d) wrote %s; the backend holds %q (found %v, %v), want %s",
			id, t.TableID, path, data, found, err, want)
	}
	return path
}

// plantedPath returns a path in the directory where WriteOffsets puts the
// producer's files for table, for a file written by another writer; n names
// it.
func (e *env) plantedPath(id string, table int64, n int) string {
	planned := e.f.PlannedPath(id, table)
	dir := planned[:strings.LastIndex(planned, "/")+1]
	return fmt.Sprintf("%s00000000-0000-4000-9000-%012d.offsets", dir, n)
}

func (e *env) plant(path string, data []byte) {
	e.t.Helper()
	if err := e.h.SetRawFile(e.ctx, path, data); err != nil {
		e.t.Fatalf("raw write of %s: %v", path, err)
	}
}

func (e *env) rawFileExists(path string) bool {
	e.t.Helper()
	_, found, err := e.h.RawFile(e.ctx, path)
	if err != nil {
		e.t.Fatalf("raw read of %s: %v", path, err)
	}
	return found
}

// Offsets of every shape a file can hold (docs/storage-format.md §6).
var (
	tablePlain = offsets.TableOffsets{TableID: 5, Buckets: []offsets.BucketOffset{
		{BucketID: 4, LogEndOffset: 500}, {BucketID: 0, LogEndOffset: 100}, {BucketID: 2, LogEndOffset: 300},
	}}
	tablePartitioned = offsets.TableOffsets{TableID: 7, Buckets: []offsets.BucketOffset{
		{Partitioned: true, PartitionID: 2, BucketID: 1, LogEndOffset: 400},
		{Partitioned: true, PartitionID: 1, BucketID: 0, LogEndOffset: 100},
		{Partitioned: true, PartitionID: 2, BucketID: 3, LogEndOffset: 600},
		{Partitioned: true, PartitionID: 1, BucketID: 2, LogEndOffset: 300},
	}}
	// tablePlain's offsets as an array indexed by bucket id, the form a
	// large register hands the store, with a trailing -1 the file leaves
	// out.
	tableByBucket = offsets.TableOffsets{TableID: 6, ByBucket: []int64{100, -1, 300, -1, 500, -1}}
)

// outcome is what a write reported, in the terms of the three-outcome
// contract of storage.SnapshotStore.
type outcome int

const (
	applied outcome = iota
	notApplied
	unknown
)

func (o outcome) String() string {
	return [...]string{"applied", "not applied", "unknown"}[o]
}

func outcomeOf(ok bool, err error) outcome {
	switch {
	case storeerr.OutcomeUnknown(err):
		return unknown
	case err != nil, !ok:
		return notApplied
	}
	return applied
}

// snapWrite is one write of a snapshot store, with the znode states that
// tell from the backend whether it was applied.
type snapWrite struct {
	name   string
	id     string
	do     func(ctx context.Context) (bool, error)
	before func(znode) bool
	after  func(znode) bool
}

// snapWrites creates what they need and returns one write of each kind:
// a create of an absent znode, a replace and a delete of current
// incarnations. tag keeps the ids of several calls apart.
func (e *env) snapWrites(tag string) []snapWrite {
	e.t.Helper()
	created, replaced, deleted := tag+"-created", tag+"-replaced", tag+"-deleted"
	incR := e.create(replaced, snapN(1))
	incD := e.create(deleted, snapN(2))
	same := func(inc offsets.Incarnation, s offsets.Snapshot) func(znode) bool {
		return func(z znode) bool { return z.holds(s) && z.inc == inc }
	}
	absent := func(z znode) bool { return !z.found }
	return []snapWrite{
		{
			name: "CreateSnapshot", id: created,
			do: func(ctx context.Context) (bool, error) {
				return e.s.CreateSnapshot(ctx, created, snapN(3))
			},
			before: absent,
			after:  func(z znode) bool { return z.holds(snapN(3)) && z.inc.Version >= 1 },
		},
		{
			name: "ReplaceSnapshotIf", id: replaced,
			do: func(ctx context.Context) (bool, error) {
				return e.s.ReplaceSnapshotIf(ctx, replaced, incR, snapN(4))
			},
			before: same(incR, snapN(1)),
			after: func(z znode) bool {
				return z.holds(snapN(4)) && z.inc == offsets.Incarnation{Czxid: incR.Czxid, Version: incR.Version + 1}
			},
		},
		{
			name: "DeleteSnapshotIf", id: deleted,
			do: func(ctx context.Context) (bool, error) {
				return e.s.DeleteSnapshotIf(ctx, deleted, incD)
			},
			before: same(incD, snapN(2)),
			after:  absent,
		},
	}
}

// checkOutcome fails the case unless the backend's state of w's znode is
// the one w's reported outcome allows.
func (e *env) checkOutcome(what string, w snapWrite, o outcome) {
	e.t.Helper()
	z := e.raw(w.id)
	var ok bool
	switch o {
	case applied:
		ok = w.after(z)
	case notApplied:
		ok = w.before(z)
	case unknown:
		ok = w.before(z) || w.after(z)
	}
	if !ok {
		e.t.Errorf("%s: %s reported %s, but the znode is %v", what, w.name, o, z)
	}
	e.t.Logf("%s: outcome %s, znode %v", what, o, z)
}

// endedContexts returns a context that was canceled and one whose deadline
// passed, with the class a store must report for each.
func endedContexts(parent context.Context) []struct {
	name  string
	ctx   context.Context
	class error
} {
	canceled, cancel := context.WithCancel(parent)
	cancel()
	expired, cancel2 := context.WithDeadline(parent, time.Unix(0, 0))
	cancel2()
	return []struct {
		name  string
		ctx   context.Context
		class error
	}{
		{"canceled", canceled, storeerr.ErrUnavailable},
		{"deadline", expired, storeerr.ErrTimeout},
	}
}

// isNotFound reports a missing offsets file the way the contract says.
func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }
