// Package memstore keeps producer snapshots and offsets files in memory,
// with the semantics the registry relies on from ZooKeeper and remote
// storage: creation ids (zxids) that tell incarnations apart, data versions
// that start above 0 for a created snapshot and grow with each replace,
// conditional writes, and the same encodings and size limit (a snapshot
// whose znode would exceed the limit is refused). It implements
// storage.SnapshotStore, storage.FileStore and storage.OrphanStore, so
// the registry runs on it unchanged; it backs embedded mode and the
// fault-injection tests. It is run behind the portable layer
// (storage.CheckedSnapshots and storage.CheckedFilesAndOrphans), which
// refuses ended contexts and bad producer ids before a call reaches it:
// it checks neither itself, having no path or connection they could
// harm. The conformance suite (storage/storetest) holds it, behind the
// layer, to the same cases as the ZooKeeper and remote stores.
package memstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// DefaultMaxSnapshotBytes is the default znode size limit: ZooKeeper's
// default jute.maxbuffer less the room the ZooKeeper store keeps for
// headers.
const DefaultMaxSnapshotBytes = zk.DefaultServerMaxBuffer - zk.RequestOverhead

// Options configures a Store.
type Options struct {
	// Dir is the prefix of offsets paths (default "mem:"); files are named
	// <Dir>/producers/<id>/<table>/<uuid>.offsets.
	Dir string
	// MaxSnapshotBytes bounds an encoded snapshot (default
	// DefaultMaxSnapshotBytes).
	MaxSnapshotBytes int
	// Now timestamps files for orphan cleanup (default time.Now).
	Now func() time.Time
	// NewUUID names files (default random v4).
	NewUUID func() string
}

// Store is an in-memory snapshot and file store. It is safe for concurrent
// use.
type Store struct {
	producers string // "<Dir>/producers"
	maxBytes  int
	now       func() time.Time
	newUUID   func() string

	mu     sync.Mutex
	zxid   int64
	znodes map[string]*znode
	files  map[string]file
}

type znode struct {
	data    []byte // exactly the bytes a coordinator stores
	czxid   int64
	version int32
}

type file struct {
	data    []byte
	modTime time.Time
}

// New returns an empty store.
func New(opts Options) *Store {
	if opts.Dir == "" {
		opts.Dir = "mem:"
	}
	if opts.MaxSnapshotBytes <= 0 {
		opts.MaxSnapshotBytes = DefaultMaxSnapshotBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewUUID == nil {
		opts.NewUUID = func() string { return uuid.NewString() }
	}
	return &Store{
		producers: strings.TrimSuffix(opts.Dir, "/") + "/" + remotestore.ProducersDirName,
		maxBytes:  opts.MaxSnapshotBytes,
		now:       opts.Now,
		newUUID:   opts.NewUUID,
		znodes:    map[string]*znode{},
		files:     map[string]file{},
	}
}

// CheckSnapshot refuses a snapshot larger than MaxSnapshotBytes.
func (s *Store) CheckSnapshot(producerID string, snap offsets.Snapshot) error {
	_, err := s.encode(producerID, snap)
	return err
}

func (s *Store) encode(producerID string, snap offsets.Snapshot) ([]byte, error) {
	data := flussjson.EncodeSnapshot(snap)
	if len(data) > s.maxBytes {
		return nil, storeerr.New(storeerr.ErrTooLarge, false,
			fmt.Errorf("memstore: snapshot of %s is %d bytes, limit %d", producerID, len(data), s.maxBytes))
	}
	return data, nil
}

// CreateSnapshot creates the snapshot unless one exists, at a data version
// in [1, zkstore.MaxInitialVersion] as the ZooKeeper store does.
func (s *Store) CreateSnapshot(ctx context.Context, producerID string, snap offsets.Snapshot) (bool, error) {
	data, err := s.encode(producerID, snap)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.znodes[producerID]; ok {
		return false, nil
	}
	s.zxid++
	s.znodes[producerID] = &znode{data: data, czxid: s.zxid, version: 1 + rand.Int32N(zkstore.MaxInitialVersion)}
	return true, nil
}

// GetSnapshot reads a snapshot.
func (s *Store) GetSnapshot(ctx context.Context, producerID string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	s.mu.Lock()
	z, ok := s.znodes[producerID]
	var data []byte
	var inc offsets.Incarnation
	if ok {
		data, inc = z.data, offsets.Incarnation{Czxid: z.czxid, Version: z.version}
	}
	s.mu.Unlock()
	if !ok {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, nil
	}
	snap, err := flussjson.DecodeSnapshot(data)
	if err != nil {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, storeerr.New(storeerr.ErrCorrupt, false, err)
	}
	return snap, inc, true, nil
}

// ReplaceSnapshotIf overwrites incarnation inc at its version.
func (s *Store) ReplaceSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation, snap offsets.Snapshot) (bool, error) {
	data, err := s.encode(producerID, snap)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	z, ok := s.znodes[producerID]
	if !ok || z.czxid != inc.Czxid || z.version != inc.Version {
		return false, nil
	}
	s.zxid++
	z.data, z.version = data, z.version+1
	return true, nil
}

