package memstore_test

import (
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/storeharness"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
)

// TestStoreConformance runs the conformance suite against memstore behind
// the portable layer: both stores and the OrphanStore in one.
func TestStoreConformance(t *testing.T) {
	storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return storeharness.NewMemory() })
}
