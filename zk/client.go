package zk

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"

	gozk "github.com/go-zookeeper/zk"
	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// Event is a go-zookeeper watch event. Its Path is the full znode path, root
// included; Client.LogicalPath strips the root.
type Event = gozk.Event

// CreateMode is the kind of znode Create makes.
type CreateMode int

const (
	// Persistent znodes stay until deleted.
	Persistent CreateMode = iota
	// PersistentSequential znodes get a 10-digit sequence number appended to
	// their name.
	PersistentSequential
	// Ephemeral znodes are deleted when the session that made them ends.
	Ephemeral
	// EphemeralSequential is Ephemeral plus a sequence number.
	EphemeralSequential
)

func (m CreateMode) flags() (int32, error) {
	switch m {
	case Persistent:
		return gozk.FlagPersistent, nil
	case PersistentSequential:
		return gozk.FlagSequence, nil
	case Ephemeral:
		return gozk.FlagEphemeral, nil
	case EphemeralSequential:
		return gozk.FlagEphemeralSequential, nil
	}
	return 0, fmt.Errorf("zk: unknown create mode %d", int(m))
}

// Stat is the part of a znode's metadata this project uses.
type Stat struct {
	Czxid       int64 // zxid of the create; tells apart two lives of a path
	Mzxid       int64 // zxid of the last data change
	Ctime       int64 // creation time, epoch milliseconds
	Mtime       int64 // last modification time, epoch milliseconds
	Version     int32 // data version: number of setData calls
	NumChildren int32
	DataLength  int32
	// EphemeralOwner is the owning session of an ephemeral znode, else 0.
	EphemeralOwner int64
}

func statFrom(s *gozk.Stat) Stat {
	if s == nil {
		return Stat{}
	}
	return Stat{
		Czxid: s.Czxid, Mzxid: s.Mzxid, Ctime: s.Ctime, Mtime: s.Mtime,
		Version: s.Version, NumChildren: s.NumChildren, DataLength: s.DataLength,
		EphemeralOwner: s.EphemeralOwner,
	}
}

// openACL is Curator's default and so Fluss's: world:anyone with every
// permission.
var openACL = gozk.WorldACL(gozk.PermAll)

// Client is a ZooKeeper connection whose methods take logical paths (the
// configured root is prepended) and honour their context.
//
// Every call runs the blocking go-zookeeper request in its own goroutine and
// returns as soon as the request finishes or ctx ends, whichever is first;
// in the second case the error is ErrUnavailable wrapping ctx.Err(), and the
// abandoned request may still complete on the server later (its result is
// discarded). Writes that fail this way therefore have an unknown outcome;
// OpError.MaybeApplied tells.
//
// The connection outlives network failures and session expiry: go-zookeeper
// reconnects by itself and, when the server has expired the session, opens
// a new one. Watches survive a reconnect within a session but not an
// expiry: their channels then receive an EventNotWatching event with
// Err = go-zookeeper's ErrSessionExpired, and OnNewSession callbacks run
// once the new session is up, so users reload their state and set their
// watches again.
type Client struct {
	conn *gozk.Conn
	root string // normalized root; "" for "/"
	cfg  Config
	log  hclog.Logger

	done      chan struct{} // closed by Close
	closeOnce sync.Once
	wg        sync.WaitGroup // the session dispatcher

	mu          sync.Mutex
	firstUp     chan struct{} // closed at the first session
	hadSession  bool
	expiredSeen bool
	generation  uint64 // number of sessions established so far
	subs        map[int]func()
	nextSub     int
	kick        chan struct{} // wakes the dispatcher

	listeners listenerSet // OnEvent

	stopIO   context.CancelFunc // aborts handshakes in progress, at Close
	refusals chan *AuthError    // definitive refusals before the first session

	reads syncReads // SyncGet's shared syncs

	// connNum numbers the connections (it changes when one is made or
	// lost) and role is what the current one's server is (barrier.go);
	// both under mu.
	connNum uint64
	role    serverRole
	asking  sync.Mutex // held while a connection's server is asked its role
}