// DeleteSnapshotIf deletes incarnation inc at its version; deleted is true
// also when nothing is there.
func (s *Store) DeleteSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z, ok := s.znodes[producerID]
	if !ok {
		return true, nil
	}
	if z.czxid != inc.Czxid || z.version != inc.Version {
		return false, nil
	}
	s.zxid++
	delete(s.znodes, producerID)
	return true, nil
}

// DeleteSnapshot deletes whatever snapshot is there, as a coordinator's
// delete does; it reports whether one was.
func (s *Store) DeleteSnapshot(producerID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.znodes[producerID]
	delete(s.znodes, producerID)
	return ok
}

// SetRawSnapshot stores data as the producer's znode (a new incarnation at
// version 0 when absent, else the next version), whatever it holds: tests
// use it to plant what another writer (or a corruption) would leave.
func (s *Store) SetRawSnapshot(producerID string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.zxid++
	if z, ok := s.znodes[producerID]; ok {
		z.data, z.version = data, z.version+1
		return
	}
	s.znodes[producerID] = &znode{data: data, czxid: s.zxid}
}

// Sync returns at once: an in-memory store has no lagging replica.
func (s *Store) Sync(context.Context) error {
	return nil
}

// ListProducerIDs lists the producers with a snapshot, sorted.
func (s *Store) ListProducerIDs(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.znodes))
	for id := range s.znodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// PlannedPath returns a path as long as WriteOffsets would return.
func (s *Store) PlannedPath(producerID string, tableID int64) string {
	return s.producers + "/" + producerID + "/" + strconv.FormatInt(tableID, 10) + "/" +
		"00000000-0000-0000-0000-000000000000" + remotestore.OffsetsFileSuffix
}

// WriteOffsets stores t under a new UUID-named path, encoded as Fluss does.
// The producer id is the layer's to check.
func (s *Store) WriteOffsets(ctx context.Context, producerID string, t offsets.TableOffsets) (string, error) {
	data, err := flussjson.EncodeTableOffsets(t)
	if err != nil {
		return "", err
	}
	path := s.producers + "/" + producerID + "/" + strconv.FormatInt(t.TableID, 10) + "/" + s.newUUID() + remotestore.OffsetsFileSuffix
	s.mu.Lock()
	s.files[path] = file{data: data, modTime: s.now()}
	s.mu.Unlock()
	return path, nil
}

// ReadOffsets reads a file; a missing one gives an error matching
// storage.ErrNotFound, a path outside the store one matching
// storage.ErrOutsidePath.
func (s *Store) ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error) {
	if err := s.checkPath(path); err != nil {
		return offsets.TableOffsets{}, err
	}
	s.mu.Lock()
	f, ok := s.files[path]
	s.mu.Unlock()
	if !ok {
		return offsets.TableOffsets{}, fmt.Errorf("memstore: %w: %s", storage.ErrNotFound, path)
	}
	t, err := flussjson.DecodeTableOffsets(f.data)
	if err != nil {
		return offsets.TableOffsets{}, storeerr.New(storeerr.ErrCorrupt, false, fmt.Errorf("memstore: offsets file %s: %w", path, err))
	}
	return t, nil
}

// DeleteOffsets deletes a file; a missing one is not an error, a path
// outside the store is refused.
func (s *Store) DeleteOffsets(ctx context.Context, path string) error {
	if err := s.checkPath(path); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.files, path)
	s.mu.Unlock()
	return nil
}

// Files returns every file path, sorted.
func (s *Store) Files() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// HasFile reports whether path exists.
func (s *Store) HasFile(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.files[path]
	return ok
}

// checkPath accepts, as the remote store does, only a file in a table
// directory of a producer directory of this store:
// {producers}/{producer}/{table}/{file}.
func (s *Store) checkPath(path string) error {
	rel, ok := strings.CutPrefix(path, s.producers+"/")
	if !ok || !storage.CheckFileRel(rel) {
		return fmt.Errorf("memstore: %w: %s is not a file in a table directory of %s", storage.ErrOutsidePath, path, s.producers)
	}
	return nil
}

// ListProducerDirs lists the producer ids that have files, sorted.
func (s *Store) ListProducerDirs(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	for _, p := range s.Files() {
		rest := strings.TrimPrefix(p, s.producers+"/")
		if id, _, ok := strings.Cut(rest, "/"); ok {
			seen[id] = true
		}
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// ListProducerFiles lists a producer's files.
func (s *Store) ListProducerFiles(ctx context.Context, producerID string) ([]storage.FileInfo, error) {
	prefix := s.producers + "/" + producerID + "/"
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []storage.FileInfo
	for p, f := range s.files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		table, _, _ := strings.Cut(rest, "/")
		out = append(out, storage.FileInfo{Path: p, TableDir: table, ModTime: f.modTime})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// Qualify returns path itself for a path of this store.
func (s *Store) Qualify(path string) (string, error) {
	if err := s.checkPath(path); err != nil {
		return "", err
	}
	return path, nil
}

// PruneEmptyDirs reports whether the producer has no files left; an
// in-memory store has no directories to remove.
func (s *Store) PruneEmptyDirs(ctx context.Context, producerID string) (bool, error) {
	files, err := s.ListProducerFiles(ctx, producerID)
	return err == nil && len(files) == 0, err
}
