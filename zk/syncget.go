package zk

import (
	"context"
	"errors"
	_ "unsafe" // for go:linkname

	gozk "github.com/go-zookeeper/zk"
)

// ZooKeeper's opcodes for sync and getData.
const (
	opSync    = 9
	opGetData = 4
)

// queuedReply is go-zookeeper v1.0.4's unexported response (zxid, err), the
// element of the channel connQueueRequest returns; the layout must match.
type queuedReply struct {
	zxid int64
	err  error
}

// connQueueRequest is go-zookeeper's unexported (*Conn).queueRequest, which
// (*Conn).request calls: it queues one request on the connection and
// returns the channel its reply arrives on, without waiting. Two calls from
// one goroutine reach the server in that order. Checked against v1.0.4 as
// connRequest is (TestGoZookeeperVersionPinned).
//
//go:linkname connQueueRequest github.com/go-zookeeper/zk.(*Conn).queueRequest
func connQueueRequest(c *gozk.Conn, opcode int32, req any, res any, recvFunc func(*struct{}, *struct{}, error)) <-chan queuedReply

// The jute records of sync and getData, field for field as go-zookeeper
// encodes its own (exported fields in order).
type syncRecord struct{ Path string }

type getDataRecord struct {
	Path  string
	Watch bool
}

type getDataReply struct {
	Data []byte
	Stat gozk.Stat
}

// SyncGet is Get preceded by a sync, both sent at once: the server answers
// the read after the sync, so the read sees every write committed before
// the sync reached the leader, for the price of one round trip instead of
// two (the sync's and then the read's).
func (c *Client) SyncGet(ctx context.Context, path string) ([]byte, Stat, error) {
	full, err := c.checkPath("get", path)
	if err != nil {
		return nil, Stat{}, err
	}
	r, err := call(ctx, c, "get", full, func() (dataStat, error) {
		synced := connQueueRequest(c.conn, opSync, &syncRecord{Path: full}, &syncRecord{}, nil)
		res := &getDataReply{}
		read := connQueueRequest(c.conn, opGetData, &getDataRecord{Path: full}, res, nil)
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
