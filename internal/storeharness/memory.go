package storeharness

import (
	"context"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
)

// Memory is one memstore behind the portable layer: both stores and the
// OrphanStore in one. Raw access goes to the memstore.
type Memory struct {
	M     *memstore.Store
	snaps storage.SnapshotStore
	files storage.FilesAndOrphans
}

// NewMemory returns an empty memstore behind the layer.
func NewMemory() *Memory {
	m := memstore.New(memstore.Options{})
	return &Memory{M: m, snaps: storage.CheckedSnapshots(m), files: storage.CheckedFilesAndOrphans(m)}
}

func (h *Memory) Snapshots() storage.SnapshotStore { return h.snaps }
func (h *Memory) Files() storage.FileStore         { return h.files }
func (h *Memory) Orphans() storage.OrphanStore     { return h.files }

// Inner is the memstore the layer wraps.
func (h *Memory) Inner() (storage.SnapshotStore, storage.FileStore) { return h.M, h.M }

func (h *Memory) RawSnapshot(_ context.Context, id string) ([]byte, offsets.Incarnation, bool, error) {
	data, inc, found := h.M.RawSnapshot(id)
	return data, inc, found, nil
}

func (h *Memory) SetRawSnapshot(_ context.Context, id string, data []byte) error {
	h.M.SetRawSnapshot(id, data)
	return nil
}

func (h *Memory) DeleteRawSnapshot(_ context.Context, id string) error {
	h.M.DeleteSnapshot(id)
	return nil
}

func (h *Memory) RawFile(_ context.Context, path string) ([]byte, bool, error) {
	data, found := h.M.RawFile(path)
	return data, found, nil
}

func (h *Memory) SetRawFile(_ context.Context, path string, data []byte) error {
	h.M.SetRawFile(path, data)
	return nil
}

func (h *Memory) RawFiles(context.Context) ([]string, error) { return h.M.Files(), nil }

// FilesAndOrphans is Files and Orphans in one.
func (h *Memory) FilesAndOrphans() storage.FilesAndOrphans { return h.files }
