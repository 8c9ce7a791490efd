package zk

import (
	"context"
	"fmt"
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
// two (the sync's and then the read's). Concurrent calls share one sync
// (syncReads): a call arriving while another's sync is in flight waits for
// it to return and goes out with every call that arrived meanwhile.
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
