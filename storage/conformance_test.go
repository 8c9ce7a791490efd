package storage_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/faultstore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/memstore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// zkAddr is the ZooKeeper server the harnesses share; each harness uses its
// own root (zktest.UniqueRoot).
var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// TestStoreConformance runs the conformance suite against every store:
//
//   - zookeeper: zkstore over a real ZooKeeper, reached through a cutter
//     (so that it can stall and be cut off), and remote over file:// in a
//     temporary directory, which is also the OrphanStore;
//   - memory: memstore, both stores and the OrphanStore in one;
//   - cached: snapcache over zkstore and remote as in zookeeper;
//   - fault: faultstore passing every call through to a memstore. Over
//     memstore rather than ZooKeeper because ZooKeeper is covered twice
//     already and memstore is the store the fault tests of the registry
//     (producer) and embedded mode run on; its stall and outage come from
//     faultstore's own controls, which memstore alone cannot have.
func TestStoreConformance(t *testing.T) {
	t.Run("zookeeper", func(t *testing.T) {
		storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return newZooKeeper(t, false) })
	})
	t.Run("memory", func(t *testing.T) {
		storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return newMemory() })
	})
	t.Run("cached", func(t *testing.T) {
		storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return newZooKeeper(t, true) })
	})
	t.Run("fault", func(t *testing.T) {
		storetest.RunConformance(t, func(t *testing.T) storetest.Harness { return newFault() })
	})
}

// zkHarness is zkstore and remote, or snapcache over them, with another
// ZooKeeper session and the local directory for raw access.
type zkHarness struct {
	snaps   storage.SnapshotStore
	files   storage.FileStore
	orphans storage.OrphanStore
	raw     *gozk.Conn // straight to the server, never cut off
	root    string     // the stores' ZooKeeper root
	dir     string     // the stores' remote.data.dir
	cut     *zktest.Cutter
}

