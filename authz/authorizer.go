package authz

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// ZooKeeper paths of Fluss's ACL storage (logical, under the root).
const (
	ACLsPath       = "/fluss-acls"
	ACLChangesPath = "/fluss-acl-changes"
	// ACLChangePrefix starts the name of every change notification node.
	ACLChangePrefix = "acl_changes_"
)

// ACLPath is the znode of a resource's ACLs.
func ACLPath(r Resource) string { return ACLsPath + "/" + r.Type.String() + "/" + r.Name }

// AuthorizerConfig configures an Authorizer.
type AuthorizerConfig struct {
	ZK *zk.Client
	// InternalListener sessions are always allowed (internal.listener.name).
	InternalListener string
	SuperUsers       []Principal
	IgnoreCase       bool
	Logger           hclog.Logger
	// RetryDelay is how long to wait before retrying after a ZooKeeper
	// failure while watching; default 1s.
	RetryDelay time.Duration
}

// Authorizer is Fluss's default authorizer over the ACLs in ZooKeeper. It
// loads every ACL at Start and then reloads a resource whenever a change
// notification names it; after a new ZooKeeper session it reloads all.
type Authorizer struct {
	cfg AuthorizerConfig
	log hclog.Logger

	mu   sync.RWMutex
	acls map[Resource][]ACL
	// lastSeq is the highest change notification sequence processed.
	lastSeq string

	resync  chan struct{}
	cancel  context.CancelFunc
	done    chan struct{}
	stopped sync.Once
	unreg   func()
}

// NewAuthorizer returns an Authorizer; call Start to load and watch.
func NewAuthorizer(cfg AuthorizerConfig) (*Authorizer, error) {
	if cfg.ZK == nil {
		return nil, errors.New("authz: the authorizer needs a ZooKeeper client")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = time.Second
	}
	return &Authorizer{
		cfg: cfg, log: cfg.Logger.Named("authz"),
		acls: map[Resource][]ACL{}, resync: make(chan struct{}, 1), done: make(chan struct{}),
	}, nil
}

// Start loads every ACL and starts watching for changes. It fails if the
// first load fails.
//
// After the session expires, notifications may have been purged before the
// authorizer could read them, so a new session triggers a full reload. The
// callback is registered before the first load: a session that expires
// during that load must trigger the reload too.
func (a *Authorizer) Start(ctx context.Context) error {
	unreg := a.cfg.ZK.OnNewSession(func() {
		select {
		case a.resync <- struct{}{}:
		default:
		}
	})
	seq, err := a.latestChange(ctx)
	if err != nil {
		unreg()
		return err
	}
	all, err := a.loadAll(ctx)
	if err != nil {
		unreg()
		return err
	}
	a.mu.Lock()
	a.acls, a.lastSeq = all, seq
	a.mu.Unlock()
	runCtx, cancel := context.WithCancel(context.Background())
	a.cancel, a.unreg = cancel, unreg
	go a.watch(runCtx)
	return nil
}

// Close stops watching.
func (a *Authorizer) Close() {
	a.stopped.Do(func() {
		if a.cancel == nil {
			close(a.done)
			return
		}
		a.unreg()
		a.cancel()
		<-a.done
	})
}

// ACLs returns the ACLs currently held for r.
func (a *Authorizer) ACLs(r Resource) []ACL {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return append([]ACL(nil), a.acls[r]...)
}

// Authorize answers whether the session may perform op on r: nil, or an
// AUTHORIZATION_EXCEPTION (48) with Fluss's message.
func (a *Authorizer) Authorize(s *wire.Session, op Operation, r Resource) error {
	if s.ListenerName == a.cfg.InternalListener {
		return nil
	}
	p := User(s.Principal())
	for _, su := range a.cfg.SuperUsers {
		if SamePrincipal(su, p, a.cfg.IgnoreCase) {
			return nil
		}
	}
	req := Request{Principal: p, Host: HostAddress(s.RemoteAddr), Operation: op, Resource: r}
	a.mu.RLock()
	ok := Decide(func(r Resource) []ACL { return a.acls[r] }, req, a.cfg.IgnoreCase)
	a.mu.RUnlock()
	if ok {
		return nil
	}
	a.log.Debug("denied", "principal", p.Name, "operation", op.String(), "resource", r.String())
	return DenialError(p, op, r)
}

// DenialError is Fluss's AuthorizationException for a denied request:
// apierr's answer to ErrNotAuthorized, whose message ends with a space, as
// Fluss's does.
func DenialError(p Principal, op Operation, r Resource) *flusserr.Error {
	return (&apierr.Error{Class: apierr.ErrNotAuthorized, Principal: p.String(), Operation: op.String(), Resource: r.String()}).Fluss()
}

func (a *Authorizer) loadAll(ctx context.Context) (map[Resource][]ACL, error) {
	all := map[Resource][]ACL{}
	for _, t := range resourceTypes {
		names, err := a.cfg.ZK.Children(ctx, ACLsPath+"/"+t.String())
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			r := Resource{Type: t, Name: n}
			acls, err := a.load(ctx, r)
			if err != nil {
				return nil, err
			}
			if len(acls) > 0 {
				all[r] = acls
			}
		}
	}
	return all, nil
}

