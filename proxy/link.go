package proxy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// linkKey keys a client connection's *link in wire.Session.Attrs.
type linkKey struct{}

// upstreamConn is one open connection to the coordinator. Request ids are
// remapped by its wire.Client: each forwarded request gets the client's
// next id, and the client's pending map (upstream id -> waiting request,
// which holds the client's own id) matches answers in any order.
type upstreamConn struct {
	addr     string
	client   *wire.Client
	versions *messages.ApiVersionsResponse
	// reg is the coordinator's registration when addr was chosen (the
	// creation zxid of /coordinators/active with ZooKeeper discovery, else
	// 0); see findActive.
	reg atomic.Int64
	// pending counts the forwarded requests in flight on it; retired is
	// set once the link has moved to another connection, which then
	// closes this one after its last answer.
	pending atomic.Int64
	retired atomic.Bool
}

// link is the upstream side of one client connection. It opens the
// upstream connection once, on the first request that needs it, and fails
// for good at the first error; the client connection is then closed once
// its requests in flight have been answered.
type link struct {
	p       *Proxy
	sess    *wire.Session
	connCtx context.Context // ends when the client connection closes

	mu      sync.Mutex
	opening chan struct{} // closed when the open attempt has finished
	up      *upstreamConn
	err     error // set once: why the link is unusable
	openErr error // why the last attempt to open failed

	authMu   sync.Mutex
	authed   atomic.Bool
	authUser string // written before authed is set

	// fast is the open upstream connection once forwarding may take the
	// fast path (open, logged in if needed, not failed); nil otherwise.
	fast  atomic.Pointer[upstreamConn]
	reply atomic.Pointer[wire.Replier] // the client connection's Replier
	// unflushed is the connection the fast path last queued requests on;
	// only the client connection's reader goroutine uses it.
	unflushed *upstreamConn
	// metadataChecked is set once a GET_METADATA answer of this link has
	// been checked (Proxy.checkMetadata); until then GET_METADATA takes
	// the ordinary path, where its answer is seen.
	metadataChecked atomic.Bool
	// answerFn is l.answer, made once so Send needs no allocation for it.
	answerFn wire.SendFunc

	// While resending is on (failover.go): mv is the move under way, if
	// any (guarded by mu); inflight holds the fast path's requests in
	// flight by tag (guarded by fmu).
	mv       *move
	fmu      sync.Mutex
	seq      int64
	inflight map[int64]*fwd

	shutdownOnce sync.Once
}

// errClientGone ends a link whose client connection has closed.
var errClientGone = errors.New("the client connection closed")

// linkOf returns the session's link, creating it on first use. ctx must be
// the connection's context, which wire.Server passes to handlers.
func (p *Proxy) linkOf(ctx context.Context, s *wire.Session) *link {
	if v, ok := s.Attrs.Load(linkKey{}); ok {
		return v.(*link)
	}
	l := &link{p: p, sess: s, connCtx: ctx}
	l.answerFn = l.answer
	v, loaded := s.Attrs.LoadOrStore(linkKey{}, l)
	if !loaded {
		context.AfterFunc(ctx, l.close)
	}
	return v.(*link)
}

// ready returns the open upstream connection, opening it if needed.
func (l *link) ready(ctx context.Context) (*upstreamConn, error) {
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return nil, err
	}
	if l.up != nil {
		up := l.up
		l.mu.Unlock()
		return up, nil
	}
	ch := l.opening
	if ch == nil {
		ch = make(chan struct{})
		l.opening = ch
		l.mu.Unlock()
		l.open()
	} else {
		l.mu.Unlock()
	}
	select {
	case <-ch:
	case <-ctx.Done():
		return nil, networkError("%v", errClientGone)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return nil, l.err
	}
	if l.up == nil {
		if l.openErr == nil {
			return nil, networkError("%v", errClientGone)
		}
		return nil, l.openErr
	}
	return l.up, nil
}

// open dials the upstream and exchanges API_VERSIONS, then records the
// connection or the failure and wakes the waiters. A failure to open is not
// final: the requests waiting for this attempt get its error, the client
// connection stays open for the APIs the sidecar answers itself, and the
// next forwarded request tries again.
func (l *link) open() {
	up, err := l.dial()
	l.mu.Lock()
	switch {
	case err == nil && l.err == nil:
		l.up = up
	case err == nil: // the client left meanwhile
		up.client.Close()
	default:
		l.openErr = err
	}
	close(l.opening)
	if l.up == nil {
		l.opening = nil // the next request tries again
	}
	failed := l.up == nil
	l.mu.Unlock()
	if failed {
		if err != nil && l.connCtx.Err() == nil {
			l.p.log.Warn("cannot open the upstream connection; failing the forwarded request, local APIs stay available",
				"conn", l.sess.ConnID, "error", err)
		}
		return
	}
	l.p.log.Debug("upstream connection open", "conn", l.sess.ConnID, "upstream", up.addr)
	if l.p.cfg.UpstreamCredentials == nil {
		l.enableFast(up)
	}
	l.watch(up)
}