// Connect opens a client and waits until it has a session, bounded by ctx
// and cfg.ConnectionTimeout.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	root := NormalizeRoot(cfg.Root)
	if root == "/" {
		root = ""
	}
	c := &Client{
		root:    root,
		cfg:     cfg,
		log:     cfg.Logger.Named("zk"),
		done:    make(chan struct{}),
		firstUp: make(chan struct{}),
		subs:    make(map[int]func()),
		kick:    make(chan struct{}, 1),

		refusals: make(chan *AuthError, 1),
	}
	ioCtx, stopIO := context.WithCancel(context.Background())
	c.stopIO = stopIO
	// Plain connections are go-zookeeper's own; only TLS or SASL wraps them.
	dial := gozk.Dialer(net.DialTimeout)
	if cfg.TLS != nil || cfg.SASL != nil {
		t := &transport{ctx: ioCtx, tls: cfg.TLS, sasl: cfg.SASL,
			timeout: cfg.ConnectionTimeout, maxFrame: cfg.MaxBufferSize, refused: c.refused, log: c.log}
		dial = t.dial
	}
	conn, _, err := gozk.Connect(cfg.servers(), cfg.SessionTimeout,
		gozk.WithLogger(zkLogger{c.log}),
		gozk.WithEventCallback(c.onEvent),
		gozk.WithMaxBufferSize(cfg.MaxBufferSize),
		gozk.WithDialer(dial),
	)
	if err != nil {
		stopIO()
		return nil, &OpError{Op: "connect", Path: cfg.Address, Class: storeerr.ErrUnavailable, Err: err}
	}
	c.conn = conn
	c.wg.Add(1)
	go c.dispatch()

	wait, cancel := context.WithTimeout(ctx, cfg.ConnectionTimeout)
	defer cancel()
	select {
	case <-c.firstUp:
		// A server that requires SASL grants a session to anyone and
		// refuses its first request: one read proves the session usable,
		// so a client without the required login never starts.
		if _, _, err := c.Exists(wait, "/"); err != nil && errors.Is(err, errRequiresSASL) {
			c.Close()
			return nil, &OpError{Op: "connect", Path: cfg.Address, Err: err, Class: storeerr.ErrPermission}
		}
		c.log.Info("connected to ZooKeeper", "address", cfg.Address, "root", NormalizeRoot(cfg.Root),
			"session_id", fmt.Sprintf("0x%x", conn.SessionID()))
		return c, nil
	case ae := <-c.refusals:
		c.Close()
		return nil, &OpError{Op: "connect", Path: cfg.Address, Err: ae, Class: storeerr.ErrPermission}
	case <-wait.Done():
		c.Close()
		return nil, &OpError{Op: "connect", Path: cfg.Address, Class: storeerr.ErrUnavailable,
			Err: fmt.Errorf("no session within %s: %w", cfg.ConnectionTimeout, wait.Err())}
	}
}

// Root returns the normalized root path ("/" when there is no prefix).
func (c *Client) Root() string {
	if c.root == "" {
		return "/"
	}
	return c.root
}

// FullPath returns the znode path for a logical path: root + path.
func (c *Client) FullPath(path string) string {
	if path == "/" && c.root != "" {
		return c.root
	}
	return c.root + path
}

// LogicalPath strips the root from a full znode path, such as an Event's
// Path; ok is false when full is not under the root.
func (c *Client) LogicalPath(full string) (path string, ok bool) {
	if c.root == "" {
		return full, true
	}
	if full == c.root {
		return "/", true
	}
	if rest, found := strings.CutPrefix(full, c.root); found && strings.HasPrefix(rest, "/") {
		return rest, true
	}
	return "", false
}

// Logger returns the client's logger.
func (c *Client) Logger() hclog.Logger { return c.log }

// SessionID returns the current session id (0 while there is none).
func (c *Client) SessionID() int64 { return c.conn.SessionID() }

// Connected reports whether the client has a session right now.
func (c *Client) Connected() bool { return c.conn.State() == gozk.StateHasSession }

