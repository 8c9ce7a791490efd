// Package zkstore keeps the producer snapshot znodes, /producers/<id>,
// through a zk.Client, with exactly the bytes a Fluss (Java) coordinator
// stores (package flussjson). It fixes two weaknesses of the Java code: an
// interrupted create is settled by reading the znode back instead of being
// reported as "already exists" (W7), and the conditional delete checks the
// creation zxid, since the data version of a coordinator's producer znode
// is always 0 (W3).
package zkstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// ProducersPath is the logical parent of every producer znode. It is created
// as an empty PERSISTENT parent by the first CreateSnapshot and never
// deleted.
const ProducersPath = "/producers"

// Store reads and writes producer snapshot znodes,
// /producers/<producerId>, with exactly the bytes a Fluss coordinator
// stores. Producer ids must already be validated (see docs/storage-format.md §7.4); the
// store only refuses ids that are not a single path segment.
//
// Unlike a coordinator, the store never leaves a snapshot at data version 0
// (see CreateSnapshot), which is what keeps a coordinator's stale versioned
// delete from removing it (weakness W3).
type Store struct {
	c *zk.Client
}

// New returns a store over c.
func New(c *zk.Client) *Store {
	return &Store{c: c}
}

// Client returns the store's client.
func (p *Store) Client() *zk.Client { return p.c }

// producerPath returns the producer's znode. The portable layer checks
// the id too (storage.CheckZnodeName, the same rule); the store keeps the
// check for its own safety, also when run without the layer: an id with a
// '/' would name another znode than the producer's.
func producerPath(producerID string) (string, error) {
	if err := storage.CheckZnodeName(producerID); err != nil {
		return "", fmt.Errorf("zkstore: %w", err)
	}
	return ProducersPath + "/" + producerID, nil
}

// CheckSnapshot refuses a snapshot whose znode would exceed
// zk.Client.MaxWriteBytes, with an error of class storeerr.ErrTooLarge, and
// a producer id that is not a znode name, as the writes do.
func (p *Store) CheckSnapshot(producerID string, s offsets.Snapshot) error {
	_, err := p.encode(producerID, s)
	return err
}

func (p *Store) encode(producerID string, s offsets.Snapshot) ([]byte, error) {
	path, err := producerPath(producerID)
	if err != nil {
		return nil, err
	}
	data := flussjson.EncodeSnapshot(s)
	if err := p.c.CheckWriteSize(path, len(data)); err != nil {
		return nil, err
	}
	return data, nil
}

// MaxInitialVersion bounds the data version a created snapshot starts at.
const MaxInitialVersion = 16

// CreateSnapshot stores s at /producers/<producerID> if no snapshot is
// there: created is true when this call made the znode and false when one
// already existed (Fluss's tryRegisterProducerOffsets).
//
// The znode is created with empty data and set to s in one ZooKeeper multi,
// so it is born with a coordinator's exact bytes at a data version drawn
// from [1, MaxInitialVersion], never 0. A coordinator only ever deletes a
// producer znode by the version it read from it, and its own snapshots stay
// at version 0, so a versioned delete it sends for a snapshot it read
// earlier cannot remove ours; and a stale versioned write (a coordinator's
// or another sidecar's) that read an earlier snapshot of ours at version v
// hits a new one only if that one was also born at v. A coordinator reads,
// replaces, deletes and cleans up such znodes as any other.
//
// An error matching storeerr.ErrOutcomeUnknown means the create may have
// been applied (the caller settles it by reading back); s larger than
// zk.Client.MaxWriteBytes is refused unsent.
func (p *Store) CreateSnapshot(ctx context.Context, producerID string, s offsets.Snapshot) (created bool, err error) {
	path, err := producerPath(producerID)
	if err != nil {
		return false, err
	}
	data, err := p.encode(producerID, s)
	if err != nil {
		return false, err
	}
	err = p.c.CreateAtVersion(ctx, path, data, 1+rand.Int32N(MaxInitialVersion))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, zk.ErrNodeExists):
		return false, nil
	}
	return false, err
}

// ReplaceSnapshotIf overwrites /producers/<producerID> with s in place, with
// a setData conditioned on inc's data version, after checking that the
// znode's creation zxid is still inc's: replaced is false when the znode is
// absent, another incarnation, or another version. The data version only
// grows within one incarnation, so two writers replacing the same expired
// snapshot cannot both succeed. ZooKeeper cannot condition the setData on
// the creation zxid itself, so one window remains: a delete and re-create at
// the same version by someone else between the check and the setData (one
// round trip) is not detected (docs/semantics.md measures it).
func (p *Store) ReplaceSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation, s offsets.Snapshot) (replaced bool, err error) {
	path, err := producerPath(producerID)
	if err != nil {
		return false, err
	}
	data, err := p.encode(producerID, s)
	if err != nil {
		return false, err
	}
	ok, st, err := p.c.Exists(ctx, path)
	if err != nil || !ok || st.Czxid != inc.Czxid || st.Version != inc.Version {
		return false, err
	}
	after, err := p.c.Set(ctx, path, data, inc.Version)
	switch {
	case err == nil:
		if after.Czxid != inc.Czxid {
			// The residual window was hit: the setData landed on a snapshot
			// another writer created at the same version since the check.
			p.c.Logger().Warn("a snapshot replace overwrote one created concurrently by another writer",
				"producer_id", producerID, "checked_czxid", inc.Czxid, "overwritten_czxid", after.Czxid)
		}
		return true, nil
	case errors.Is(err, zk.ErrNoNode), errors.Is(err, zk.ErrBadVersion):
		return false, nil
	}
	return false, err
}

