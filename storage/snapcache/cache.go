// Package snapcache serves producer snapshot reads from memory while
// nothing changed. It wraps a storage.SnapshotStore (the producer znodes)
// and a storage.FileStore (the offsets files) as decorators:
//
//   - a znode read is cached until ZooKeeper tells this client's session that
//     the znode changed: one persistent recursive watch on /producers
//     delivers every creation, data change and deletion below it, and the
//     notification removes the entry on go-zookeeper's receiving goroutine,
//     before any later reply reaches a caller. docs/cache.md gives the
//     consistency argument;
//   - an offsets file is cached by path: files are named by a random UUID,
//     written once and never rewritten, so a path's content never changes.
//     Each file entry belongs to one producer (owner.go): the one whose
//     cached snapshot named it when it was read, or the one this sidecar
//     wrote it for. A notification that the producer's znode was deleted or
//     changed, by any writer, removes its files with the znode entry, so
//     the cache holds no file of a snapshot that is gone;
//   - concurrent reads of one znode or one file share one read
//     (single flight);
//   - this sidecar's own writes pass through the decorator and remove the
//     entry before and after they are sent, whatever their outcome;
//   - when the session is lost or expires (or the connection drops, which
//     ends the watch), every znode and file entry is dropped and nothing
//     is cached until the watch is set again on the new connection.
//
// The cache is bounded in entries and in bytes (least recently used first
// out), cached absences also on their own (MaxAbsences), and counts hits,
// misses, shared reads, evictions and invalidations (Stats).
//
// It also keeps the set of producer ids (index.go), so that a register of a
// new producer learns without a read that there is no snapshot to keep.
package snapcache

