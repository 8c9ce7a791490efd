package zkstore_test

import (
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/storeharness"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
)

// TestStoreConformance runs the conformance suite against zkstore over a
// real ZooKeeper, reached through a cutter so that it can stall and be cut
// off, with remote over file:// for the files (also the OrphanStore); both
// behind the portable layer.
func TestStoreConformance(t *testing.T) {
	storetest.RunConformance(t, func(t *testing.T) storetest.Harness {
		return storeharness.NewZooKeeper(t, zkstore.ZooKeeperAddr())
	})
}
