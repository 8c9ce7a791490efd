package cleanup

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// LeaderPath is the ephemeral znode, under zookeeper.path.root, held by the
// sidecar that leads cleanup. A Fluss cluster uses /metadata,
// /coordinators, /tabletservers, /producers and its ACL paths, never
// /sidecar.
const LeaderPath = "/sidecar/cleanup-leader"

// callTimeout bounds each ZooKeeper call of the election.
const callTimeout = 10 * time.Second

// ErrNoLeader: no instance holds the leader znode right now (at start, or
// between a leader's end and the next one's election).
var ErrNoLeader = errors.New("no cleanup leader elected yet")

// Elector campaigns for cleanup leadership through LeaderPath: the
// instance whose session created the ephemeral znode leads; the others
// watch it and campaign again when it goes (its owner closed its session,
// died and its session expired, or resigned).
type Elector struct {
	zc       *zk.Client
	identity []byte
	log      hclog.Logger
	onChange func(leading bool)
	backoff  time.Duration

	mu      sync.Mutex
	leading bool
	leader  string // the leader's identity, as last read
	known   bool   // a campaign has finished at least once
}

// ElectorConfig configures NewElector.
type ElectorConfig struct {
	ZK *zk.Client
	// Identity is stored in the znode so the others can say whom they
	// follow (host, pid, listeners).
	Identity []byte
	// OnChange, if set, is called when this instance starts or stops
	// leading, on the elector's goroutine.
	OnChange func(leading bool)
	// RetryBackoff is the wait after a failed ZooKeeper call (default 1s).
	RetryBackoff time.Duration
	Logger       hclog.Logger
}

// NewElector returns an elector that does nothing until Run.
func NewElector(cfg ElectorConfig) (*Elector, error) {
	if cfg.ZK == nil {
		return nil, errors.New("cleanup: the elector needs a ZooKeeper client")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = time.Second
	}
	return &Elector{zc: cfg.ZK, identity: cfg.Identity, log: cfg.Logger.Named("cleanup"),
		onChange: cfg.OnChange, backoff: cfg.RetryBackoff}, nil
}

// Run campaigns until ctx ends, then resigns: it deletes the znode if this
// session owns it, so that another instance takes over at once.
func (e *Elector) Run(ctx context.Context) {
	defer e.resign()
	for ctx.Err() == nil {
		watch, err := e.campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			e.log.Debug("cleanup leader election failed; retrying", "error", err, "backoff", e.backoff)
			t := time.NewTimer(e.backoff)
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
}

// campaign creates the znode unless it exists, reads who holds it and
// returns a watch that fires when it changes or goes.
func (e *Elector) campaign(ctx context.Context) (<-chan zk.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := e.zc.Create(ctx, LeaderPath, e.identity, zk.Ephemeral)
	if err != nil && !errors.Is(err, zk.ErrNodeExists) && !errors.Is(err, zk.ErrUnavailable) {
		return nil, err
	}
	// Whatever the create's outcome (it may be unknown after a lost
	// connection), the znode's owner says who leads.
	data, stat, watch, err := e.zc.GetW(ctx, LeaderPath)
	if errors.Is(err, zk.ErrNoNode) {
		ch := make(chan zk.Event)
		close(ch) // gone between the two calls: campaign again now
		return ch, nil
	}
	if err != nil {
		return nil, err
	}
	if stat.EphemeralOwner == 0 {
		// Not an election znode (someone created it by hand): nobody can
		// own it, so nobody would ever clean up.
		e.log.Warn("the cleanup leader znode is not ephemeral; no sidecar can lead cleanup until it is deleted",
			"znode", e.zc.FullPath(LeaderPath))
	}
	e.set(stat.EphemeralOwner == e.zc.SessionID(), string(data))
	return watch, nil
}

func (e *Elector) set(leading bool, leader string) {
	e.mu.Lock()
	changed := !e.known || leading != e.leading || (!leading && leader != e.leader)
	e.leading, e.leader, e.known = leading, leader, true
	e.mu.Unlock()
	if !changed {
		return
	}
	if leading {
		e.log.Info("this instance leads cleanup", "znode", e.zc.FullPath(LeaderPath))
	} else {
		e.log.Info("following: another instance leads cleanup", "leader", leader)
	}
	if e.onChange != nil {
		e.onChange(leading)
	}
}

// resign gives leadership up when this session holds it.
func (e *Elector) resign() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.mu.Lock()
	was := e.leading
	e.mu.Unlock()
	if was {
		if _, stat, err := e.zc.Get(ctx, LeaderPath); err == nil && stat.EphemeralOwner == e.zc.SessionID() {
			e.zc.Delete(ctx, LeaderPath, stat.Version)
		}
		e.mu.Lock()
		e.leading, e.leader = false, ""
		e.mu.Unlock()
		e.log.Info("stopped leading cleanup: shutting down")
		if e.onChange != nil {
			e.onChange(false)
		}
	}
}

// Confirm reads the znode and reports whether this session holds it now,
// and who does. A cleanup round calls it first, so that an instance that
// lost its session does not run a round it no longer owns.
func (e *Elector) Confirm(ctx context.Context) (leading bool, leader string, err error) {
	if !e.zc.Connected() {
		return false, "", errors.New("no ZooKeeper session")
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	data, stat, err := e.zc.Get(ctx, LeaderPath)
	if errors.Is(err, zk.ErrNoNode) {
		return false, "", ErrNoLeader
	}
	if err != nil {
		return false, "", err
	}
	return stat.EphemeralOwner == e.zc.SessionID(), string(data), nil
}

// Leading reports the elector's last known state.
func (e *Elector) Leading() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.leading
}