// Sync makes the server this client reads from catch up with the leader,
// so that the reads that follow see every committed write.
func (p *Store) Sync(ctx context.Context) error {
	err := p.c.Sync(ctx, ProducersPath)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return err
}

// GetSnapshot reads /producers/<producerID>. found is false when there is no
// such znode. inc identifies this life of the znode for DeleteSnapshotIf. A
// znode that does not decode is an error (as in Fluss).
func (p *Store) GetSnapshot(ctx context.Context, producerID string) (s offsets.Snapshot, inc offsets.Incarnation, found bool, err error) {
	return p.getSnapshot(ctx, producerID, p.c.Get)
}

// getSnapshot reads and decodes the producer's znode with get.
func (p *Store) getSnapshot(ctx context.Context, producerID string, get func(context.Context, string) ([]byte, zk.Stat, error)) (s offsets.Snapshot, inc offsets.Incarnation, found bool, err error) {
	path, err := producerPath(producerID)
	if err != nil {
		return s, inc, false, err
	}
	data, st, err := get(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return s, inc, false, nil
	}
	if err != nil {
		return s, inc, false, err
	}
	s, err = flussjson.DecodeSnapshot(data)
	if err != nil {
		return offsets.Snapshot{}, inc, false, storeerr.New(storeerr.ErrCorrupt, false, fmt.Errorf("zkstore: producer %s: %w", producerID, err))
	}
	return s, offsets.Incarnation{Czxid: st.Czxid, Version: st.Version}, true, nil
}

// RawSnapshot returns the znode's bytes exactly as stored.
func (p *Store) RawSnapshot(ctx context.Context, producerID string) ([]byte, error) {
	path, err := producerPath(producerID)
	if err != nil {
		return nil, err
	}
	data, _, err := p.c.Get(ctx, path)
	return data, err
}

// DeleteSnapshotIf deletes /producers/<producerID> only if it is still the
// incarnation inc (as returned by GetSnapshot). deleted is true when the
// znode is gone afterwards because of this call or because it was already
// absent (as Fluss's deleteProducerSnapshotIfVersion treats NoNode), and
// false when the znode is another incarnation or was modified.
//
// Weakness W3: a producer znode's data version is always 0, so Fluss's
// versioned delete cannot tell a znode from one deleted and created again at
// the same path, and deletes the newer one. This method first reads the
// znode's creation zxid and returns false if it differs from inc.Czxid, then
// deletes with inc.Version. ZooKeeper cannot make the delete itself depend
// on the creation zxid, so a small window remains: a delete and re-create by
// someone else between the read and the delete (two round trips apart) is
// still not detected.
func (p *Store) DeleteSnapshotIf(ctx context.Context, producerID string, inc offsets.Incarnation) (deleted bool, err error) {
	path, err := producerPath(producerID)
	if err != nil {
		return false, err
	}
	ok, st, err := p.c.Exists(ctx, path)
	if err != nil {
		return false, err
	}
	if !ok {
		return true, nil
	}
	if st.Czxid != inc.Czxid {
		return false, nil
	}
	err = p.c.Delete(ctx, path, inc.Version)
	switch {
	case err == nil, errors.Is(err, zk.ErrNoNode):
		return true, nil
	case errors.Is(err, zk.ErrBadVersion):
		return false, nil
	}
	return false, err
}

// DeleteSnapshot deletes /producers/<producerID> whatever its version
// (Fluss's deleteProducerOffsets); a missing znode is zk.ErrNoNode.
func (p *Store) DeleteSnapshot(ctx context.Context, producerID string) error {
	path, err := producerPath(producerID)
	if err != nil {
		return err
	}
	return p.c.Delete(ctx, path, -1)
}

// ListProducerIDs returns the children of /producers in ZooKeeper's order;
// none when /producers does not exist.
func (p *Store) ListProducerIDs(ctx context.Context) ([]string, error) {
	ids, err := p.c.Children(ctx, ProducersPath)
	if errors.Is(err, zk.ErrNoNode) {
		return []string{}, nil
	}
	return ids, err
}

// GetSnapshotLinear is GetSnapshot read after a sync sent with it
// (zk.Client.SyncGet): linearizable, in one round trip
// (storage.LinearReads). A shared sync to wait for is of no use here: it
// would cost a round trip more, so wait is not called.
func (p *Store) GetSnapshotLinear(ctx context.Context, producerID string, _ func(context.Context) error) (offsets.Snapshot, offsets.Incarnation, bool, error) {
	return p.getSnapshot(ctx, producerID, p.c.SyncGet)
}

var (
	_ storage.SnapshotStore = (*Store)(nil)
	_ storage.LinearReads   = (*Store)(nil)
)
