package lincheck

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// coordinator is a writer that follows a Fluss coordinator's own
// producer-offsets algorithms (docs/storage-format.md §7: register with its three
// attempts, delete, periodic cleanup) directly on ZooKeeper and the
// offsets files, as a coordinator sharing the ZooKeeper root and
// remote.data.dir with the sidecars would. Its znodes and files are written
// by the project's zk and remotestore packages, byte for byte what Fluss
// writes: JSON from flussjson.EncodeSnapshot, created at data version 0 with a
// plain create; one fresh-UUID file per table.
type coordinator struct {
	zc    *zk.Client
	files *remotestore.Store
	// orphaned holds every path the orphan cleanup deleted: a GET that
	// finds one of them missing was hit by W2, not by a sidecar's fault.
	orphaned sync.Map
}

func newCoordinator(t testing.TB, zkAddr, root, dataDir string) *coordinator {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	zc, err := zk.Connect(ctx, zk.Config{Address: zkAddr, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(zc.Close)
	files, err := remotestore.Open(ctx, dataDir, remotestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { files.Close() })
	return &coordinator{zc: zc, files: files}
}

func znode(pid string) string { return zkstore.ProducersPath + "/" + pid }

// tryStore is ProducerOffsetsStore.tryStoreOffsets: write the file, then
// create the znode; on NodeExists delete the file and report false; on any
// other failure delete the file and fail.
func (c *coordinator) tryStore(ctx context.Context, pid string, snap, exp int64) (bool, error) {
	path, err := c.files.WriteOffsets(ctx, pid, offsets.TableOffsets{TableID: tableID,
		Buckets: []offsets.BucketOffset{{BucketID: 0, LogEndOffset: snap}}})
	if err != nil {
		return false, err
	}
	data := flussjson.EncodeSnapshot(offsets.Snapshot{ExpirationTime: exp, Tables: []offsets.FileRef{{TableID: tableID, OffsetsPath: path}}})
	_, err = c.zc.Create(ctx, znode(pid), data, zk.Persistent)
	if err == nil {
		return true, nil
	}
	_ = c.files.DeleteOffsets(context.WithoutCancel(ctx), path)
	if errors.Is(err, zk.ErrNodeExists) {
		return false, nil
	}
	return false, err
}

// read is getProducerOffsetsWithVersion.
func (c *coordinator) read(ctx context.Context, pid string) (offsets.Snapshot, int32, bool, error) {
	data, st, err := c.zc.Get(ctx, znode(pid))
	if errors.Is(err, zk.ErrNoNode) {
		return offsets.Snapshot{}, 0, false, nil
	}
	if err != nil {
		return offsets.Snapshot{}, 0, false, err
	}
	s, err := flussjson.DecodeSnapshot(data)
	return s, st.Version, err == nil, err
}

// deleteIfVersion is deleteSnapshotIfVersion: a versioned delete (NoNode
// counts as done), then the files of the snapshot passed in.
func (c *coordinator) deleteIfVersion(ctx context.Context, pid string, s offsets.Snapshot, version int32) (bool, error) {
	err := c.zc.Delete(ctx, znode(pid), version)
	switch {
	case errors.Is(err, zk.ErrBadVersion):
		return false, nil
	case err != nil && !errors.Is(err, zk.ErrNoNode):
		return false, err
	}
	c.deleteFiles(ctx, s)
	return true, nil
}

func (c *coordinator) deleteFiles(ctx context.Context, s offsets.Snapshot) {
	for _, f := range s.Tables {
		_ = c.files.DeleteOffsets(ctx, f.OffsetsPath) // failures are only logged
	}
}

// register is ProducerOffsetsManager's register: up to three attempts,
// each taking now once. The third RETRY answers ALREADY_EXISTS whatever is
// stored (weakness W8); that answer is recorded as unknown, since it proves
// nothing about the registry.
func (c *coordinator) register(ctx context.Context, pid string, snap int64) Output {
	for range 3 {
		now := time.Now().UnixMilli()
		exp := now + ttlMillis
		ok, err := c.tryStore(ctx, pid, snap, exp)
		if err != nil {
			return Output{Unknown: true, Note: err.Error()}
		}
		if ok {
			return Output{Created: true}
		}
		s, v, found, err := c.read(ctx, pid)
		if err != nil {
			return Output{Unknown: true, Note: err.Error()}
		}
		if !found {
			ok, err := c.tryStore(ctx, pid, snap, exp)
			if err != nil {
				return Output{Unknown: true, Note: err.Error()}
			}
			if ok {
				return Output{Created: true}
			}
			continue // RETRY
		}
		if !s.Expired(now) {
			return Output{}
		}
		deleted, err := c.deleteIfVersion(ctx, pid, s, v)
		if err != nil {
			return Output{Unknown: true, Note: err.Error()}
		}
		if deleted {
			ok, err := c.tryStore(ctx, pid, snap, exp)
			if err != nil {
				return Output{Unknown: true, Note: err.Error()}
			}
			if ok {
				return Output{Created: true}
			}
		}
		s, _, found, err = c.read(ctx, pid)
		if err != nil {
			return Output{Unknown: true, Note: err.Error()}
		}
		if found && !s.Expired(now) {
			return Output{}
		}
	}
	return Output{Unknown: true, Note: "ALREADY_EXISTS after three retries (W8)"}
}

// delete is deleteSnapshot: read; nothing there is done; else an
// unversioned delete (NoNode from a concurrent delete fails the call, as
// in Fluss), then the files of what was read.
func (c *coordinator) delete(ctx context.Context, pid string) Output {
	s, _, found, err := c.read(ctx, pid)
	if err != nil {
		return Output{Unknown: true, Note: err.Error()}
	}
	if !found {
		return Output{}
	}
	if err := c.zc.Delete(ctx, znode(pid), -1); err != nil {
		return Output{Unknown: true, Note: err.Error()}
	}
	c.deleteFiles(ctx, s)
	return Output{}
}

// cleanup is one runCleanup: expired snapshots by versioned delete, then
// orphan files: every producer directory not named by a znode is removed,
// and in the others every file the znode does not name. Like Fluss's, it
// has no grace period, so it can remove the files of a register in flight
// (W2); errors are only logged (here: ignored).
func (c *coordinator) cleanup(ctx context.Context) {
	now := time.Now().UnixMilli()
	ids, err := c.zc.Children(ctx, zkstore.ProducersPath)
	if err != nil {
		return
	}
	for _, pid := range ids {
		s, v, found, err := c.read(ctx, pid)
		if err == nil && found && s.Expired(now) {
			_, _ = c.deleteIfVersion(ctx, pid, s, v)
		}
	}
	valid, err := c.zc.Children(ctx, zkstore.ProducersPath)
	if err != nil {
		return
	}
	isValid := map[string]bool{}
	paths := map[string]bool{}
	for _, pid := range valid {
		isValid[pid] = true
		s, _, found, err := c.read(ctx, pid)
		if err != nil || !found {
			continue // "skipping its files" (W4)
		}
		for _, f := range s.Tables {
			paths[f.OffsetsPath] = true
		}
	}
	dirs, err := c.files.ListProducerDirs(ctx)
	if err != nil {
		return
	}
	for _, pid := range dirs {
		files, err := c.files.ListProducerFiles(ctx, pid)
		if err != nil {
			continue
		}
		for _, f := range files {
			if !isValid[pid] || !paths[f.Path] {
				c.orphaned.Store(f.Path, true)
				_ = c.files.DeleteOffsets(ctx, f.Path)
			}
		}
		_, _ = c.files.PruneEmptyDirs(ctx, pid)
	}
}

// driveCoordinators runs n coordinator writers doing random REGISTERs and
// DELETEs on ids, and one cleanup loop, until ctx ends; their calls go into
// h as clients firstID, firstID+1, …
func driveCoordinators(ctx context.Context, h *History, coords []*coordinator, ids []string, snaps *snapIDs, cnt *counters, firstID int) {
	var wg sync.WaitGroup
	for i, c := range coords {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(rand.Uint64(), uint64(i)))
			for ctx.Err() == nil {
				in := Input{Producer: ids[rng.IntN(len(ids))], Via: "coord"}
				octx, cancel := context.WithTimeout(context.Background(), clientTimeout)
				call := h.Now()
				var out Output
				if rng.IntN(100) < 60 {
					in.Kind, in.Snap = Register, snaps.next()
					out = c.register(octx, in.Producer, in.Snap)
				} else {
					in.Kind = Delete
					out = c.delete(octx, in.Producer)
				}
				ret := h.Now()
				cancel()
				h.Add(firstID+i, in, call, out, ret)
				switch {
				case out.Unknown:
					cnt.unknown.Add(1)
				case in.Kind == Register && out.Created:
					cnt.known.Add(1)
					cnt.created.Add(1)
				case in.Kind == Register:
					cnt.known.Add(1)
					cnt.exists.Add(1)
				default:
					cnt.known.Add(1)
					cnt.deleted.Add(1)
				}
				time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond) // the sleep is under test: a client's random pace
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := coords[0]
		for ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
			c.cleanup(cctx)
			cancel()
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	wg.Wait()
}
