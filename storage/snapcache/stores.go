package snapcache

import (
	"context"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

// snapshots is the SnapshotStore decorator.
type snapshots struct{ c *Cache }

// snapFlight is one znode read in flight, shared by the readers that
// arrived while it was.
type snapFlight struct {
	done chan struct{}
	// set before the read, read under Cache.mu
	epoch    uint64
	watching bool
	// invalidated: a notification or write for the id arrived while the
	// read was in flight (under Cache.mu)
	invalidated bool
	// the reply, written before done is closed
	snap  offsets.Snapshot
	inc   offsets.Incarnation
	found bool
	err   error
}

func (s snapshots) CheckSnapshot(producerID string, snap offsets.Snapshot) error {
	return s.c.inner.CheckSnapshot(producerID, snap)
}

// GetSnapshot serves the znode from memory when it is cached, else shares a
// read already in flight that was sent under the watch and that no
// notification for the id has detached since, else reads it. Either way the
// answer is as current as the session: after a sync (readindex), current
// for every write committed before the sync. The returned Tables are shared, as ReadOffsets' Buckets
// are: callers must not modify them (the registry only reads them). A read
// whose context has ended fails, as it would without the cache.
func (s snapshots) GetSnapshot(ctx context.Context, producerID string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	return s.get(ctx, producerID, s.c.inner.GetSnapshot, false)
}

// GetSnapshotLinear reads the znode as it stands after a sync sent after
// the call (storage.LinearReads). When the znode is cached, or a read of
// it that the watch covers is in flight, it waits for wait (a shared sync)
// and answers as GetSnapshot does: the memory, or that read, is then
// current (docs/cache.md). Otherwise it reads through with a sync of its
// own (the inner store's LinearReads, which sends both at once, else a
// sync and then a read), never from memory or a read already in flight,
// which may both be older than that sync; the reply is cached, and shared
// with readers arriving while it is in flight, as GetSnapshot's are.
func (s snapshots) GetSnapshotLinear(ctx context.Context, producerID string, wait func(context.Context) error) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	if err := ended(ctx); err != nil {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, err
	}
	c := s.c
	c.mu.Lock()
	_, held := c.items[key{name: producerID}]
	f, reading := c.snapFlights[producerID]
	shared := held || (reading && f.watching && f.epoch == c.epoch)
	c.mu.Unlock()
	if shared && wait != nil {
		if err := wait(ctx); err != nil {
			return offsets.Snapshot{}, offsets.Incarnation{}, false, err
		}
		return s.GetSnapshot(ctx, producerID)
	}
	read := func(ctx context.Context, id string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
		if err := c.inner.Sync(ctx); err != nil {
			return offsets.Snapshot{}, offsets.Incarnation{}, false, err
		}
		return c.inner.GetSnapshot(ctx, id)
	}
	if lr, ok := c.inner.(storage.LinearReads); ok {
		read = func(ctx context.Context, id string) (offsets.Snapshot, offsets.Incarnation, bool, error) {
			return lr.GetSnapshotLinear(ctx, id, nil)
		}
	}
	return s.get(ctx, producerID, read, true)
}

// get is GetSnapshot with read as the store's read; fresh skips memory and
// reads in flight.
func (s snapshots) get(ctx context.Context, producerID string, read func(context.Context, string) (offsets.Snapshot, offsets.Incarnation, bool, error), fresh bool) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	if err := ended(ctx); err != nil {
		return offsets.Snapshot{}, offsets.Incarnation{}, false, err
	}
	c := s.c
	k := key{name: producerID}
	for {
		c.mu.Lock()
		if e, ok := c.getLocked(k); ok && !fresh {
			c.mu.Unlock()
			c.hits.Add(1)
			return e.snap, e.inc, e.found, nil
		}
		f, joined := c.snapFlights[producerID]
		if joined && (fresh || !(f.watching && f.epoch == c.epoch)) {
			// A read sent while no watch covered it may be older than a
			// sync this reader waited for (readindex), and no notification
			// would have detached it: read afresh, and let later readers
			// share this newer read instead.
			joined = false
		}
		if !joined {
			f = &snapFlight{done: make(chan struct{}), epoch: c.epoch, watching: c.watching}
			c.snapFlights[producerID] = f
		}
		c.mu.Unlock()

		if !joined {
			c.misses.Add(1)
			snap, inc, found, err := read(ctx, producerID)
			c.mu.Lock()
			if c.snapFlights[producerID] == f {
				delete(c.snapFlights, producerID)
			}
			if err == nil && f.watching && !f.invalidated && f.epoch == c.epoch {
				c.putLocked(&entry{key: k, size: snapSize(producerID, snap), snap: snap, inc: inc, found: found})
			}
			c.mu.Unlock()
			f.snap, f.inc, f.found, f.err = snap, inc, found, err
			close(f.done)
			return snap, inc, found, err
		}

		c.shared.Add(1)
		select {
		case <-f.done:
		case <-ctx.Done():
			return offsets.Snapshot{}, offsets.Incarnation{}, false, ended(ctx)
		}
		if f.err != nil && retryable(f.err) && ctx.Err() == nil {
			continue // the reader that sent it gave up; read again
		}
		return f.snap, f.inc, f.found, f.err
	}
}