func newZooKeeper(t *testing.T, cached bool) *zkHarness {
	t.Helper()
	// The deadline only prevents a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cut := zktest.NewCutter(t, zkAddr)
	root := zktest.UniqueRoot()
	zc, err := zk.Connect(ctx, zk.Config{Address: cut.Addr(), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	dir := t.TempDir()
	files, err := remote.Open(ctx, "file://"+dir, remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	h := &zkHarness{snaps: zkstore.New(zc), files: files, orphans: files, raw: zktest.RawConn(t, zkAddr), root: root, dir: dir, cut: cut}
	if cached {
		c, err := snapcache.New(ctx, snapcache.Config{Watcher: zc, Snapshots: h.snaps, Files: files})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Close)
		// snapcache has no OrphanStore: orphan cleanup goes to remote.
		h.snaps, h.files, h.orphans = c.Snapshots(), c.Files(), nil
	}
	return h
}

func (h *zkHarness) Snapshots() storage.SnapshotStore { return h.snaps }
func (h *zkHarness) Files() storage.FileStore         { return h.files }
func (h *zkHarness) Orphans() storage.OrphanStore     { return h.orphans }

func (h *zkHarness) znode(id string) string { return h.root + zkstore.ProducersPath + "/" + id }

func (h *zkHarness) RawSnapshot(_ context.Context, id string) ([]byte, offsets.Incarnation, bool, error) {
	data, st, err := h.raw.Get(h.znode(id))
	if errors.Is(err, gozk.ErrNoNode) {
		return nil, offsets.Incarnation{}, false, nil
	}
	if err != nil {
		return nil, offsets.Incarnation{}, false, err
	}
	return data, offsets.Incarnation{Czxid: st.Czxid, Version: st.Version}, true, nil
}

func (h *zkHarness) SetRawSnapshot(_ context.Context, id string, data []byte) error {
	_, err := h.raw.Set(h.znode(id), data, -1)
	if !errors.Is(err, gozk.ErrNoNode) {
		return err
	}
	for _, parent := range []string{h.root, h.root + zkstore.ProducersPath} {
		if _, err := h.raw.Create(parent, []byte{}, 0, gozk.WorldACL(gozk.PermAll)); err != nil && !errors.Is(err, gozk.ErrNodeExists) {
			return err
		}
	}
	_, err = h.raw.Create(h.znode(id), data, 0, gozk.WorldACL(gozk.PermAll))
	return err
}

func (h *zkHarness) DeleteRawSnapshot(_ context.Context, id string) error {
	if err := h.raw.Delete(h.znode(id), -1); err != nil && !errors.Is(err, gozk.ErrNoNode) {
		return err
	}
	return nil
}

// local maps a path the file store returns to the local file.
func (h *zkHarness) local(path string) (string, error) {
	rest, ok := strings.CutPrefix(path, "file:")
	if !ok || !strings.HasPrefix(rest, h.dir+"/") {
		return "", fmt.Errorf("%s is not a file under %s", path, h.dir)
	}
	return filepath.FromSlash(rest), nil
}

func (h *zkHarness) RawFile(_ context.Context, path string) ([]byte, bool, error) {
	p, err := h.local(path)
	if err != nil {
		return nil, false, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return data, err == nil, err
}

func (h *zkHarness) SetRawFile(_ context.Context, path string, data []byte) error {
	p, err := h.local(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o666)
}

func (h *zkHarness) RawFiles(context.Context) ([]string, error) {
	var out []string
	err := filepath.WalkDir(h.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			out = append(out, "file:"+filepath.ToSlash(p))
		}
		return err
	})
	return out, err
}

// Stall holds the ZooKeeper connection's traffic in the cutter.
func (h *zkHarness) Stall(t *testing.T) storetest.Stall {
	h.cut.Stall()
	s := &stall{held: h.cut.Held(), resume: h.cut.Resume}
	t.Cleanup(s.Resume)
	return s
}

// Cut drops the ZooKeeper connection and refuses new ones: the client's
// requests fail with no server reachable until restore.
func (h *zkHarness) Cut(t *testing.T) (restore func()) {
	h.cut.Cut()
	var once sync.Once
	restore = func() { once.Do(h.cut.Restore) }
	t.Cleanup(restore)
	return restore
}

type stall struct {
	held   <-chan struct{}
	once   sync.Once
	resume func()
}

func (s *stall) Held() <-chan struct{} { return s.held }
func (s *stall) Resume()               { s.once.Do(s.resume) }

// memHarness is one memstore.
type memHarness struct{ m *memstore.Store }

func newMemory() *memHarness { return &memHarness{m: memstore.New(memstore.Options{})} }

func (h *memHarness) Snapshots() storage.SnapshotStore { return h.m }
func (h *memHarness) Files() storage.FileStore         { return h.m }
func (h *memHarness) Orphans() storage.OrphanStore     { return h.m }

func (h *memHarness) RawSnapshot(_ context.Context, id string) ([]byte, offsets.Incarnation, bool, error) {
	data, inc, found := h.m.RawSnapshot(id)
	return data, inc, found, nil
}

func (h *memHarness) SetRawSnapshot(_ context.Context, id string, data []byte) error {
	h.m.SetRawSnapshot(id, data)
	return nil
}

func (h *memHarness) DeleteRawSnapshot(_ context.Context, id string) error {
	h.m.DeleteSnapshot(id)
	return nil
}

func (h *memHarness) RawFile(_ context.Context, path string) ([]byte, bool, error) {
	data, found := h.m.RawFile(path)
	return data, found, nil
}

func (h *memHarness) SetRawFile(_ context.Context, path string, data []byte) error {
	h.m.SetRawFile(path, data)
	return nil
}

func (h *memHarness) RawFiles(context.Context) ([]string, error) { return h.m.Files(), nil }

// faultHarness is faultstore over a memstore; raw access goes to the
// memstore. faultstore has no OrphanStore.
type faultHarness struct {
	*memHarness
	fs *faultstore.Store
}

func newFault() *faultHarness {
	m := newMemory()
	return &faultHarness{memHarness: m, fs: faultstore.New(m.m, m.m)}
}

func (h *faultHarness) Snapshots() storage.SnapshotStore { return h.fs }
func (h *faultHarness) Files() storage.FileStore         { return h.fs }
func (h *faultHarness) Orphans() storage.OrphanStore     { return nil }

// snapshotOps are faultstore's snapshot operations that take a context.
var snapshotOps = []faultstore.Op{faultstore.Create, faultstore.Get, faultstore.Replace, faultstore.DeleteZ, faultstore.Sync, faultstore.List}

// Stall stalls every snapshot operation until Resume, which then applies
// the ones held, as a server does with requests it received.
func (h *faultHarness) Stall(t *testing.T) storetest.Stall {
	gate, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	for _, op := range snapshotOps {
		h.fs.Control(op, func(faultstore.Call) (faultstore.Action, bool) {
			once.Do(func() { close(held) })
			return faultstore.Action{Stall: gate, Keep: true}, true
		})
	}
	s := &stall{held: held, resume: func() {
		h.fs.Reset()
		close(gate)
	}}
	t.Cleanup(s.Resume)
	return s
}

// Cut fails every snapshot operation until restore: reads as unavailable,
// writes as a connection lost once the request was applied.
func (h *faultHarness) Cut(t *testing.T) (restore func()) {
	for _, op := range snapshotOps {
		a := faultstore.Action{Err: faultstore.ErrUnavailable, Keep: true}
		if op.IsWrite() {
			a = faultstore.Action{Apply: true, Err: faultstore.ErrLost, Keep: true}
		}
		h.fs.Control(op, func(faultstore.Call) (faultstore.Action, bool) { return a, true })
	}
	var once sync.Once
	restore = func() { once.Do(h.fs.Reset) }
	t.Cleanup(restore)
	return restore
}

var (
	_ storetest.Stalls  = (*zkHarness)(nil)
	_ storetest.Outages = (*zkHarness)(nil)
	_ storetest.Stalls  = (*faultHarness)(nil)
	_ storetest.Outages = (*faultHarness)(nil)
)
