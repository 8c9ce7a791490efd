package producer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage/faultstore"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// TestUnknownCreateDeletedMeanwhileIsNotRevived: a create is applied but
// its reply is lost, and before the registry reads it back another writer
// finds the snapshot and deletes it, files and all. Reading back then finds
// no znode, which cannot tell "never applied" from "applied and deleted
// since": sending the same snapshot again would bring back one whose files
// are gone, which a GET would answer with UNKNOWN_SERVER_ERROR, and undo a
// delete already acknowledged. The register must answer that its outcome
// is unknown and leave nothing naming a missing file.
func TestUnknownCreateDeletedMeanwhileIsNotRevived(t *testing.T) {
	e := newFaultEnv(t)
	other, err := producer.New(producer.Config{Snapshots: e.mem, Files: e.mem, Now: e.clock.Now, SettleTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	e.fault.ApplyThenFailNext(faultstore.Create, faultstore.ErrLost)
	deleted := errors.New("the other writer never ran")
	e.fault.Control(faultstore.Sync, func(faultstore.Call) (faultstore.Action, bool) {
		// The first read-back's sync: the other writer's delete lands first.
		deleted = other.Delete(context.Background(), str(faultID), nil)
		return faultstore.Action{}, true
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := e.reg.Register(ctx, oneTable(faultID, newOffset, nil))
	if deleted != nil {
		t.Fatalf("the other writer's delete: %v", deleted)
	}
	if err == nil {
		t.Fatalf("register answered %v although its create may have been applied and deleted since", res)
	}
	if !storeerr.OutcomeUnknown(err) {
		t.Errorf("the error does not say the outcome is unknown: %v", err)
	}
	if err := e.reg.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkNoDanglingRefs(t, e)
	if ids, _ := e.mem.ListProducerIDs(context.Background()); len(ids) != 0 {
		t.Errorf("snapshots %v are stored: the deleted one came back", ids)
	}
}
