package zk

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"

	gozk "github.com/go-zookeeper/zk"
)

// syncReads batches SyncGet calls so that concurrent ones share one sync:
// a SyncGet that finds no batch in flight sends its own at once; one that
// arrives while a batch is in flight joins the next batch, which is sent
// when that one returns. A batch is one sync followed by one getData per
// distinct path, all queued from one goroutine so that they reach the
// server in that order: the server answers every read after the sync, so
// each read sees every write committed before the sync reached the leader,
// and every read of a batch arrived before the batch was sent. A storm of
// cold reads then costs ZooKeeper one sync per round trip instead of one
// per read, as the read barrier (package readindex) does for cached ones.
type syncReads struct {
	mu       sync.Mutex
	inFlight bool
	next     []*syncRead // reads waiting for the next batch
	batches  atomic.Uint64
}

// syncRead is one SyncGet waiting for its batch. Its results are written
// before done is closed.
type syncRead struct {
	full string
	done chan struct{}
	left atomic.Bool // the caller gave up: nobody reads the results
	data []byte
	stat *gozk.Stat
	err  error
}

// compactAt is the length of the waiting list past which reads whose
// callers gave up are dropped from it before another is added, so that a
// batch stuck behind a lost connection does not keep every read that
// arrived meanwhile.
const compactAt = 1024

// enqueue adds r to the next batch and reports whether the caller must
// start it (no batch was in flight), taking the waiting list as the batch.
func (s *syncReads) enqueue(r *syncRead) (batch []*syncRead) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.next) >= compactAt {
		kept := s.next[:0]
		for _, w := range s.next {
			if !w.left.Load() {
				kept = append(kept, w)
			}
		}
		clear(s.next[len(kept):])
		s.next = kept
	}
	s.next = append(s.next, r)
	if s.inFlight {
		return nil
	}
	s.inFlight = true
	batch, s.next = s.next, nil
	return batch
}

// following returns the batch that waited while the last one was in
// flight, or nil (and no batch in flight) when none did.
func (s *syncReads) following() []*syncRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.next) == 0 {
		s.inFlight = false
		return nil
	}
	batch := s.next
	s.next = nil
	return batch
}

// runSyncReads sends batch, and every batch that gathers while one is in
// flight, until none waits.
func (c *Client) runSyncReads(batch []*syncRead) {
	for ; batch != nil; batch = c.reads.following() {
		c.sendSyncReads(batch)
	}
}

// sendSyncReads sends one batch and hands each read its result. Reads of
// the same path share one getData; each caller gets its own copy of the
// data.
func (c *Client) sendSyncReads(batch []*syncRead) {
	type pathRead struct {
		res   *getDataReply
		reply <-chan queuedReply
		reads []*syncRead
	}
	c.reads.batches.Add(1)
	// On the leader a sync is no barrier: a write is sent first, and the
	// reads after its reply (barrier.go).
	n, role := c.barrierRole(context.Background())
	var synced <-chan queuedReply
	if role == roleLeader {
		if err := c.writeBarrier(context.Background()); err != nil {
			for _, r := range batch {
				r.err = err
				close(r.done)
			}
			return
		}
	} else {
		synced = gozkQueueRequest(c.conn, opSync, &syncRecord{Path: batch[0].full}, &syncRecord{}, nil)
	}
	var paths []*pathRead
	index := make(map[string]*pathRead, len(batch))
	for _, r := range batch {
		p := index[r.full]
		if p == nil {
			p = &pathRead{res: &getDataReply{}}
			p.reply = gozkQueueRequest(c.conn, opGetData, &getDataRecord{Path: r.full}, p.res, nil)
			index[r.full] = p
			paths = append(paths, p)
		}
		p.reads = append(p.reads, r)
	}
	var s queuedReply
	if synced != nil {
		s = <-synced
	}
	for _, p := range paths {
		g := <-p.reply
		err := g.err
		if s.err != nil && !errors.Is(s.err, gozk.ErrNoNode) {
			err = s.err // the read may not follow a completed sync
		}
		if now, _ := c.connection(); err == nil && now != n {
			// Sent on a connection whose server's role was not asked.
			err = errConnectionChanged
		}
		for i, r := range p.reads {
			if err == nil {
				r.data, r.stat = p.res.Data, &p.res.Stat
				if i > 0 {
					r.data, r.stat = bytes.Clone(p.res.Data), new(gozk.Stat)
					*r.stat = p.res.Stat
				}
			}
			r.err = err
			close(r.done)
		}
	}
}
