package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// UpstreamSource tells where the coordinator is. Current is asked each time
// a client connection opens its upstream connection, so a source that
// follows leader changes sends new client connections to the new leader
// while existing ones keep theirs until it fails.
type UpstreamSource interface {
	// Current returns the host:port to dial, or an error saying why there
	// is none. It may wait, bounded by ctx, for a first answer.
	Current(ctx context.Context) (string, error)
}

// StaticUpstream is a fixed address: sidecar.upstream.address.
type StaticUpstream string

// Current returns the address.
func (s StaticUpstream) Current(context.Context) (string, error) {
	if s == "" {
		return "", errors.New("no upstream address configured")
	}
	return string(s), nil
}

// ErrNoActiveCoordinator reports that ZooKeeper names no leading
// coordinator, for instance during an election.
var ErrNoActiveCoordinator = errors.New("ZooKeeper names no active coordinator (" + ActiveCoordinatorPath + " is absent)")

// ZKDiscovery follows the active coordinator registered in ZooKeeper at
// /coordinators/active (under the client's root), through a watch, and
// picks the address of one listener.
type ZKDiscovery struct {
	zc       *zk.Client
	listener string
	log      hclog.Logger
	backoff  time.Duration

	first     chan struct{} // closed after the first answer
	firstOnce sync.Once

	mu      sync.Mutex
	addr    string
	reg     int64 // the creation zxid of the znode addr was read from
	err     error
	changes []chan struct{}
}

// ZKDiscoveryConfig configures NewZKDiscovery.
type ZKDiscoveryConfig struct {
	// ZK is the cluster's ZooKeeper; the znode is read under its root.
	ZK *zk.Client
	// ListenerName is sidecar.upstream.listener-name; empty picks the first
	// listener the coordinator registered.
	ListenerName string
	// RetryBackoff is the wait after a failed ZooKeeper read (default 1s).
	RetryBackoff time.Duration
	Logger       hclog.Logger
}

// NewZKDiscovery returns a discovery that does nothing until Run.
func NewZKDiscovery(cfg ZKDiscoveryConfig) (*ZKDiscovery, error) {
	if cfg.ZK == nil {
		return nil, errors.New("proxy: ZooKeeper discovery needs a ZooKeeper client")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = time.Second
	}
	return &ZKDiscovery{
		zc: cfg.ZK, listener: cfg.ListenerName, log: cfg.Logger.Named("proxy"),
		backoff: cfg.RetryBackoff, first: make(chan struct{}),
	}, nil
}

// Current returns the address of the active coordinator's listener. Before
// the first read of ZooKeeper has finished it waits, bounded by ctx.
func (d *ZKDiscovery) Current(ctx context.Context) (string, error) {
	addr, _, err := d.currentReg(ctx)
	return addr, err
}

// currentReg is Current with the registration the address was read from,
// both read under one lock.
func (d *ZKDiscovery) currentReg(ctx context.Context) (string, int64, error) {
	select {
	case <-d.first:
	case <-ctx.Done():
		return "", 0, fmt.Errorf("waiting for the active coordinator in ZooKeeper: %w", ctx.Err())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addr, d.reg, d.err
}

// Active reads the active coordinator anew, after a ZooKeeper sync, rather
// than from what the watch last saw, and returns its address with its
// registration: the creation zxid of /coordinators/active, which differs
// between two registrations of the same address.
func (d *ZKDiscovery) Active(ctx context.Context) (string, int64, error) {
	data, st, err := d.zc.SyncGet(ctx, ActiveCoordinatorPath)
	if errors.Is(err, zk.ErrNoNode) {
		return "", 0, ErrNoActiveCoordinator
	}
	if err != nil {
		return "", 0, fmt.Errorf("reading %s from ZooKeeper: %w", ActiveCoordinatorPath, err)
	}
	addr, err := d.addressIn(data)
	if err != nil {
		return "", 0, err
	}
	return addr, st.Czxid, nil
}

// addressIn is the address of the configured listener in the data of
// /coordinators/active.
func (d *ZKDiscovery) addressIn(data []byte) (string, error) {
	a, err := DecodeActiveCoordinator(data)
	if err != nil {
		return "", err
	}
	return a.Address(d.listener)
}

// Changed returns a channel closed at the next change of Current's answer.
func (d *ZKDiscovery) Changed() <-chan struct{} {
	ch := make(chan struct{})
	d.mu.Lock()
	d.changes = append(d.changes, ch)
	d.mu.Unlock()
	return ch
}

func (d *ZKDiscovery) set(addr string, reg int64, err error) {
	d.mu.Lock()
	changed := addr != d.addr || (err == nil) != (d.err == nil) || (err != nil && err.Error() != d.err.Error())
	d.addr, d.reg, d.err = addr, reg, err
	var wake []chan struct{}
	if changed {
		wake, d.changes = d.changes, nil
	}
	d.mu.Unlock()
	d.firstOnce.Do(func() { close(d.first) })
	for _, ch := range wake {
		close(ch)
	}
	if changed {
		if err != nil {
			d.log.Warn("no usable active coordinator", "error", err)
		} else {
			d.log.Info("active coordinator", "upstream", addr)
		}
	}
}

// Run reads the znode and re-reads it at every change until ctx ends. A
// failed read keeps the last known address and is retried after the
// backoff.
func (d *ZKDiscovery) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		watch, err := d.readOnce(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			d.mu.Lock()
			known := d.addr != ""
			d.mu.Unlock()
			if !known {
				d.set("", 0, fmt.Errorf("reading %s from ZooKeeper: %w", ActiveCoordinatorPath, err))
			}
			d.log.Debug("reading the active coordinator failed; retrying", "error", err, "backoff", d.backoff)
			t := time.NewTimer(d.backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			continue
		}
		select {
		case <-watch:
		case <-ctx.Done():
		}
	}
	return ctx.Err()
}

// readOnce reads the znode (or waits for its creation) and returns the
// watch that fires at its next change.
func (d *ZKDiscovery) readOnce(ctx context.Context) (<-chan zk.Event, error) {
	data, st, watch, err := d.zc.GetW(ctx, ActiveCoordinatorPath)
	if errors.Is(err, zk.ErrNoNode) {
		exists, _, ewatch, err := d.zc.ExistsW(ctx, ActiveCoordinatorPath)
		if err != nil {
			return nil, err
		}
		if exists {
			// Created between the two calls: read it now.
			ch := make(chan zk.Event)
			close(ch)
			return ch, nil
		}
		d.set("", 0, ErrNoActiveCoordinator)
		return ewatch, nil
	}
	if err != nil {
		return nil, err
	}
	addr, err := d.addressIn(data)
	if err != nil {
		d.set("", 0, err)
		return watch, nil
	}
	d.set(addr, st.Czxid, nil)
	return watch, nil
}

// sameHostPort is net.SplitHostPort's pieces, compared after resolving.
func splitAddr(a string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(a)
	if err != nil {
		return "", "", fmt.Errorf("address %q: %w", a, err)
	}
	return host, port, nil
}
