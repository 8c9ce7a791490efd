package zk

import (
	"context"
	"errors"
	"sync"

	gozk "github.com/go-zookeeper/zk"
)

// ErrWatchUnsupported is the class of AddPersistentRecursiveWatch's error
// when the server predates ZooKeeper 3.6, which introduced persistent
// watches.
var ErrWatchUnsupported = errors.New("the ZooKeeper server does not support persistent watches (3.6 or later needed)")

// addWatchModePersistentRecursive is AddWatchMode.PERSISTENT_RECURSIVE.
const addWatchModePersistentRecursive = 1

// AddPersistentRecursiveWatch sets a persistent recursive watch on path
// (logical) and every znode below it, present or future: each creation,
// data change and deletion under it is delivered to the OnEvent listeners,
// until the connection is lost. go-zookeeper does not set such a watch
// again after a reconnect, so a user sets it again when a session event
// with state StateHasSession arrives. The path need not exist.
// go-zookeeper has no addWatch, so the request goes through gozkRequest
// (gozk_internals.go).
func (c *Client) AddPersistentRecursiveWatch(ctx context.Context, path string) error {
	full, err := c.checkPath("addWatch", path)
	if err != nil {
		return err
	}
	_, err = call(ctx, c, "addWatch", full, func() (struct{}, error) {
		_, err := gozkRequest(c.conn, opAddWatch, &addWatchRequest{Path: full, Mode: addWatchModePersistentRecursive}, &addWatchResponse{}, nil)
		if isGozkUnknownCode(err, codeUnimplemented) {
			err = ErrWatchUnsupported
		}
		return struct{}{}, err
	})
	return err
}

// OnEvent registers fn to receive every event of the connection: session
// state changes (Type EventSession) and watch notifications, with full
// paths (see LogicalPath). fn runs on go-zookeeper's receiving goroutine, in
// the order the server sent the events, and before that goroutine hands any
// later reply to its caller: a read that returns after fn saw a
// notification was answered after the server sent it. fn must be quick and
// must not block or call the client. The returned function unregisters fn.
func (c *Client) OnEvent(fn func(Event)) (unregister func()) {
	return c.listeners.add(fn)
}

// EventSession and the other event types and states, re-exported so that
// users of OnEvent need not import go-zookeeper.
const (
	EventSession             = gozk.EventSession
	EventNodeCreated         = gozk.EventNodeCreated
	EventNodeDeleted         = gozk.EventNodeDeleted
	EventNodeDataChanged     = gozk.EventNodeDataChanged
	EventNodeChildrenChanged = gozk.EventNodeChildrenChanged
	StateHasSession          = gozk.StateHasSession
	StateDisconnected        = gozk.StateDisconnected
	StateExpired             = gozk.StateExpired
	StateAuthFailed          = gozk.StateAuthFailed
)

// listenerSet holds OnEvent listeners. It is read on every event, so the
// list is replaced, never modified in place.
type listenerSet struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(Event)
	list []func(Event) // snapshot of fns, read under mu
}

func (l *listenerSet) add(fn func(Event)) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fns == nil {
		l.fns = make(map[int]func(Event))
	}
	id := l.next
	l.next++
	l.fns[id] = fn
	l.rebuild()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.fns, id)
		l.rebuild()
	}
}

func (l *listenerSet) rebuild() {
	list := make([]func(Event), 0, len(l.fns))
	for _, fn := range l.fns {
		list = append(list, fn)
	}
	l.list = list
}

func (l *listenerSet) deliver(ev Event) {
	l.mu.Lock()
	list := l.list
	l.mu.Unlock()
	for _, fn := range list {
		fn(ev)
	}
}