import (
	"container/list"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/zkstore"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// Watcher is the part of a ZooKeeper client the cache needs; *zk.Client
// implements it. OnEvent listeners must run on the goroutine that receives
// the server's replies, before any later reply is handed to a caller.
type Watcher interface {
	OnEvent(fn func(zk.Event)) (unregister func())
	AddPersistentRecursiveWatch(ctx context.Context, path string) error
	LogicalPath(full string) (path string, ok bool)
}

// Defaults for Config.
const (
	DefaultMaxEntries = 100_000
	DefaultMaxBytes   = 64 << 20
	// DefaultMaxAbsences bounds the cached absences: ids read while they
	// had no snapshot, which no later write may ever remove.
	DefaultMaxAbsences = 4096
	defaultArmTimeout  = 10 * time.Second
	defaultArmRetry    = time.Second
)

// Config holds a Cache's dependencies and bounds.
type Config struct {
	// Watcher is the ZooKeeper client whose session the Snapshots store
	// reads through. It must be the same client: the consistency argument
	// rests on notifications and replies sharing one connection.
	Watcher   Watcher
	Snapshots storage.SnapshotStore
	Files     storage.FileStore
	// MaxEntries bounds the number of cached znodes and files together
	// (default DefaultMaxEntries).
	MaxEntries int
	// MaxBytes bounds their estimated size in memory (default
	// DefaultMaxBytes). An entry larger than that is never cached.
	MaxBytes int64
	// MaxAbsences bounds the cached absences among those entries
	// (default DefaultMaxAbsences, and never more than MaxEntries); the
	// least recently used absence goes first.
	MaxAbsences int
	Logger      hclog.Logger
	// ArmTimeout bounds one attempt to set the watch; ArmRetry is the pause
	// between attempts while the connection is up but the attempt failed.
	ArmTimeout time.Duration
	ArmRetry   time.Duration
}

// Stats are the cache's counters since it started, and its size now.
type Stats struct {
	// Hits are reads served from memory, Misses reads sent to the store,
	// Shared reads that waited for a read of the same key already in flight.
	Hits, Misses, Shared uint64
	// Evictions are entries removed to respect the bounds, absences
	// beyond MaxAbsences included.
	Evictions uint64
	// Invalidations are znode entries removed because the znode changed
	// (a notification or this sidecar's own write), and file entries
	// removed by a delete through the cache or because their producer's
	// znode was deleted or changed.
	Invalidations uint64
	// Drops count the times every entry was dropped: session or
	// connection lost (a Sync keeps them).
	Drops uint64
	// Entries and Bytes are the current size; Absences the cached
	// absences among Entries, Files the offsets files among them.
	Entries  int
	Bytes    int64
	Absences int
	Files    int
	// Watching is true while the watch is set and znode reads are cached.
	Watching bool
	// KnownAbsent counts the times the index of producer ids told a
	// register, without a read, that there was no snapshot; IndexedIDs is
	// the index's size now, -1 when there is none (index.go).
	KnownAbsent uint64
	IndexedIDs  int
	// IndexListTime is how long the last listing that installed an index
	// took, from its request to the index's installation; 0 before one.
	IndexListTime time.Duration
}

// Cache is the shared state of the two decorators. It is safe for
// concurrent use.
type Cache struct {
	w          Watcher
	inner      storage.SnapshotStore
	innerFiles storage.FileStore
	maxEntries int
	maxBytes   int64
	maxAbsent  int
	armTimeout time.Duration
	armRetry   time.Duration
	log        hclog.Logger

	mu          sync.Mutex
	lru         list.List // of *entry, most recently used first
	items       map[key]*list.Element
	bytes       int64
	absences    list.List // of *entry, the cached absences, most recently used first
	owners      owners    // owner.go
	snapFlights map[string]*snapFlight
	fileFlights map[string]*fileFlight
	// watching is true while the watch is known to be set on the current
	// connection; epoch changes each time that starts or stops being so. A
	// read is cached only if watching held, in the same epoch, from before
	// it was sent until its reply arrived.
	watching    bool
	epoch       uint64
	tokens      uint64 // the last entry token handed out
	unsupported bool
	index       childIndex // index.go
	// indexListTime is the last installed listing's duration (index.go).
	indexListTime time.Duration

	hits, misses, shared, evictions, invalidations, drops, absentHits atomic.Uint64

	unregister func()
	kick       chan struct{}
	done       chan struct{}
	closeOnce  sync.Once
	wg         sync.WaitGroup
}

type key struct {
	file bool
	name string // producer id or offsets path
}

type entry struct {
	key  key
	size int64
	// token is unique to this entry among all entries ever cached
	// (storage.CachedSnapshots)
	token uint64
	// znode entries
	snap  offsets.Snapshot
	inc   offsets.Incarnation
	found bool
	// absEl is the entry's element in Cache.absences, for an absence
	absEl *list.Element
	// file entries, and the producer they belong to (owner.go)
	file  offsets.TableOffsets
	owner string
	// pending: written by this sidecar for a snapshot whose write has not
	// returned applied yet (owner.go)
	pending bool
}

// New starts a cache: it listens to the watcher's events and sets the
// watch, waiting for that first attempt (bounded by ctx and ArmTimeout). If
// the attempt fails the cache still works, without caching znodes, and
// keeps trying in the background; if the server does not support
// persistent watches, znodes are never cached (files still are).
func New(ctx context.Context, cfg Config) (*Cache, error) {
	if cfg.Watcher == nil || cfg.Snapshots == nil || cfg.Files == nil {
		return nil, errors.New("snapcache: watcher, snapshot store and file store are required")
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = DefaultMaxEntries
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxAbsences <= 0 {
		cfg.MaxAbsences = DefaultMaxAbsences
	}
	cfg.MaxAbsences = min(cfg.MaxAbsences, cfg.MaxEntries)
	if cfg.ArmTimeout <= 0 {
		cfg.ArmTimeout = defaultArmTimeout
	}
	if cfg.ArmRetry <= 0 {
		cfg.ArmRetry = defaultArmRetry
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	c := &Cache{
		w: cfg.Watcher, inner: cfg.Snapshots, innerFiles: cfg.Files,
		maxEntries: cfg.MaxEntries, maxBytes: cfg.MaxBytes, maxAbsent: cfg.MaxAbsences,
		armTimeout: cfg.ArmTimeout, armRetry: cfg.ArmRetry,
		log:         cfg.Logger.Named("snapcache"),
		items:       make(map[key]*list.Element),
		owners:      newOwners(),
		snapFlights: make(map[string]*snapFlight),
		fileFlights: make(map[string]*fileFlight),
		kick:        make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	c.unregister = c.w.OnEvent(c.onEvent)
	c.arm(ctx)
	c.kickArm() // the arm loop retries the watch if needed, and lists the ids
	c.wg.Add(1)
	go c.armLoop()
	return c, nil
}

// Close stops listening. The decorators keep working afterwards, without
// caching znodes. It is idempotent.
func (c *Cache) Close() {
	c.closeOnce.Do(func() {
		c.unregister()
		close(c.done)
		c.wg.Wait()
		c.lose(false)
	})
}

// Snapshots returns the decorated snapshot store.
func (c *Cache) Snapshots() storage.SnapshotStore { return snapshots{c} }

// Files returns the decorated file store.
func (c *Cache) Files() storage.FileStore { return files{c} }

// Stats returns the counters and the current size.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	entries, bytes, watching := len(c.items), c.bytes, c.watching
	absences, files := c.absences.Len(), c.owners.files
	indexed := -1
	if c.index.state == indexReady {
		indexed = len(c.index.ids)
	}
	listTime := c.indexListTime
	c.mu.Unlock()
	return Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Shared: c.shared.Load(),
		Evictions: c.evictions.Load(), Invalidations: c.invalidations.Load(), Drops: c.drops.Load(),
		Entries: entries, Bytes: bytes, Absences: absences, Files: files, Watching: watching,
		KnownAbsent: c.absentHits.Load(), IndexedIDs: indexed, IndexListTime: listTime,
	}
}

// onEvent runs on go-zookeeper's receiving goroutine: it must not block.
func (c *Cache) onEvent(ev zk.Event) {
	switch ev.Type {
	case zk.EventSession:
		switch ev.State {
		case zk.StateHasSession:
			c.kickArm()
		case zk.StateDisconnected, zk.StateExpired, zk.StateAuthFailed:
			c.lose(true)
		}
	case zk.EventNodeCreated, zk.EventNodeDeleted, zk.EventNodeDataChanged:
		logical, ok := c.w.LogicalPath(ev.Path)
		if !ok {
			return
		}
		rest, ok := strings.CutPrefix(logical, zkstore.ProducersPath+"/")
		if !ok {
			return
		}
		id, below, _ := strings.Cut(rest, "/")
		c.mu.Lock()
		c.invalidateLocked(id)
		if below == "" && ev.Type != zk.EventNodeCreated {
			// The snapshot whose files this sidecar holds is gone or
			// replaced (owner.go).
			c.snapshotGoneLocked(id, ev.Type == zk.EventNodeDeleted)
		}
		if below == "" && ev.Type != zk.EventNodeDataChanged {
			c.indexEventLocked(id, ev.Type == zk.EventNodeCreated)
		}
		c.mu.Unlock()
	}
}

func (c *Cache) kickArm() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// armLoop sets the watch again after each new connection, and lists the
// producer ids once it is set.
func (c *Cache) armLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.done:
			return
		case <-c.kick:
		}
		for _, step := range []func(context.Context) bool{c.arm, c.listIndex} {
			for !step(context.Background()) {
				t := time.NewTimer(c.armRetry)
				select {
				case <-c.done:
					t.Stop()
					return
				case <-t.C:
				}
			}
		}
	}
}