// OnNewSession registers fn to run each time the client establishes a new
// session after the one Connect returned with, that is after the server
// expired the previous session and every watch with it. fn runs on a
// dedicated goroutine, one call at a time; calls coalesce if several
// sessions come and go while fn runs. The returned function unregisters fn.
func (c *Client) OnNewSession(fn func()) (unregister func()) {
	c.mu.Lock()
	id := c.nextSub
	c.nextSub++
	c.subs[id] = fn
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// onEvent runs on go-zookeeper's goroutine and must not block.
func (c *Client) onEvent(ev gozk.Event) {
	c.listeners.deliver(ev)
	if ev.Type != gozk.EventSession {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev.State {
	case gozk.StateHasSession, gozk.StateDisconnected, gozk.StateExpired:
		c.connNum++
		c.role = roleUnknown
	}
	switch ev.State {
	case gozk.StateExpired:
		c.expiredSeen = true
		c.observe(SessionExpired)
		c.log.Warn("ZooKeeper session expired; watches are lost, opening a new session")
	case gozk.StateHasSession:
		if !c.hadSession {
			c.hadSession = true
			c.generation = 1
			close(c.firstUp)
			c.observe(SessionConnected)
			return
		}
		c.observe(SessionReconnected)
		if c.expiredSeen {
			c.expiredSeen = false
			c.generation++
			c.log.Info("new ZooKeeper session established")
			select {
			case c.kick <- struct{}{}:
			default:
			}
		}
	case gozk.StateDisconnected:
		if c.hadSession {
			c.observe(SessionDisconnected)
			c.log.Debug("disconnected from ZooKeeper", "server", ev.Server)
		}
	}
}

// refused is told by the transport about a definitive refusal (bad
// credentials, untrusted or missing certificate). Before the first session
// it makes Connect fail at once; later it is logged, once per refused
// connection, and go-zookeeper keeps retrying as for any lost connection.
func (c *Client) refused(ae *AuthError) {
	c.mu.Lock()
	started := c.hadSession
	c.mu.Unlock()
	if !started {
		select {
		case c.refusals <- ae:
		default:
		}
		return
	}
	c.log.Error("ZooKeeper refused the connection; retrying", "server", ae.Server, "error", ae.Err)
}

func (c *Client) observe(e SessionEvent) {
	if c.cfg.Observer != nil {
		c.cfg.Observer.SessionEvent(e)
	}
}

// dispatch runs OnNewSession callbacks.
func (c *Client) dispatch() {
	defer c.wg.Done()
	delivered := uint64(1)
	for {
		select {
		case <-c.done:
			return
		case <-c.kick:
		}
		c.mu.Lock()
		gen := c.generation
		fns := make([]func(), 0, len(c.subs))
		for _, fn := range c.subs {
			fns = append(fns, fn)
		}
		c.mu.Unlock()
		if gen == delivered {
			continue
		}
		delivered = gen
		for _, fn := range fns {
			fn()
		}
	}
}

// Close ends the session and the connection. It is idempotent; calls made
// after it fail with ErrUnavailable.
func (c *Client) Close() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.stopIO()
		c.conn.Close()
		c.wg.Wait()
	})
}

// call runs fn, which performs one blocking go-zookeeper request, and
// returns early when ctx ends or the client closes. See Client for what
// happens to an abandoned request.
func call[T any](ctx context.Context, c *Client, op, full string, fn func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, classify(op, full, fmt.Errorf("%w: %w", errNotSent, err))
	}
	select {
	case <-c.done:
		return zero, classify(op, full, fmt.Errorf("%w: %w", errNotSent, errClientClosed))
	default:
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := fn()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, classify(op, full, r.err)
	case <-ctx.Done():
		return zero, classify(op, full, ctx.Err())
	case <-c.done:
		return zero, classify(op, full, errClientClosed)
	}
}

func (c *Client) checkPath(op, path string) (string, error) {
	if !strings.HasPrefix(path, "/") || (len(path) > 1 && strings.HasSuffix(path, "/")) || strings.Contains(path, "//") {
		return "", &OpError{Op: op, Path: path, Err: gozk.ErrInvalidPath}
	}
	return c.FullPath(path), nil
}

type dataStat struct {
	data []byte
	stat *gozk.Stat
}

// Get returns a znode's data and stat.
func (c *Client) Get(ctx context.Context, path string) ([]byte, Stat, error) {
	full, err := c.checkPath("get", path)
	if err != nil {
		return nil, Stat{}, err
	}
	r, err := call(ctx, c, "get", full, func() (dataStat, error) {
		d, s, err := c.conn.Get(full)
		return dataStat{d, s}, err
	})
	if err != nil {
		return nil, Stat{}, err
	}
	return r.data, statFrom(r.stat), nil
}

// GetW is Get that also sets a data watch, which fires once when the znode
// changes or is deleted. If ctx ends first, the watch may still be set on
// the server but its channel is lost.
func (c *Client) GetW(ctx context.Context, path string) ([]byte, Stat, <-chan Event, error) {
	full, err := c.checkPath("get", path)
	if err != nil {
		return nil, Stat{}, nil, err
	}
	type res struct {
		data []byte
		stat *gozk.Stat
		ch   <-chan Event
	}
	r, err := call(ctx, c, "get", full, func() (res, error) {
		d, s, ch, err := c.conn.GetW(full)
		return res{d, s, ch}, err
	})
	if err != nil {
		return nil, Stat{}, nil, err
	}
	return r.data, statFrom(r.stat), r.ch, nil
}