// load reads one resource's ACLs. A znode that does not decode gives no
// ACLs (deny) and a warning: a bad entry must never widen access.
func (a *Authorizer) load(ctx context.Context, r Resource) ([]ACL, error) {
	data, _, err := a.cfg.ZK.Get(ctx, ACLPath(r))
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	acls, err := DecodeResourceACL(data)
	if err != nil {
		a.log.Warn("ignoring ACLs that do not decode", "resource", r.String(), "error", err)
		return nil, nil
	}
	return acls, nil
}

func (a *Authorizer) reload(ctx context.Context, r Resource) error {
	acls, err := a.load(ctx, r)
	if err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(acls) == 0 {
		delete(a.acls, r)
	} else {
		a.acls[r] = acls
	}
	a.log.Debug("ACLs reloaded", "resource", r.String(), "count", len(acls))
	return nil
}

func (a *Authorizer) latestChange(ctx context.Context) (string, error) {
	names, err := a.cfg.ZK.Children(ctx, ACLChangesPath)
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	last := ""
	for _, n := range names {
		if seq, ok := strings.CutPrefix(n, ACLChangePrefix); ok && seq > last {
			last = seq
		}
	}
	return last, nil
}

// watch follows /fluss-acl-changes until ctx ends.
// stepTimeout bounds each step of the background ACL watch (one poll, one
// full reload), so a ZooKeeper call that never answers cannot stall it.
const stepTimeout = 30 * time.Second

func (a *Authorizer) watch(ctx context.Context) {
	defer close(a.done)
	for {
		stepCtx, cancel := context.WithTimeout(ctx, stepTimeout)
		ch, err := a.poll(stepCtx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			a.log.Warn("watching ACL changes failed; retrying", "error", err, "retry_in", a.cfg.RetryDelay)
			t := time.NewTimer(a.cfg.RetryDelay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			case <-a.resync:
				t.Stop()
				a.fullReload(ctx)
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		case <-a.resync:
			a.fullReload(ctx)
		}
	}
}

func (a *Authorizer) fullReload(runCtx context.Context) {
	ctx, cancel := context.WithTimeout(runCtx, stepTimeout)
	defer cancel()
	seq, err := a.latestChange(ctx)
	if err == nil {
		var all map[Resource][]ACL
		if all, err = a.loadAll(ctx); err == nil {
			a.mu.Lock()
			a.acls, a.lastSeq = all, max(seq, a.lastSeq)
			a.mu.Unlock()
			a.log.Info("ACLs reloaded after a new ZooKeeper session")
			return
		}
	}
	a.log.Warn("full ACL reload failed; retrying", "error", err, "retry_in", a.cfg.RetryDelay)
	// Wait before asking again, so a ZooKeeper that fails fast does not
	// make this a busy loop.
	t := time.NewTimer(a.cfg.RetryDelay)
	defer t.Stop()
	select {
	case <-runCtx.Done():
		return
	case <-t.C:
	}
	select {
	case a.resync <- struct{}{}:
	default:
	}
}

// poll arms a watch on the change notifications and processes those newer
// than the last one seen, in sequence order.
func (a *Authorizer) poll(ctx context.Context) (<-chan zk.Event, error) {
	names, ch, err := a.cfg.ZK.ChildrenW(ctx, ACLChangesPath)
	if errors.Is(err, zk.ErrNoNode) {
		ok, _, ech, err := a.cfg.ZK.ExistsW(ctx, ACLChangesPath)
		if err != nil {
			return nil, err
		}
		if ok {
			return a.poll(ctx)
		}
		return ech, nil
	}
	if err != nil {
		return nil, err
	}
	a.mu.RLock()
	last := a.lastSeq
	a.mu.RUnlock()
	var fresh []string
	for _, n := range names {
		if seq, ok := strings.CutPrefix(n, ACLChangePrefix); ok && seq > last {
			fresh = append(fresh, seq)
		}
	}
	sort.Strings(fresh)
	for _, seq := range fresh {
		data, _, err := a.cfg.ZK.Get(ctx, ACLChangesPath+"/"+ACLChangePrefix+seq)
		if err != nil && !errors.Is(err, zk.ErrNoNode) {
			return nil, err
		}
		if err == nil {
			if r, perr := ParseChangeNotification(data); perr != nil {
				a.log.Warn("ignoring an ACL change notification that does not parse", "node", ACLChangePrefix+seq, "error", perr)
			} else if err := a.reload(ctx, r); err != nil {
				return nil, err
			}
		}
		a.mu.Lock()
		a.lastSeq = max(a.lastSeq, seq)
		a.mu.Unlock()
	}
	return ch, nil
}

// ParseChangeNotification reads the "TYPE:name" data of a change node.
func ParseChangeNotification(data []byte) (Resource, error) {
	typ, name, ok := strings.Cut(string(data), ":")
	if !ok || name == "" {
		return Resource{}, errors.New("want TYPE:name")
	}
	t, err := ParseResourceType(typ)
	if err != nil {
		return Resource{}, err
	}
	return Resource{Type: t, Name: name}, nil
}
