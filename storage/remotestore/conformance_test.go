package remotestore_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
)

// remoteHarness is remote over one blob driver for the files (also the
// OrphanStore), with memstore for the snapshots, both behind the portable
// layer. Raw file access goes to the bucket, or for a local store to the
// file system, where a write's temporary files are seen too.
type remoteHarness struct {
	mem   *memstore.Store
	files *remotestore.Store
	snaps storage.SnapshotStore
	both  storage.FilesAndOrphans

	bucket         *blob.Bucket
	producersKey   string
	localProducers string
}

func newRemote(t *testing.T, d remotestore.Driver) *remoteHarness {
	m := memstore.New(memstore.Options{})
	s := d.Open(t)
	b, key, local := remotestore.Bucket(s)
	return &remoteHarness{
		mem: m, files: s, snaps: storage.CheckedSnapshots(m), both: storage.CheckedFilesAndOrphans(s),
		bucket: b, producersKey: key, localProducers: local,
	}
}

func (h *remoteHarness) Snapshots() storage.SnapshotStore { return h.snaps }
func (h *remoteHarness) Files() storage.FileStore         { return h.both }
func (h *remoteHarness) Orphans() storage.OrphanStore     { return h.both }

// Inner is what the layer wraps.
func (h *remoteHarness) Inner() (storage.SnapshotStore, storage.FileStore) { return h.mem, h.files }

func (h *remoteHarness) RawSnapshot(_ context.Context, id string) ([]byte, offsets.Incarnation, bool, error) {
	data, inc, found := h.mem.RawSnapshot(id)
	return data, inc, found, nil
}

func (h *remoteHarness) SetRawSnapshot(_ context.Context, id string, data []byte) error {
	h.mem.SetRawSnapshot(id, data)
	return nil
}

func (h *remoteHarness) DeleteRawSnapshot(_ context.Context, id string) error {
	h.mem.DeleteSnapshot(id)
	return nil
}

// rel returns the part of path beneath the producers directory.
func (h *remoteHarness) rel(path string) (string, error) {
	key, err := remotestore.FileKey(h.files, path)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(key, h.producersKey), nil
}

func (h *remoteHarness) RawFile(ctx context.Context, path string) ([]byte, bool, error) {
	rel, err := h.rel(path)
	if err != nil {
		return nil, false, err
	}
	var data []byte
	if h.localProducers != "" {
		data, err = os.ReadFile(filepath.Join(h.localProducers, filepath.FromSlash(rel)))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
	} else {
		data, err = h.bucket.ReadAll(ctx, h.producersKey+rel)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, false, nil
		}
	}
	return data, err == nil, err
}

func (h *remoteHarness) SetRawFile(ctx context.Context, path string, data []byte) error {
	rel, err := h.rel(path)
	if err != nil {
		return err
	}
	if h.localProducers != "" {
		p := filepath.Join(h.localProducers, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o666)
	}
	return h.bucket.WriteAll(ctx, h.producersKey+rel, data, nil)
}

func (h *remoteHarness) RawFiles(ctx context.Context) ([]string, error) {
	dir := h.files.ProducersDir().String()
	var out []string
	if h.localProducers != "" {
		err := filepath.WalkDir(h.localProducers, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				rel, rerr := filepath.Rel(h.localProducers, p)
				if rerr != nil {
					return rerr
				}
				out = append(out, dir+"/"+filepath.ToSlash(rel))
			}
			return err
		})
		return out, err
	}
	it := h.bucket.List(&blob.ListOptions{Prefix: h.producersKey})
	for {
		obj, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, dir+"/"+strings.TrimPrefix(obj.Key, h.producersKey))
	}
}

// TestStoreConformance runs the conformance suite against remote over
// every blob driver its tests open: memblob, the local file system
// (file:// and a bare path), and the emulators of S3 (with the oss, cosn
// and obs schemes), GCS and Azure (abfs, abfss, wasb, wasbs); each with
// memstore for the snapshots.
func TestStoreConformance(t *testing.T) {
	for _, d := range remotestore.Drivers(t) {
		t.Run(d.Name, func(t *testing.T) {
			storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return newRemote(t, d) })
		})
	}
}

var _ storetest.Wrapper = (*remoteHarness)(nil)