// watch ends the link when up, while it is the link's upstream, fails.
func (l *link) watch(up *upstreamConn) {
	go func() {
		select {
		case <-up.client.Done():
			l.fail(up, up.client.Err())
		case <-l.connCtx.Done():
		}
	}()
}

func (l *link) dial() (*upstreamConn, error) {
	ctx, cancel := context.WithTimeout(l.connCtx, l.p.cfg.ConnectTimeout)
	defer cancel()
	return l.p.connect(ctx, l.sess.ConnID, l.flushAnswers)
}

// connect opens a connection to the current upstream and exchanges
// API_VERSIONS, whose answer becomes the proxy's last known list.
func (p *Proxy) connect(ctx context.Context, connID uint64, onIdle func()) (*upstreamConn, error) {
	var addr string
	var reg int64
	var err error
	if rs, ok := p.cfg.Upstream.(registered); ok {
		addr, reg, err = rs.currentReg(ctx)
	} else {
		addr, err = p.cfg.Upstream.Current(ctx)
	}
	if err != nil {
		return nil, networkError("The proxy has no upstream coordinator to forward to: %v", err)
	}
	up, err := p.connectAddr(ctx, connID, onIdle, addr)
	if err != nil {
		return nil, err
	}
	up.reg.Store(reg)
	return up, nil
}

// connectAddr opens a connection to addr and exchanges API_VERSIONS.
func (p *Proxy) connectAddr(ctx context.Context, connID uint64, onIdle func(), addr string) (*upstreamConn, error) {
	if p.self.isSelf(ctx, addr) {
		p.log.Error("the upstream coordinator address is this sidecar itself; refusing to forward",
			"conn", connID, "upstream", addr)
		return nil, networkError("The upstream coordinator address %s is this sidecar itself; the proxy refuses to forward to it. "+
			"Point sidecar.upstream.address or sidecar.upstream.listener-name at the coordinator's own listener.", addr)
	}
	nc, err := p.cfg.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, networkError("The proxy cannot connect to the upstream coordinator at %s: %v", addr, err)
	}
	client := wire.NewClient(nc, wire.ClientOptions{MaxFrameSize: p.cfg.MaxResponseSize, OnReadIdle: onIdle})
	versions, err := client.Handshake(ctx)
	if err != nil {
		client.Close()
		return nil, networkError("API_VERSIONS to the upstream coordinator at %s failed: %v", addr, err)
	}
	p.versions.Store(versions)
	return &upstreamConn{addr: addr, client: client, versions: versions}, nil
}

// authenticate logs the upstream connection in as the session's user, once,
// when Config.UpstreamCredentials is set.
func (l *link) authenticate(ctx context.Context, up *upstreamConn) error {
	creds := l.p.cfg.UpstreamCredentials
	if creds == nil {
		return nil
	}
	user, password, ok := creds(l.sess)
	if !ok {
		return refused("The connection has not completed authentication yet, so the proxy cannot authenticate to the coordinator on its behalf.")
	}
	if l.authed.Load() {
		return l.checkUser(user)
	}
	l.authMu.Lock()
	defer l.authMu.Unlock()
	if l.authed.Load() {
		return l.checkUser(user)
	}
	actx, cancel := context.WithTimeout(ctx, l.p.cfg.ConnectTimeout)
	defer cancel()
	err := l.p.login(actx, up, user, password)
	if fe, isAPI := flusserr.From(err); isAPI && err != nil {
		// The coordinator rejected the user: tell the client why, and end
		// both connections as a Fluss server's failed handshake does.
		l.p.log.Warn("the upstream coordinator rejected the client's user", "conn", l.sess.ConnID,
			"principal", user, "error", err)
		l.failWith(up, fe)
		return fe
	}
	if err != nil {
		if ctx.Err() != nil {
			return networkError("%v", errClientGone)
		}
		return l.fail(up, err)
	}
	l.authUser = user
	l.authed.Store(true)
	l.enableFast(up)
	return nil
}

// login sends AUTHENTICATE with SASL PLAIN as user on up.
func (p *Proxy) login(ctx context.Context, up *upstreamConn, user, password string) error {
	token := authz.PlainToken{User: user, Password: password}.Bytes()
	return up.client.Call(ctx, messages.KeyAuthenticate, 0, &messages.AuthenticateRequest{
		Protocol: proto.String("PLAIN"), Token: token,
	}, &messages.AuthenticateResponse{})
}

// enableFast lets forwarded requests take the fast path, unless the link
// has failed.
func (l *link) enableFast(up *upstreamConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.fast.Store(up)
	}
}

