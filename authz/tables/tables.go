// Package tables keeps the table id → "db.table" map that authorization
// needs, built as a Fluss coordinator builds its own: by scanning
// /metadata/databases/*/tables/* in ZooKeeper and reading table_id from
// each table znode, then kept current with watches.
package tables

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// DatabasesPath is the logical znode whose children are the databases.
const DatabasesPath = "/metadata/databases"

// Path is a table's database and name.
type Path struct {
	Database string
	Table    string
}

// String is "db.table".
func (p Path) String() string { return p.Database + "." + p.Table }

// DecodeTableID reads table_id from TableRegistration JSON. ok is false for
// empty data (a table znode is briefly empty while the table is created).
func DecodeTableID(data []byte) (id int64, ok bool, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return 0, false, nil
	}
	var reg struct {
		Version *int             `json:"version"`
		TableID *json.RawMessage `json:"table_id"`
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		return 0, false, fmt.Errorf("decode TableRegistration: %w", err)
	}
	if reg.TableID == nil {
		return 0, false, errors.New("decode TableRegistration: table_id is missing")
	}
	if err := json.Unmarshal(*reg.TableID, &id); err != nil {
		return 0, false, fmt.Errorf("decode TableRegistration: table_id: %w", err)
	}
	return id, true, nil
}

// Config configures a Map.
type Config struct {
	ZK     *zk.Client
	Logger hclog.Logger
	// RetryDelay is the wait before a full rescan after a ZooKeeper
	// failure; default 1s.
	RetryDelay time.Duration
}

type eventKind int

const (
	evDatabases eventKind = iota
	evTables
	evTable
)

type event struct {
	kind      eventKind
	db, table string
	// full makes an evDatabases rescan re-read every table znode instead
	// of trusting the ids already known.
	full bool
}

// Map is the live table id → path map.
type Map struct {
	cfg Config
	log hclog.Logger

	mu   sync.RWMutex
	byID map[int64]Path
	// known holds, per database, the table znodes seen and their id (0 with
	// ok=false while empty).
	known map[string]map[string]entry
	// armed holds the watches being forwarded, by watch kind and path, so
	// that rescans do not stack a second forwarder on a watch that is
	// still pending (see forward).
	armed map[string]bool

	events  chan event
	cancel  context.CancelFunc
	done    chan struct{}
	unreg   func()
	stopped sync.Once
	ctx     context.Context
}

type entry struct {
	id int64
	ok bool
}

// New returns a Map; call Start to scan and watch.
func New(cfg Config) (*Map, error) {
	if cfg.ZK == nil {
		return nil, errors.New("tables: a ZooKeeper client is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = time.Second
	}
	return &Map{
		cfg: cfg, log: cfg.Logger.Named("tables"),
		byID: map[int64]Path{}, known: map[string]map[string]entry{}, armed: map[string]bool{},
		events: make(chan event, 256), done: make(chan struct{}),
	}, nil
}

// Lookup returns the path of a table id.
func (m *Map) Lookup(id int64) (Path, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.byID[id]
	return p, ok
}

// Len is the number of tables known.
func (m *Map) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.byID)
}

// Start scans every table and starts following changes. The first scan
// must succeed.
func (m *Map) Start(ctx context.Context) error {
	runCtx, cancel := context.WithCancel(context.Background())
	m.ctx, m.cancel = runCtx, cancel
	// A new session means the old one expired: every watch went with it,
	// and anything may have changed meanwhile, including a table dropped and
	// created again under the same name, which no listing shows. So the
	// rescan re-reads every table instead of trusting the ids it knows. The
	// callback is registered before the first scan so that an expiry during
	// that scan is not missed (the event waits in m.events for the loop).
	unreg := m.cfg.ZK.OnNewSession(func() { m.post(event{kind: evDatabases, full: true}) })
	if err := m.scanAll(ctx, false); err != nil {
		unreg()
		cancel()
		return err
	}
	m.unreg = unreg
	go m.loop()
	return nil
}

// Close stops following changes.
func (m *Map) Close() {
	m.stopped.Do(func() {
		if m.cancel == nil {
			return
		}
		if m.unreg != nil {
			m.unreg()
			m.cancel()
			<-m.done
			return
		}
		m.cancel()
	})
}

func (m *Map) post(ev event) {
	select {
	case m.events <- ev:
	case <-m.ctx.Done():
	}
}

// forward turns one watch firing into an event. key names the watch (its
// kind and path). go-zookeeper keeps every channel armed on a path and fires
// them all, so a rescan that re-arms a watch still pending would add one
// more forwarder, and one more event, each time; the first forwarder is
// enough, since it fires for the same change (or for the loss of the
// session, which triggers a rescan that arms the watch again).
func (m *Map) forward(key string, ch <-chan zk.Event, ev event) {
	m.mu.Lock()
	if m.armed[key] {
		m.mu.Unlock()
		return
	}
	m.armed[key] = true
	m.mu.Unlock()
	go func() {
		select {
		case <-ch:
			m.mu.Lock()
			delete(m.armed, key)
			m.mu.Unlock()
			m.post(ev)
		case <-m.ctx.Done():
		}
	}()
}

// stepTimeout bounds one update step (a scan or a table read).
const stepTimeout = 30 * time.Second

