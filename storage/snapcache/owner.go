package snapcache

import "github.com/fluss-sidecar/fluss-sidecar/offsets"

// Every cached offsets file belongs to one producer, its owner, so that
// the files of a snapshot leave the cache when the snapshot does, whoever
// deleted or replaced it: another sidecar, a coordinator, cleanup, or this
// sidecar. Without it a file entry would stay until evicted, and a sidecar
// that only reads what others write and delete would fill its cache with
// the files of snapshots that are gone.
//
// A file read is cached only if, when its reply arrives, a cached znode
// entry names the path; that entry's producer owns it. A file this sidecar
// writes is owned by the producer it was written for, cached only while
// the watch is set, and pending until the create or replace that names it
// returns (endWrite).
//
// A notification that the producer's znode was deleted removes every file
// it owns. One that its data changed removes every file it owns but, while
// this sidecar has a create or replace of that znode in flight, the pending
// ones: a create through zkstore is a create and one or more data changes
// in one multi, notified before its reply, and a replace is a data change;
// the files written for them must stay. A lost watch removes every file
// (lose), since a deletion made meanwhile is never notified.
//
// When the write returns applied, its pending files become the live
// snapshot's, unless the cache cannot tell that nothing else changed the
// znode meanwhile: a deletion was notified during the write, another write
// of the znode by this sidecar overlapped it, the connection changed, or,
// for a replace (exactly one data change of its own), more than one data
// change was notified. They are dropped then. A write not applied leaves
// them pending (the registry deletes them through the cache, which
// forgets them); one of unknown outcome too, until a change or deletion of
// the znode is notified.
//
// So a cached file that is not pending was named by its owner's snapshot,
// or written for it, and no deletion or change of that snapshot has been
// notified since; a read whose znode entry was removed by a notification
// before the file's reply arrived is not cached, since no entry names the
// path any more. One window is left, for a create only: a data change by
// another writer of the snapshot just created, notified after the create's
// reply but before endWrite takes the lock, cannot be told from the
// create's own data changes (their number is drawn at random by zkstore),
// and leaves the created snapshot's files cached until the znode is next
// deleted or changed. Another writer replaces only an expired snapshot, so
// that takes a snapshot created already expired. This only decides what
// is kept: what a read answers is as before (docs/cache.md).

// owners ties file entries to producers. It is guarded by Cache.mu.
type owners struct {
	// named maps each path a cached znode entry names to that entry's
	// producer (the last one cached, if several name it).
	named map[string]string
	// owned maps a producer to the paths of the files it owns.
	owned map[string]map[string]struct{}
	// files counts the file entries.
	files int
	// writes holds the creates and replaces this sidecar has in flight,
	// by producer.
	writes map[string]*ownWrites
}

// ownWrites are the writes of one producer's znode in flight.
type ownWrites struct {
	inFlight int
	// overlapped: two were in flight at once
	overlapped bool
	// changes and deletes count the data change and deletion
	// notifications for the producer since the first was sent
	changes, deletes int
}

// writeStart is what one write's end compares with.
type writeStart struct {
	epoch            uint64
	changes, deletes int
}

func newOwners() owners {
	return owners{named: make(map[string]string), owned: make(map[string]map[string]struct{}), writes: make(map[string]*ownWrites)}
}

// name records the paths a cached znode entry names.
func (o *owners) name(e *entry) {
	for _, t := range e.snap.Tables {
		o.named[t.OffsetsPath] = e.key.name
	}
}

// unname forgets the paths of a znode entry being removed.
func (o *owners) unname(e *entry) {
	for _, t := range e.snap.Tables {
		if o.named[t.OffsetsPath] == e.key.name {
			delete(o.named, t.OffsetsPath)
		}
	}
}

// namer returns the producer whose cached znode entry names path.
func (o *owners) namer(path string) (string, bool) {
	id, ok := o.named[path]
	return id, ok
}

// own records a file entry under its owner.
func (o *owners) own(e *entry) {
	paths := o.owned[e.owner]
	if paths == nil {
		paths = make(map[string]struct{})
		o.owned[e.owner] = paths
	}
	paths[e.key.name] = struct{}{}
	o.files++
}

// unown forgets a file entry being removed.
func (o *owners) unown(e *entry) {
	paths := o.owned[e.owner]
	if _, ok := paths[e.key.name]; !ok {
		return
	}
	delete(paths, e.key.name)
	if len(paths) == 0 {
		delete(o.owned, e.owner)
	}
	o.files--
}

// snapshotGoneLocked applies a notification that id's znode was deleted
// or its data changed: it removes the files id owns, but for a data change
// during a write of this sidecar not the pending ones.
func (c *Cache) snapshotGoneLocked(id string, deleted bool) {
	w := c.owners.writes[id]
	switch {
	case w != nil && deleted:
		w.deletes++
	case w != nil:
		w.changes++
	}
	for path := range c.owners.owned[id] {
		if el, ok := c.items[key{file: true, name: path}]; ok && (deleted || w == nil || !el.Value.(*entry).pending) {
			c.removeLocked(el)
			c.invalidations.Add(1)
		}
	}
}

// beginWrite removes id's znode entry before a create or replace of it is
// sent, and records the write.
func (c *Cache) beginWrite(id string) writeStart {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalidateLocked(id)
	w := c.owners.writes[id]
	if w == nil {
		w = &ownWrites{}
		c.owners.writes[id] = w
	}
	w.inFlight++
	w.overlapped = w.overlapped || w.inFlight > 1
	return writeStart{epoch: c.epoch, changes: w.changes, deletes: w.deletes}
}

// endWrite removes id's znode entry again once the write returned, and
// settles the pending files snap names: kept as the live snapshot's if the
// write was applied and nothing else is known to have changed the znode
// meanwhile, else dropped. A write not applied, or of unknown outcome,
// leaves them pending. replace tells a replace (one data change of its
// own) from a create.
func (c *Cache) endWrite(id string, start writeStart, snap offsets.Snapshot, applied, replace bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalidateLocked(id)
	w := c.owners.writes[id]
	changes, deletes, overlapped := w.changes-start.changes, w.deletes-start.deletes, w.overlapped
	if w.inFlight--; w.inFlight == 0 {
		delete(c.owners.writes, id)
	}
	if !applied {
		return
	}
	settled := !overlapped && c.epoch == start.epoch && deletes == 0 && (!replace || changes <= 1)
	for _, t := range snap.Tables {
		el, ok := c.items[key{file: true, name: t.OffsetsPath}]
		if !ok {
			continue
		}
		e := el.Value.(*entry)
		switch {
		case e.owner != id || !e.pending:
		case settled:
			e.pending = false
		default:
			c.removeLocked(el)
			c.invalidations.Add(1)
		}
	}
}

// dropFilesLocked removes every file entry.
func (c *Cache) dropFilesLocked() {
	for k, el := range c.items {
		if k.file {
			c.removeLocked(el)
		}
	}
}
