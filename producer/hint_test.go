package producer_test

import (
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
)

// alwaysAbsent is a snapshot store whose absence hint is always wrong-sided:
// it claims every producer has no snapshot, as a hint that is stale would.
type alwaysAbsent struct {
	*zkstore.Store
	asked int
}

func (s *alwaysAbsent) KnownAbsent(string) bool { s.asked++; return true }

// TestStaleAbsenceHintCostsOnlyARetry: a register told that a live snapshot
// is absent writes its files, loses the conditional create, deletes its
// files (nothing names them) and answers ALREADY_EXISTS after a real read;
// the first snapshot is untouched.
func TestStaleAbsenceHintCostsOnlyARetry(t *testing.T) {
	e := newEnv(t, "file")
	if res := mustRegister(t, e.reg, threeBucketsTwoTables("p1")); res != producer.Created {
		t.Fatalf("first register: %v", res)
	}
	hinted := &alwaysAbsent{Store: e.store}
	reg, err := producer.New(producer.Config{
		Snapshots: hinted,
		Files:     e.files,
		FastPaths: storage.FastPathsOf(hinted, e.files),
		Now:       e.clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	second := producer.RegisterInput{ProducerID: str("p1"), Tables: []producer.TableInput{
		{TableID: 1, Buckets: []producer.BucketInput{bucket(0, 999)}},
	}}
	if res := mustRegister(t, reg, second); res != producer.AlreadyExists {
		t.Fatalf("register with a stale hint: %v, want ALREADY_EXISTS", res)
	}
	if hinted.asked != 1 {
		t.Fatalf("the hint was asked %d times, want once (the first attempt only)", hinted.asked)
	}
	got, found := mustGet(t, e.reg, "p1")
	if !found {
		t.Fatal("the first snapshot is gone")
	}
	if want := "1/-/0=100 1/-/1=200 2/-/0=300"; strings.Join(flat(got.Tables), " ") != want {
		t.Fatalf("offsets %v, want %v", flat(got.Tables), want)
	}
	if n := len(e.filesOnDisk(t, "p1")); n != 2 {
		t.Fatalf("the losing register must delete its own files: %d files, want the first snapshot's 2", n)
	}

	// A right hint: a new producer is registered without reading first.
	if res := mustRegister(t, reg, threeBucketsTwoTables("p2")); res != producer.Created {
		t.Fatalf("register p2: %v", res)
	}
	if got, found := mustGet(t, e.reg, "p2"); !found || len(got.Tables) != 2 {
		t.Fatalf("p2: %v %v", found, got)
	}
}