// Children returns the names of a znode's children, in ZooKeeper's order.
func (c *Client) Children(ctx context.Context, path string) ([]string, error) {
	full, err := c.checkPath("children", path)
	if err != nil {
		return nil, err
	}
	return call(ctx, c, "children", full, func() ([]string, error) {
		names, _, err := c.conn.Children(full)
		return names, err
	})
}

// ChildrenW is Children that also sets a child watch, which fires once when
// a child is added or removed or the znode is deleted.
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, <-chan Event, error) {
	full, err := c.checkPath("children", path)
	if err != nil {
		return nil, nil, err
	}
	type res struct {
		names []string
		ch    <-chan Event
	}
	r, err := call(ctx, c, "children", full, func() (res, error) {
		names, _, ch, err := c.conn.ChildrenW(full)
		return res{names, ch}, err
	})
	if err != nil {
		return nil, nil, err
	}
	return r.names, r.ch, nil
}

// Exists reports whether a znode exists, with its stat if so.
func (c *Client) Exists(ctx context.Context, path string) (bool, Stat, error) {
	full, err := c.checkPath("exists", path)
	if err != nil {
		return false, Stat{}, err
	}
	type res struct {
		ok   bool
		stat *gozk.Stat
	}
	r, err := call(ctx, c, "exists", full, func() (res, error) {
		ok, s, err := c.conn.Exists(full)
		return res{ok, s}, err
	})
	if err != nil || !r.ok {
		return false, Stat{}, err
	}
	return true, statFrom(r.stat), nil
}

// ExistsW is Exists that also sets a watch, which fires once when the znode
// is created, changed or deleted.
func (c *Client) ExistsW(ctx context.Context, path string) (bool, Stat, <-chan Event, error) {
	full, err := c.checkPath("exists", path)
	if err != nil {
		return false, Stat{}, nil, err
	}
	type res struct {
		ok   bool
		stat *gozk.Stat
		ch   <-chan Event
	}
	r, err := call(ctx, c, "exists", full, func() (res, error) {
		ok, s, ch, err := c.conn.ExistsW(full)
		return res{ok, s, ch}, err
	})
	if err != nil {
		return false, Stat{}, nil, err
	}
	if !r.ok {
		return false, Stat{}, r.ch, nil
	}
	return true, statFrom(r.stat), r.ch, nil
}

// Create makes a znode with world:anyone ACL and returns its logical path
// (which differs from path for sequential modes). Missing parents, the root
// node included, are first created as PERSISTENT with empty data, as
// Curator's creatingParentsIfNeeded does. A nil data is stored as 0 bytes.
func (c *Client) Create(ctx context.Context, path string, data []byte, mode CreateMode) (string, error) {
	if path == "/" {
		return "", &OpError{Op: "create", Path: path, Err: gozk.ErrInvalidPath}
	}
	full, err := c.checkPath("create", path)
	if err != nil {
		return "", err
	}
	flags, err := mode.flags()
	if err != nil {
		return "", err
	}
	if data == nil {
		data = []byte{}
	}
	created, err := c.createFull(ctx, full, data, flags)
	if errors.Is(err, ErrNoNode) {
		if err := c.createParents(ctx, full); err != nil {
			return "", err
		}
		created, err = c.createFull(ctx, full, data, flags)
	}
	if err != nil {
		return "", err
	}
	logical, _ := c.LogicalPath(created)
	return logical, nil
}

func (c *Client) createFull(ctx context.Context, full string, data []byte, flags int32) (string, error) {
	return call(ctx, c, "create", full, func() (string, error) {
		return c.conn.Create(full, data, flags, openACL)
	})
}

// createParents creates every missing ancestor of full, top down.
func (c *Client) createParents(ctx context.Context, full string) error {
	for i := 1; i < len(full); i++ {
		if full[i] != '/' {
			continue
		}
		_, err := c.createFull(ctx, full[:i], []byte{}, gozk.FlagPersistent)
		if err != nil && !errors.Is(err, ErrNodeExists) {
			return err
		}
	}
	return nil
}