// tryForward is the fast path of forwarding, run on the client connection's
// reader goroutine: once the upstream connection is open (and logged in),
// the request is written to it at once and its answer goes back to the
// client from the upstream reader, through reply, with no goroutine of its
// own. It reports false, leaving the request to the ordinary path, whenever
// something needs more than that: the link not yet ready or failed, a
// changed user, a metadata answer to rewrite or, once per link, to check.
func (l *link) tryForward(h wire.RequestHeader, body []byte, reply *wire.Replier) bool {
	up := l.fast.Load()
	if up == nil && !l.p.resending() {
		return false
	}
	if h.APIKey == messages.KeyGetMetadata && (l.p.cfg.RewriteMetadata != nil || !l.metadataChecked.Load()) {
		return false
	}
	if creds := l.p.cfg.UpstreamCredentials; creds != nil {
		if user, _, ok := creds(l.sess); !ok || user != l.authUser {
			return false
		}
	}
	if l.reply.Load() == nil {
		l.reply.CompareAndSwap(nil, reply)
	}
	if !l.p.resending() {
		l.queuedOn(up)
		return up.client.Queue(h.APIKey, h.APIVersion, body, int64(h.RequestID), l.answerFn) == nil
	}
	if up == nil {
		// A move is under way (or the link is not ready): wait behind it.
		if l.queueBehindMove(h, body) {
			return true
		}
		if up = l.fast.Load(); up == nil {
			return false
		}
	}
	l.queuedOn(up)
	return l.send(up, &fwd{id: h.RequestID, key: h.APIKey, ver: h.APIVersion, body: body}, false)
}

// queuedOn records that the reader is about to queue a request on up
// without writing it; a request queued on another connection before is
// written now, since Flush writes only up's.
func (l *link) queuedOn(up *upstreamConn) {
	if l.unflushed != nil && l.unflushed != up {
		l.unflushed.client.Flush()
	}
	l.unflushed = up
}

// flushQueued writes what the reader queued (Forwarder's Flush).
func (l *link) flushQueued() {
	if up := l.unflushed; up != nil {
		up.client.Flush()
	}
}

// answer passes one upstream answer of the fast path back to the client
// under the client's own request id (tag), or, when the upstream connection
// failed first, the error every forwarded request of the link gets. It
// runs on the upstream reader goroutine or on the goroutine that ended the
// upstream connection.
func (l *link) answer(tag int64, r wire.Response, err error) {
	if l.p.resending() {
		l.answerTracked(tag, r, err)
		return
	}
	reply := l.reply.Load()
	id := int32(tag)
	if err != nil {
		// The goroutine watching up.client.Done() shuts the link down;
		// closing the client here could run on its own reader.
		reply.ReplyError(id, l.record(l.upstreamError(l.fastUp(), err)))
		return
	}
	if l.p.notLeader(r) {
		l.p.stats.passed.Add(1)
	}
	reply.Queue(id, r.Type, r.Body)
}

// flushAnswers writes the answers answer queued; the upstream reader calls
// it before it waits for more.
func (l *link) flushAnswers() {
	if reply := l.reply.Load(); reply != nil {
		reply.Flush()
	}
}

func (l *link) fastUp() *upstreamConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.up
}

func (l *link) checkUser(user string) error {
	if user != l.authUser {
		return refused("The connection's user changed after the proxy authenticated to the coordinator as another user.")
	}
	return nil
}

// fail ends the link after an upstream failure (cause) and returns the
// error every forwarded request of this connection now gets.
func (l *link) fail(up *upstreamConn, cause error) error {
	if !l.isCurrent(up) {
		// A connection the link has moved away from: only the requests
		// that were in flight on it are affected.
		return l.upstreamError(up, cause)
	}
	return l.failWith(up, l.upstreamError(up, cause))
}

// upstreamError says what a client sees after the upstream connection up
// failed with cause.
func (l *link) upstreamError(up *upstreamConn, cause error) *flusserr.Error {
	if errors.Is(cause, wire.ErrClientClosed) && l.connCtx.Err() != nil {
		return networkError("%v", errClientGone)
	}
	var sf *wire.ServerFailureError
	if errors.As(cause, &sf) {
		return networkError("The upstream coordinator at %s failed the connection (%s, code %d): %s",
			up.addr, sf.Code.Name(), int32(sf.Code), sf.Message)
	}
	return networkError("The connection from the proxy to the upstream coordinator at %s was lost: %v", up.addr, cause)
}

// record makes err the link's error unless it already has one, and returns
// the link's error.
func (l *link) record(err error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
	l.fast.Store(nil)
	return l.err
}

// failWith records err as why the link is unusable (the first error wins)
// and, once, closes the upstream connection and the client connection when
// idle. It returns the link's error.
func (l *link) failWith(up *upstreamConn, err error) error {
	err = l.record(err)
	l.shutdownOnce.Do(func() {
		if l.connCtx.Err() == nil {
			l.p.log.Warn("upstream connection failed; failing its requests and closing the client connection",
				"conn", l.sess.ConnID, "upstream", up.addr, "error", err)
		}
		up.client.Close()
		l.sess.CloseWhenIdle()
	})
	return err
}

// close ends the link when the client connection closes.
func (l *link) close() {
	l.mu.Lock()
	if l.err == nil {
		l.err = networkError("%v", errClientGone)
	}
	l.fast.Store(nil)
	up := l.up
	l.mu.Unlock()
	if up != nil {
		up.client.Close()
	}
}