// arm sets the watch unless it is set; false means try again later.
func (c *Cache) arm(ctx context.Context) bool {
	c.mu.Lock()
	if c.watching || c.unsupported {
		c.mu.Unlock()
		return true
	}
	epoch := c.epoch
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.armTimeout)
	err := c.w.AddPersistentRecursiveWatch(ctx, zkstore.ProducersPath)
	cancel()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case errors.Is(err, zk.ErrWatchUnsupported):
		c.unsupported = true
		c.log.Warn("ZooKeeper does not support persistent watches (3.6+): producer snapshots are read from ZooKeeper on every request; offsets files are still cached")
		return true
	case err != nil:
		c.log.Debug("could not set the producers watch; will retry", "error", err)
		return false
	case c.epoch != epoch:
		// The connection changed meanwhile: the watch may be on the old one.
		// A new connection kicks arm again.
		return true
	}
	c.watching = true
	c.epoch++
	c.log.Debug("watching producer snapshots; znode reads are cached")
	return true
}

// lose forgets every znode entry, and every file entry (a deletion made
// while the watch is not set is never notified), and stops caching until
// the watch is set again.
func (c *Cache) lose(count bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropZnodesLocked()
	c.dropFilesLocked()
	c.dropIndexLocked(false)
	if c.watching {
		c.watching = false
		c.log.Debug("producers watch lost; znode cache dropped")
	}
	c.epoch++
	if count {
		c.drops.Add(1)
	}
}

