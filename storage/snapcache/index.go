package snapcache

import (
	"context"
	"errors"
	"time"
)

// The index of producer ids: the children of /producers, listed once the
// watch is set on a connection and kept current by the watch's creation
// and deletion notifications. It lets the cache say, without a read, that
// a producer has no snapshot (snapshots.KnownAbsent), which a register of a
// new producer asks before it writes any file.
//
// Its consistency is the entries': an id is known absent only if it was
// absent from the listing and no notification since says it was created.
// ZooKeeper delivers a notification before the reply of any later request
// of the session, so a listing's reply reflects every change notified
// before it; the changes notified after it are applied as they come. The
// gap between the listing's reply and its installation is covered by
// recording every id notified while the listing is in flight and leaving
// those unknown (neither present nor absent) until a later notification
// settles them.
//
// The index is dropped with the znode entries (session or connection lost;
// a Sync keeps it) and listed again by the arm loop. It holds at most MaxEntries ids:
// a larger listing, or growth beyond it, leaves the cache without one until
// the next connection, as does a listing that fails (a failure that is not
// the connection's own, such as a reply larger than the client's buffer,
// would fail again; a lost connection lists again anyway).

// indexState is where the index stands.
type indexState int

const (
	indexNone    indexState = iota // no index: nothing is known absent
	indexListing                   // a listing is in flight
	indexReady                     // ids is the set of children
	indexOff                       // over MaxEntries, or the listing failed: not listed again until the next connection
)

type childIndex struct {
	state indexState
	ids   map[string]struct{}
	// unknown holds, while listing, every id notified since the listing
	// was sent; once ready, those of them not notified since.
	unknown map[string]struct{}
}

// knownAbsentLocked reports whether id is known to have no snapshot.
func (c *Cache) knownAbsentLocked(id string) bool {
	if !c.watching || c.index.state != indexReady {
		return false
	}
	if _, ok := c.index.ids[id]; ok {
		return false
	}
	_, unknown := c.index.unknown[id]
	return !unknown
}

// indexEventLocked applies a creation (created) or deletion of the
// producer znode id.
func (c *Cache) indexEventLocked(id string, created bool) {
	switch c.index.state {
	case indexListing:
		c.index.unknown[id] = struct{}{}
	case indexReady:
		delete(c.index.unknown, id)
		if !created {
			delete(c.index.ids, id)
			return
		}
		c.index.ids[id] = struct{}{}
		if len(c.index.ids)+len(c.index.unknown) > c.maxEntries {
			c.indexOffLocked(errTooManyIDs)
		}
	}
}

var errTooManyIDs = errors.New("more producer snapshots than sidecar.snapshot-cache.max-entries")

// indexOffLocked turns the index off until the next connection.
func (c *Cache) indexOffLocked(why error) {
	c.index = childIndex{state: indexOff}
	c.log.Warn("no index of producer ids until the next connection: a register reads ZooKeeper before writing", "error", why, "bound", c.maxEntries)
}

// dropIndexLocked forgets the index; keepOff keeps the decision not to
// list again on this connection.
func (c *Cache) dropIndexLocked(keepOff bool) {
	if keepOff && c.index.state == indexOff {
		return
	}
	c.index = childIndex{}
}

// listIndex lists /producers and installs the index, if the watch is set
// and no index is there or in flight. It always returns true: a failed
// listing is not retried on the same connection.
func (c *Cache) listIndex(ctx context.Context) bool {
	c.mu.Lock()
	if !c.watching || c.index.state != indexNone {
		c.mu.Unlock()
		return true
	}
	epoch := c.epoch
	c.index = childIndex{state: indexListing, unknown: make(map[string]struct{})}
	c.mu.Unlock()

	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, c.armTimeout)
	ids, err := c.inner.ListProducerIDs(ctx)
	cancel()

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.index.state != indexListing || c.epoch != epoch {
		// Dropped meanwhile (a lost connection): whatever dropped it
		// also asks for a new listing. Only the arm loop lists, so a
		// listing still marked in flight is this one.
		return true
	}
	if err == nil && len(ids)+len(c.index.unknown) > c.maxEntries {
		err = errTooManyIDs
	}
	if err != nil {
		c.indexOffLocked(err)
		return true
	}
	set := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		set[id] = struct{}{}
	}
	c.index.ids, c.index.state = set, indexReady
	// From the listing's request to the index's installation: what a
	// start-up with many producers waits before registers of new ones skip
	// their read (docs/limits.md, "Many producers").
	c.indexListTime = time.Since(start)
	c.log.Debug("index of producer ids listed", "ids", len(set), "took", c.indexListTime)
	return true
}
