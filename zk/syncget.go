package zk

import (
	"context"
	"fmt"
)

// SyncGet is Get preceded by a sync, both sent at once: the server answers
// the read after the sync, so the read sees every write committed before
// the sync reached the leader, for the price of one round trip instead of
// two (the sync's and then the read's). Concurrent calls share one sync
// (syncReads, syncbatch.go): a call arriving while another's sync is in
// flight waits for it to return and goes out with every call that arrived
// meanwhile. go-zookeeper's exported calls each wait for their reply, so
// the requests are queued through gozkQueueRequest (gozk_internals.go).
func (c *Client) SyncGet(ctx context.Context, path string) ([]byte, Stat, error) {
	full, err := c.checkPath("get", path)
	if err != nil {
		return nil, Stat{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, Stat{}, classify("get", full, fmt.Errorf("%w: %w", errNotSent, err))
	}
	select {
	case <-c.done:
		return nil, Stat{}, classify("get", full, fmt.Errorf("%w: %w", errNotSent, errClientClosed))
	default:
	}
	r := &syncRead{full: full, done: make(chan struct{})}
	if batch := c.reads.enqueue(r); batch != nil {
		go c.runSyncReads(batch)
	}
	select {
	case <-r.done:
		if r.err != nil {
			return nil, Stat{}, classify("get", full, r.err)
		}
		return r.data, statFrom(r.stat), nil
	case <-ctx.Done():
		r.left.Store(true)
		return nil, Stat{}, classify("get", full, ctx.Err())
	case <-c.done:
		r.left.Store(true)
		return nil, Stat{}, classify("get", full, errClientClosed)
	}
}