func (c *Cache) dropZnodesLocked() {
	for k, el := range c.items {
		if !k.file {
			c.removeLocked(el)
		}
	}
	for id, f := range c.snapFlights {
		f.invalidated = true
		delete(c.snapFlights, id)
	}
}

// invalidate removes a producer's znode entry and detaches a read of it in
// flight, whose reply will not be cached or shared with later readers.
func (c *Cache) invalidate(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalidateLocked(id)
}

func (c *Cache) invalidateLocked(id string) {
	if el, ok := c.items[key{name: id}]; ok {
		c.removeLocked(el)
		c.invalidations.Add(1)
	}
	if f, ok := c.snapFlights[id]; ok {
		f.invalidated = true
		delete(c.snapFlights, id)
	}
}

func (c *Cache) removeLocked(el *list.Element) {
	e := c.lru.Remove(el).(*entry)
	delete(c.items, e.key)
	c.bytes -= e.size
	switch {
	case e.key.file:
		c.owners.unown(e)
	case !e.found:
		c.absences.Remove(e.absEl)
	default:
		c.owners.unname(e)
	}
}

// putLocked adds e, replacing an entry of the same key, and evicts the
// least recently used entries beyond the bounds.
func (c *Cache) putLocked(e *entry) {
	if e.size > c.maxBytes {
		return
	}
	if el, ok := c.items[e.key]; ok {
		c.removeLocked(el)
	}
	c.tokens++
	e.token = c.tokens
	c.items[e.key] = c.lru.PushFront(e)
	c.bytes += e.size
	switch {
	case e.key.file:
		c.owners.own(e)
	case !e.found:
		e.absEl = c.absences.PushFront(e)
	default:
		c.owners.name(e)
	}
	for c.absences.Len() > c.maxAbsent {
		c.removeLocked(c.items[c.absences.Back().Value.(*entry).key])
		c.evictions.Add(1)
	}
	for len(c.items) > c.maxEntries || c.bytes > c.maxBytes {
		c.removeLocked(c.lru.Back())
		c.evictions.Add(1)
	}
}

// getLocked returns the entry for k, marking it most recently used.
func (c *Cache) getLocked(k key) (*entry, bool) {
	el, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(el)
	e := el.Value.(*entry)
	if e.absEl != nil {
		c.absences.MoveToFront(e.absEl)
	}
	return e, true
}

// Estimated sizes: the entry, its list elements and map slot, and the
// strings and slices it holds; ownerOverhead is a slot in the maps that
// tie files to producers (owner.go).
const (
	entryOverhead = 160
	ownerOverhead = 64
)

func snapSize(id string, s offsets.Snapshot) int64 {
	n := int64(entryOverhead + len(id) + (16+ownerOverhead)*len(s.Tables))
	for _, t := range s.Tables {
		n += int64(len(t.OffsetsPath))
	}
	return n
}

func fileSize(path string, t offsets.TableOffsets) int64 {
	// An array by bucket id is counted as the list it becomes on its
	// first read (fileContent).
	return int64(entryOverhead + ownerOverhead + len(path) + 24*t.Len())
}

// retryable reports whether a shared read's error belongs to the reader
// that sent it (its context ended) rather than to the store, so that a
// waiter whose own context is still live should read again.
func retryable(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