// Set replaces a znode's data if its version is version (-1: any) and
// returns the new stat.
func (c *Client) Set(ctx context.Context, path string, data []byte, version int32) (Stat, error) {
	full, err := c.checkPath("set", path)
	if err != nil {
		return Stat{}, err
	}
	if data == nil {
		data = []byte{}
	}
	s, err := call(ctx, c, "set", full, func() (*gozk.Stat, error) {
		return c.conn.Set(full, data, version)
	})
	if err != nil {
		return Stat{}, err
	}
	return statFrom(s), nil
}

// Delete removes a znode if its version is version (-1: any).
func (c *Client) Delete(ctx context.Context, path string, version int32) error {
	full, err := c.checkPath("delete", path)
	if err != nil {
		return err
	}
	_, err = call(ctx, c, "delete", full, func() (struct{}, error) {
		return struct{}{}, c.conn.Delete(full, version)
	})
	return err
}

// MaxWriteBytes is the largest znode data a single write may carry: the
// smaller of the client's and the servers' buffer limits, less room for the
// request's path and headers.
func (c *Client) MaxWriteBytes() int {
	return min(c.cfg.MaxBufferSize, c.cfg.ServerMaxBuffer) - RequestOverhead
}

// RequestOverhead is kept free in every request for its header, path, ACL
// and the multi framing around a create.
const RequestOverhead = 4096

// CheckWriteSize refuses, with an *OpError of storeerr class ErrTooLarge, a
// write of size bytes of data to path that would exceed MaxWriteBytes.
func (c *Client) CheckWriteSize(path string, size int) error {
	if limit := c.MaxWriteBytes(); size > limit {
		return &OpError{Op: "create", Path: c.FullPath(path), Class: storeerr.ErrTooLarge,
			Err: fmt.Errorf("%w: %d bytes, limit %d (min of zookeeper.client.max-buffer-size and the servers' jute.maxbuffer, less %d)",
				errTooLarge, size, limit, RequestOverhead)}
	}
	return nil
}

// CreateAtVersion creates path as a PERSISTENT znode that holds data at data
// version bump (at least 1): one multi of a create with empty data and bump
// setData calls, the last of which sets data. ZooKeeper applies a multi
// atomically, so no reader ever sees the empty znode, and only the last
// call carries data, so the request is not much larger than data. Parents
// are created as Create does.
func (c *Client) CreateAtVersion(ctx context.Context, path string, data []byte, bump int32) error {
	full, err := c.checkPath("create", path)
	if err != nil {
		return err
	}
	multi := func() error {
		_, err := call(ctx, c, "create", full, func() (struct{}, error) {
			ops := []any{&gozk.CreateRequest{Path: full, Data: []byte{}, Acl: openACL, Flags: gozk.FlagPersistent}}
			for v := range max(bump, 1) {
				d := []byte{}
				if v == max(bump, 1)-1 {
					d = data
				}
				ops = append(ops, &gozk.SetDataRequest{Path: full, Data: d, Version: v})
			}
			res, err := c.conn.Multi(ops...)
			return struct{}{}, multiError(res, err)
		})
		return err
	}
	err = multi()
	if errors.Is(err, ErrNoNode) {
		if err := c.createParents(ctx, full); err != nil {
			return err
		}
		err = multi()
	}
	return err
}

// multiError returns the error of the operation that made a multi fail,
// which says more than the multi's own.
func multiError(res []gozk.MultiResponse, err error) error {
	if err == nil {
		return nil
	}
	for _, r := range res {
		for _, known := range []error{gozk.ErrNoNode, gozk.ErrNodeExists, gozk.ErrBadVersion, gozk.ErrNoAuth} {
			if errors.Is(r.Error, known) {
				return r.Error
			}
		}
	}
	return err
}

// Sync asks the server the client is connected to to catch up with the
// leader, so that a following read sees every committed write.
func (c *Client) Sync(ctx context.Context, path string) error {
	full, err := c.checkPath("sync", path)
	if err != nil {
		return err
	}
	return c.barrier(ctx, full)
}

// zkLogger routes go-zookeeper's log lines to hclog.
type zkLogger struct{ l hclog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	for _, a := range args {
		var ae *AuthError
		if err, ok := a.(error); ok && errors.As(err, &ae) {
			// Client.refused has logged it, or Connect returns it.
			z.l.Debug(msg)
			return
		}
	}
	lower := strings.ToLower(msg)
	if strings.Contains(lower, "fail") || strings.Contains(lower, "error") {
		z.l.Warn(msg)
		return
	}
	z.l.Debug(msg)
}
