package zk

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	gozk "github.com/go-zookeeper/zk"
)

// Why Sync is not always a sync.
//
// A sync makes the session's server catch up with the leader before it
// answers: a follower forwards it, and the leader sends it back behind
// every commit it had sent that follower, so the follower has applied them
// all by then. The leader's own sessions get no such guarantee: the leader
// answers a sync of theirs as it answers a read, without waiting for
// commits, and it applies a commit itself only after sending it to the
// followers. A follower may therefore acknowledge a write to its client
// while the leader does not show it yet, and a sync then read through the
// leader misses it (TestSyncThenReadAfterAnotherServersAck measured 4 in
// 1,000 writes on a loaded three-server ensemble, none through a
// follower). A write is ordered behind every commit before it, on every
// server, and a session's later reads wait for its own writes, so on the
// leader the barrier is a write that changes nothing: a multi of one check
// of the root at any version, logged and acknowledged by a quorum like any
// write. Which server a connection reaches is asked once per connection
// with ZooKeeper's "srvr" command (allowed by default); a server changes
// role only by closing every client connection, so the answer holds for
// the connection's life. A server that does not answer it is treated as a
// leader: the write is slower than a sync, never wrong.

// serverRole is what the session's current server is, for the barrier.
type serverRole int

const (
	roleUnknown  serverRole = iota // not asked yet on this connection
	roleFollower                   // a follower, observer or a lone server: sync suffices
	roleLeader                     // the leader, or no answer: the barrier writes
)

// roleTimeout bounds one "srvr" question.
const roleTimeout = 2 * time.Second

// connection returns the number of the current connection (it changes at
// every new connection) and what is known of its server.
func (c *Client) connection() (uint64, serverRole) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connNum, c.role
}

// barrierRole returns the current connection's number and its server's
// role, asking the server when it is not known yet.
func (c *Client) barrierRole(ctx context.Context) (uint64, serverRole) {
	n, role := c.connection()
	if role != roleUnknown {
		return n, role
	}
	// One question per connection: barriers arriving meanwhile wait for it.
	c.asking.Lock()
	defer c.asking.Unlock()
	if n, role = c.connection(); role != roleUnknown {
		return n, role
	}
	addr := c.conn.Server()
	mode, err := c.askMode(ctx, addr)
	role = roleFollower
	switch {
	case err != nil:
		role = roleLeader
		c.log.Warn("could not ask the ZooKeeper server its role (four-letter word srvr): linearizable reads use a write as their barrier on this connection",
			"server", addr, "error", err)
	case mode == "leader":
		role = roleLeader
		c.log.Debug("connected to the ZooKeeper leader: linearizable reads use a write as their barrier", "server", addr)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.connNum == n {
		c.role = role
	}
	return n, role
}

// askMode asks the server at addr its mode ("leader", "follower",
// "observer", "standalone") with the srvr command, over TLS when the
// client uses TLS.
func (c *Client) askMode(ctx context.Context, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, roleTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if c.cfg.TLS != nil {
		tc := tls.Client(conn, tlsFor(c.cfg.TLS, addr))
		if err := tc.HandshakeContext(ctx); err != nil {
			return "", err
		}
		conn = tc
	}
	if _, err := conn.Write([]byte("srvr")); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(conn)
	var first string
	for sc.Scan() {
		line := sc.Text()
		if first == "" {
			first = line
		}
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(mode), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mode in the srvr answer (%q)", first)
}

// errConnectionChanged fails a barrier whose connection changed while it
// ran: it may have reached a server whose role was not asked.
var errConnectionChanged = fmt.Errorf("%w: the connection changed during a sync", gozk.ErrConnectionClosed)

// barrier makes the session's server current with every write committed
// before it was called: a sync on a follower, a write on the leader (see
// above). path is the sync's path.
func (c *Client) barrier(ctx context.Context, full string) error {
	n, role := c.barrierRole(ctx)
	var err error
	if role == roleLeader {
		err = c.writeBarrier(ctx)
	} else {
		err = c.queueSync(ctx, full)
	}
	if err == nil {
		if now, _ := c.connection(); now != n {
			err = classify("sync", full, errConnectionChanged)
		}
	}
	return err
}

// queueSync sends a sync of full and waits for its reply, ctx or the
// client's end. It queues the request itself (gozkQueueRequest) rather
// than call the exported Sync on a goroutine of its own, as call does for
// every other operation: a barrier is sent once per shared round of reads,
// and the goroutine and its two hand-offs were a measurable part of a
// round's cost. The reply channel holds one reply, so a caller that stops
// waiting leaves nothing blocked.
func (c *Client) queueSync(ctx context.Context, full string) error {
	if err := ctx.Err(); err != nil {
		return classify("sync", full, fmt.Errorf("%w: %w", errNotSent, err))
	}
	select {
	case <-c.done:
		return classify("sync", full, fmt.Errorf("%w: %w", errNotSent, errClientClosed))
	default:
	}
	reply := gozkQueueRequest(c.conn, opSync, &syncRecord{Path: full}, &syncRecord{}, nil)
	select {
	case r := <-reply:
		return classify("sync", full, r.err)
	case <-ctx.Done():
		return classify("sync", full, ctx.Err())
	case <-c.done:
		return classify("sync", full, errClientClosed)
	}
}

// writeBarrier sends the write that changes nothing: a multi of one check
// of the client's root (which exists once the client runs) at any version.
func (c *Client) writeBarrier(ctx context.Context) error {
	full := "/"
	if c.root != "" {
		full = c.root
	}
	var err error
	for _, path := range []string{full, "/"} {
		_, err = call(ctx, c, "sync", path, func() (struct{}, error) {
			res, err := c.conn.Multi(&gozk.CheckVersionRequest{Path: path, Version: -1})
			return struct{}{}, multiError(res, err)
		})
		if !errors.Is(err, ErrNoNode) {
			break
		}
		// The root is not made yet: a check of "/" orders the barrier as
		// well, and under the root there is nothing to be current about.
	}
	return err
}
