package zk

import (
	"context"
	"errors"

	gozk "github.com/go-zookeeper/zk"
)

// SyncGet is Get preceded by a sync, both sent at once: the server answers
// the read after the sync, so the read sees every write committed before
// the sync reached the leader, for the price of one round trip instead of
// two (the sync's and then the read's). go-zookeeper's exported calls each
// wait for their reply, so both are queued through gozkQueueRequest
// (gozk_internals.go).
func (c *Client) SyncGet(ctx context.Context, path string) ([]byte, Stat, error) {
	full, err := c.checkPath("get", path)
	if err != nil {
		return nil, Stat{}, err
	}
	r, err := call(ctx, c, "get", full, func() (dataStat, error) {
		synced := gozkQueueRequest(c.conn, opSync, &syncRecord{Path: full}, &syncRecord{}, nil)
		res := &getDataReply{}
		read := gozkQueueRequest(c.conn, opGetData, &getDataRecord{Path: full}, res, nil)
		s := <-synced
		g := <-read
		if s.err != nil && !errors.Is(s.err, gozk.ErrNoNode) {
			return dataStat{}, s.err
		}
		if g.err != nil {
			return dataStat{}, g.err
		}
		return dataStat{res.Data, &res.Stat}, nil
	})
	if err != nil {
		return nil, Stat{}, err
	}
	return r.data, statFrom(r.stat), nil
}
