package producer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/faultstore"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// TestUnknownCreateChangedMeanwhileStaysUnknown: a create is applied but
// its reply is lost, and before the registry reads it back another writer
// finds the snapshot and deletes it, files and all, or deletes it and
// registers its own. Reading back cannot tell either from "never applied":
// sending the same snapshot again would revive one whose files are gone
// (a GET of it answers UNKNOWN_SERVER_ERROR) and undo an acknowledged
// delete; answering ALREADY_EXISTS would deny a snapshot clients may have
// read. The register must say its outcome is unknown, and leave nothing
// naming a missing file.
func TestUnknownCreateChangedMeanwhileStaysUnknown(t *testing.T) {
	for _, c := range []struct {
		name       string
		reregister bool // the other writer registers after deleting
	}{
		{"deleted", false},
		{"deleted and registered again", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newFaultEnv(t)
			other, err := producer.New(producer.Config{Snapshots: e.mem, Files: e.mem, FastPaths: storage.FastPathsOf(e.mem, e.mem), Now: e.clock.Now, SettleTimeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			e.fault.ApplyThenFailNext(faultstore.Create, faultstore.ErrLost)
			changed := errors.New("the other writer never ran")
			e.fault.Control(faultstore.Sync, func(faultstore.Call) (faultstore.Action, bool) {
				// The first read-back's sync: the other writer lands first.
				changed = other.Delete(context.Background(), str(faultID), nil)
				if changed == nil && c.reregister {
					var res producer.Result
					res, changed = other.Register(context.Background(), oneTable(faultID, newOffset+1, nil))
					if changed == nil && res != producer.Created {
						changed = errors.New("the other writer's register answered " + res.String())
					}
				}
				return faultstore.Action{}, true
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			res, err := e.reg.Register(ctx, oneTable(faultID, newOffset, nil))
			if changed != nil {
				t.Fatalf("the other writer: %v", changed)
			}
			if err == nil {
				t.Fatalf("register answered %v although its create was applied and changed since", res)
			}
			if !storeerr.OutcomeUnknown(err) {
				t.Errorf("the error does not say the outcome is unknown: %v", err)
			}
			if err := e.reg.Wait(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkNoDanglingRefs(t, e)
			ids, _ := e.mem.ListProducerIDs(context.Background())
			if want := map[bool]int{false: 0, true: 1}[c.reregister]; len(ids) != want {
				t.Fatalf("%d snapshots stored, want %d (the other writer's)", len(ids), want)
			}
			if c.reregister {
				s, _, _, err := e.mem.GetSnapshot(context.Background(), faultID)
				if err != nil {
					t.Fatal(err)
				}
				tables, err := e.mem.ReadOffsets(context.Background(), s.Tables[0].OffsetsPath)
				if err != nil {
					t.Fatal(err)
				}
				if got := tables.InFileOrder().Buckets[0].LogEndOffset; got != newOffset+1 {
					t.Errorf("the stored snapshot has offset %d, want the other writer's %d", got, newOffset+1)
				}
			}
		})
	}
}