func (m *Map) loop() {
	defer close(m.done)
	for {
		var ev event
		select {
		case <-m.ctx.Done():
			return
		case ev = <-m.events:
		}
		// Each step is bounded, so a ZooKeeper call that never answers
		// cannot stall the map.
		ctx, cancel := context.WithTimeout(m.ctx, stepTimeout)
		var err error
		switch ev.kind {
		case evDatabases:
			err = m.scanAll(ctx, ev.full)
		case evTables:
			err = m.scanDB(ctx, ev.db, false)
		case evTable:
			err = m.readTable(ctx, ev.db, ev.table)
		}
		cancel()
		if err != nil && m.ctx.Err() == nil {
			m.log.Warn("table map update failed; rescanning", "error", err, "retry_in", m.cfg.RetryDelay)
			t := time.NewTimer(m.cfg.RetryDelay)
			select {
			case <-m.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			// The failed step may have left watches unarmed or ids unread:
			// trust nothing.
			go m.post(event{kind: evDatabases, full: true})
		}
	}
}

// scanAll lists the databases and scans each; with full, every table znode
// is read again.
func (m *Map) scanAll(ctx context.Context, full bool) error {
	key := "children:" + DatabasesPath
	dbs, ch, err := m.cfg.ZK.ChildrenW(ctx, DatabasesPath)
	if errors.Is(err, zk.ErrNoNode) {
		var ok bool
		key = "exists:" + DatabasesPath
		ok, _, ch, err = m.cfg.ZK.ExistsW(ctx, DatabasesPath)
		if err == nil && ok {
			return m.scanAll(ctx, full)
		}
	}
	if err != nil {
		return err
	}
	m.forward(key, ch, event{kind: evDatabases})
	present := map[string]bool{}
	for _, db := range dbs {
		present[db] = true
		if err := m.scanDB(ctx, db, full); err != nil {
			return err
		}
	}
	m.mu.Lock()
	for db := range m.known {
		if !present[db] {
			m.dropDBLocked(db)
		}
	}
	m.mu.Unlock()
	return nil
}

func (m *Map) dropDBLocked(db string) {
	for t, e := range m.known[db] {
		if e.ok && m.byID[e.id] == (Path{db, t}) {
			delete(m.byID, e.id)
		}
	}
	delete(m.known, db)
}

// scanDB lists a database's tables, reads the new ones (every one with
// full) and forgets those gone.
func (m *Map) scanDB(ctx context.Context, db string, full bool) error {
	dbPath := DatabasesPath + "/" + db
	names, ch, err := m.cfg.ZK.ChildrenW(ctx, dbPath+"/tables")
	if errors.Is(err, zk.ErrNoNode) {
		// No table yet, or the database is gone: watch the database znode's
		// children for the "tables" node.
		_, dch, derr := m.cfg.ZK.ChildrenW(ctx, dbPath)
		if errors.Is(derr, zk.ErrNoNode) {
			m.mu.Lock()
			m.dropDBLocked(db)
			m.mu.Unlock()
			return nil
		}
		if derr != nil {
			return derr
		}
		m.forward("children:"+dbPath, dch, event{kind: evTables, db: db})
		names = nil
	} else if err != nil {
		return err
	} else {
		m.forward("children:"+dbPath+"/tables", ch, event{kind: evTables, db: db})
	}
	present := map[string]bool{}
	for _, t := range names {
		present[t] = true
		m.mu.RLock()
		e, seen := m.known[db][t]
		m.mu.RUnlock()
		if seen && e.ok && !full {
			// A table's id never changes while its znode lives, and the
			// data watch readTable armed fires if the znode is deleted,
			// even when a table of the same name replaces it before this
			// listing.
			continue
		}
		if err := m.readTable(ctx, db, t); err != nil {
			return err
		}
	}
	m.mu.Lock()
	for t, e := range m.known[db] {
		if !present[t] {
			if e.ok && m.byID[e.id] == (Path{db, t}) {
				delete(m.byID, e.id)
			}
			delete(m.known[db], t)
		}
	}
	m.mu.Unlock()
	return nil
}

// readTable reads one table znode and keeps a data watch on it, so that a
// drop (NodeDeleted) or a registration written into an empty znode brings
// the table back here. A znode that is gone, empty or undecodable maps no
// id.
func (m *Map) readTable(ctx context.Context, db, table string) error {
	path := DatabasesPath + "/" + db + "/tables/" + table
	data, _, ch, err := m.cfg.ZK.GetW(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		m.mu.Lock()
		m.forgetLocked(db, table)
		m.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	m.forward("data:"+path, ch, event{kind: evTable, db: db, table: table})
	id, ok, derr := DecodeTableID(data)
	if derr != nil {
		m.log.Warn("ignoring a table znode that does not decode", "path", path, "error", derr)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	// The znode may be a new table under an old name: drop the old id.
	m.forgetLocked(db, table)
	if m.known[db] == nil {
		m.known[db] = map[string]entry{}
	}
	m.known[db][table] = entry{id: id, ok: ok}
	if ok {
		m.byID[id] = Path{Database: db, Table: table}
	}
	return nil
}

// forgetLocked drops what is known of one table.
func (m *Map) forgetLocked(db, table string) {
	if e, seen := m.known[db][table]; seen {
		if e.ok && m.byID[e.id] == (Path{db, table}) {
			delete(m.byID, e.id)
		}
		delete(m.known[db], table)
	}
}
