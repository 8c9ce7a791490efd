package storeharness

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
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// ZooKeeper is zkstore over a real ZooKeeper, reached through a cutter
// (so that it can stall and be cut off), and remote over file:// in a
// temporary directory, which is also the OrphanStore; both behind the
// portable layer. Raw access goes through another session, never cut
// off, and the local directory.
type ZooKeeper struct {
	// Client is the session the stores use, for a cache's watches.
	Client *zk.Client
	// ZK and Remote are the backends behind the layer.
	ZK     *zkstore.Store
	Remote *remotestore.Store

	snaps storage.SnapshotStore
	files storage.FilesAndOrphans
	raw   *gozk.Conn // straight to the server, never cut off
	root  string     // the stores' ZooKeeper root
	dir   string     // the stores' remote.data.dir
	cut   *zktest.Cutter
}

// NewZooKeeper builds the stores on the ZooKeeper server at addr, under a
// root of their own, and closes them with t.Cleanup.
func NewZooKeeper(t *testing.T, addr string) *ZooKeeper {
	t.Helper()
	// The deadline only prevents a hang.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cut := zktest.NewCutter(t, addr)
	root := zktest.UniqueRoot()
	zc, err := zk.Connect(ctx, zk.Config{Address: cut.Addr(), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	dir := t.TempDir()
	files, err := remotestore.Open(ctx, "file://"+dir, remotestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	zs := zkstore.New(zc)
	return &ZooKeeper{
		Client: zc, ZK: zs, Remote: files,
		snaps: storage.CheckedSnapshots(zs), files: storage.CheckedFilesAndOrphans(files),
		raw: zktest.RawConn(t, addr), root: root, dir: dir, cut: cut,
	}
}

func (h *ZooKeeper) Snapshots() storage.SnapshotStore { return h.snaps }
func (h *ZooKeeper) Files() storage.FileStore         { return h.files }
func (h *ZooKeeper) Orphans() storage.OrphanStore     { return h.files }

// FilesAndOrphans is Files and Orphans in one.
func (h *ZooKeeper) FilesAndOrphans() storage.FilesAndOrphans { return h.files }

// Inner is zkstore and remote, the stores the layer wraps.
func (h *ZooKeeper) Inner() (storage.SnapshotStore, storage.FileStore) { return h.ZK, h.Remote }

func (h *ZooKeeper) znode(id string) string { return h.root + zkstore.ProducersPath + "/" + id }

func (h *ZooKeeper) RawSnapshot(_ context.Context, id string) ([]byte, offsets.Incarnation, bool, error) {
	data, st, err := h.raw.Get(h.znode(id))
	if errors.Is(err, gozk.ErrNoNode) {
		return nil, offsets.Incarnation{}, false, nil
	}
	if err != nil {
		return nil, offsets.Incarnation{}, false, err
	}
	return data, offsets.Incarnation{Czxid: st.Czxid, Version: st.Version}, true, nil
}

func (h *ZooKeeper) SetRawSnapshot(_ context.Context, id string, data []byte) error {
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

func (h *ZooKeeper) DeleteRawSnapshot(_ context.Context, id string) error {
	if err := h.raw.Delete(h.znode(id), -1); err != nil && !errors.Is(err, gozk.ErrNoNode) {
		return err
	}
	return nil
}

// local maps a path the file store returns to the local file.
func (h *ZooKeeper) local(path string) (string, error) {
	rest, ok := strings.CutPrefix(path, "file:")
	if !ok || !strings.HasPrefix(rest, h.dir+"/") {
		return "", fmt.Errorf("%s is not a file under %s", path, h.dir)
	}
	return filepath.FromSlash(rest), nil
}

func (h *ZooKeeper) RawFile(_ context.Context, path string) ([]byte, bool, error) {
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

func (h *ZooKeeper) SetRawFile(_ context.Context, path string, data []byte) error {
	p, err := h.local(path)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o666)
}

func (h *ZooKeeper) RawFiles(context.Context) ([]string, error) {
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
func (h *ZooKeeper) Stall(t *testing.T) storetest.Stall {
	h.cut.Stall()
	s := NewStall(h.cut.Held(), h.cut.Resume)
	t.Cleanup(s.Resume)
	return s
}

// Cut drops the ZooKeeper connection and refuses new ones: the client's
// requests fail with no server reachable until restore.
func (h *ZooKeeper) Cut(t *testing.T) (restore func()) {
	h.cut.Cut()
	var once sync.Once
	restore = func() { once.Do(h.cut.Restore) }
	t.Cleanup(restore)
	return restore
}

var (
	_ storetest.Stalls  = (*ZooKeeper)(nil)
	_ storetest.Outages = (*ZooKeeper)(nil)
	_ storetest.Wrapper = (*ZooKeeper)(nil)
	_ storetest.Wrapper = (*Memory)(nil)
)