// HoldsSnapshot reports whether the znode's state is cached, without
// counting a hit.
func (s snapshots) HoldsSnapshot(producerID string) bool {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	_, ok := s.c.items[key{name: producerID}]
	return ok
}

// CachedSnapshot returns the znode's cached state, without any I/O or
// waiting (storage.CachedSnapshots): ok is false when it is not cached.
// The token is the entry's own, set when it was cached.
func (s snapshots) CachedSnapshot(producerID string) (offsets.Snapshot, uint64, bool, bool) {
	c := s.c
	c.mu.Lock()
	e, ok := c.getLocked(key{name: producerID})
	c.mu.Unlock()
	if !ok {
		return offsets.Snapshot{}, 0, false, false
	}
	c.hits.Add(1)
	return e.snap, e.token, e.found, true
}

// The writes remove the entry before they are sent (so that a read in
// flight is not cached) and after they return (so that the next read goes
// to ZooKeeper), whatever the outcome: applied, not applied or unknown. A
// create or replace also settles the files this sidecar wrote for snap
// (owner.go): once applied they are the live snapshot's.

func (s snapshots) CreateSnapshot(ctx context.Context, producerID string, snap offsets.Snapshot) (bool, error) {
	w := s.c.beginWrite(producerID)
	created, err := s.c.inner.CreateSnapshot(ctx, producerID, snap)
	s.c.endWrite(producerID, w, snap, created && err == nil, false)
	return created, err
}

func (s snapshots) ReplaceSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation, snap offsets.Snapshot) (bool, error) {
	w := s.c.beginWrite(producerID)
	replaced, err := s.c.inner.ReplaceSnapshotIf(ctx, producerID, inc, snap)
	s.c.endWrite(producerID, w, snap, replaced && err == nil, true)
	return replaced, err
}

func (s snapshots) DeleteSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation) (bool, error) {
	s.c.invalidate(producerID)
	defer s.c.invalidate(producerID)
	return s.c.inner.DeleteSnapshotIf(ctx, producerID, inc)
}

// Sync passes through and keeps every entry: when the session's sync
// returns, the notifications for every write committed before it have
// already removed the entries those writes changed, and updated the index
// (docs/cache.md), so what is left is current. A lost connection, which
// could have dropped notifications, drops everything on its own (lose).
// The registry's reads after a Sync, and the read barrier (readindex), rest
// on this.
func (s snapshots) Sync(ctx context.Context) error {
	return s.c.inner.Sync(ctx)
}

// KnownAbsent reports, without any I/O or waiting, whether the producer is
// known to have no snapshot: absent from the index of producer ids
// (index.go) and not cached. False means unknown, not present
// (storage.AbsenceHints).
func (s snapshots) KnownAbsent(producerID string) bool {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if _, cached := s.c.items[key{name: producerID}]; cached {
		return false // GetSnapshot answers from the entry
	}
	if s.c.knownAbsentLocked(producerID) {
		s.c.absentHits.Add(1)
		return true
	}
	return false
}

func (s snapshots) ListProducerIDs(ctx context.Context) ([]string, error) {
	return s.c.inner.ListProducerIDs(ctx)
}

// files is the FileStore decorator.
type files struct{ c *Cache }

type fileFlight struct {
	done        chan struct{}
	invalidated bool // a delete through the cache started meanwhile
	t           offsets.TableOffsets
	err         error
}

func (f files) PlannedPath(producerID string, tableID int64) string {
	return f.c.innerFiles.PlannedPath(producerID, tableID)
}

// WriteOffsets writes the file and, once it is written, caches its content
// as a read would return it (TableOffsets.InFileOrder), owned by
// producerID (owner.go): the GETs that poll for a snapshot being
// registered read nothing but its znode. A file's name is new and its
// content never changes, so no read of it can be in flight or cached
// already. It is cached only if the watch was set, on the same connection,
// from before the write until now: a deletion of the producer's snapshot
// that no notification reported could leave it cached for good.
func (f files) WriteOffsets(ctx context.Context, producerID string, t offsets.TableOffsets) (string, error) {
	c := f.c
	c.mu.Lock()
	epoch, watched := c.epoch, c.watching || c.unsupported
	c.mu.Unlock()
	path, err := c.innerFiles.WriteOffsets(ctx, producerID, t)
	if err == nil && watched {
		c.putWritten(producerID, path, t, epoch)
	}
	return path, err
}

// putWritten caches a file just written for producerID with content t, if
// it fits and the connection is still the one of epoch. t is kept as it
// is when a read would give the same (a list already in file order) or it
// is an array by bucket id, which fileContent turns into a list on the
// first read: the writer does not modify it (storage.FileStore), and a
// copy of a large register's offsets would cost 24 bytes a bucket while
// the register is still in memory.
func (c *Cache) putWritten(producerID, path string, t offsets.TableOffsets, epoch uint64) {
	size := fileSize(path, t)
	if size > c.maxBytes {
		return
	}
	if t.ByBucket == nil && !t.IsInFileOrder() {
		t = t.InFileOrder()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, reading := c.fileFlights[path]; !reading && c.epoch == epoch {
		c.putLocked(&entry{key: key{file: true, name: path}, size: size, file: t, owner: producerID, pending: true})
	}
}

// fileContent returns a file entry's content as a read gives it, called
// with c.mu held; it may unlock and lock c.mu again. An array by bucket id
// (putWritten) becomes a list once, outside the lock, and the entry keeps
// the list if it is still cached; readers racing on it each build one.
func (c *Cache) fileContent(e *entry) offsets.TableOffsets {
	t := e.file
	if t.ByBucket == nil {
		return t
	}
	c.mu.Unlock()
	list := t.InFileOrder()
	c.mu.Lock()
	if el, ok := c.items[e.key]; ok && el.Value.(*entry) == e {
		e.file = list
	}
	return list
}

// ReadOffsets serves a file from memory when it is cached. A file's content
// never changes, so it stays cached until evicted, deleted through the
// cache, or its owner's snapshot is deleted or changed (owner.go). A read
// is cached only if a cached znode entry names the path when its reply
// arrives (on a server without persistent watches, always). Errors are
// never cached. The returned Buckets are shared: callers must not modify
// them.
func (f files) ReadOffsets(ctx context.Context, path string) (offsets.TableOffsets, error) {
	if err := ended(ctx); err != nil {
		return offsets.TableOffsets{}, err
	}
	c := f.c
	k := key{file: true, name: path}
	for {
		c.mu.Lock()
		if e, ok := c.getLocked(k); ok {
			t := c.fileContent(e)
			c.mu.Unlock()
			c.hits.Add(1)
			return t, nil
		}
		fl, joined := c.fileFlights[path]
		if !joined {
			fl = &fileFlight{done: make(chan struct{})}
			c.fileFlights[path] = fl
		}
		c.mu.Unlock()

		if !joined {
			c.misses.Add(1)
			t, err := c.innerFiles.ReadOffsets(ctx, path)
			c.mu.Lock()
			if c.fileFlights[path] == fl {
				delete(c.fileFlights, path)
			}
			if err == nil && !fl.invalidated {
				if owner, named := c.owners.namer(path); named || c.unsupported {
					c.putLocked(&entry{key: k, size: fileSize(path, t), file: t, owner: owner})
				}
			}
			c.mu.Unlock()
			fl.t, fl.err = t, err
			close(fl.done)
			return t, err
		}

		c.shared.Add(1)
		select {
		case <-fl.done:
		case <-ctx.Done():
			return offsets.TableOffsets{}, ended(ctx)
		}
		if fl.err != nil && retryable(fl.err) && ctx.Err() == nil {
			continue
		}
		return fl.t, fl.err
	}
}

// DeleteOffsets forgets the file, then deletes it.
func (f files) DeleteOffsets(ctx context.Context, path string) error {
	f.c.forgetFile(path)
	defer f.c.forgetFile(path)
	return f.c.innerFiles.DeleteOffsets(ctx, path)
}

func (c *Cache) forgetFile(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key{file: true, name: path}]; ok {
		c.removeLocked(el)
		c.invalidations.Add(1)
	}
	if fl, ok := c.fileFlights[path]; ok {
		fl.invalidated = true
		delete(c.fileFlights, path)
	}
}

// CachedOffsets returns a file's content if it is cached, without any I/O
// or waiting (storage.CachedFiles). The returned Buckets are shared.
func (f files) CachedOffsets(path string) (offsets.TableOffsets, bool) {
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.getLocked(key{file: true, name: path})
	if !ok {
		return offsets.TableOffsets{}, false
	}
	c.hits.Add(1)
	return c.fileContent(e), true
}

// ended reports a read given up because its context ended, as the store
// beneath would (storage.Ended): ErrTimeout after the deadline,
// ErrUnavailable when canceled. A read with an ended context fails even
// when memory holds the answer, as it would without the cache. The cache
// keeps this check of its own: it sits above the portable layer and
// answers from memory without calling the layer, and a read sharing
// another's flight must give up when its own context ends.
func ended(ctx context.Context) error { return storage.Ended(ctx, "snapcache") }

// The decorators offer the registry what it looks for.
var (
	_ storage.SnapshotStore   = snapshots{}
	_ storage.CachedSnapshots = snapshots{}
	_ storage.LinearReads     = snapshots{}
	_ storage.AbsenceHints    = snapshots{}
	_ storage.FileStore       = files{}
	_ storage.CachedFiles     = files{}
)
