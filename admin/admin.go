// Package admin inspects and repairs the producer offsets registry directly
// in ZooKeeper and remote storage, with a server's configuration and without
// a running sidecar: list every snapshot, check the registry for damage
// (fsck) and export every bucket offset as a table (Arrow IPC, Parquet, CSV,
// JSON lines).
//
// It reads through the stores' read-side methods only; fsck's repair is the
// one writer, and deletes nothing but unreferenced files older than the
// grace period.
package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// Snapshots reads producer znodes. zkstore.Store implements it.
type Snapshots interface {
	ListProducerIDs(ctx context.Context) ([]string, error)
	RawSnapshot(ctx context.Context, producerID string) ([]byte, error)
}

// Files reads (and, for repair, deletes) offsets files. remotestore.Store
// implements it.
type Files interface {
	ReadOffsets(ctx context.Context, offsetsPath string) (offsets.TableOffsets, error)
	ListProducerDirs(ctx context.Context) ([]string, error)
	ListProducerFiles(ctx context.Context, producerID string) ([]storage.FileInfo, error)
	Qualify(offsetsPath string) (string, error)
	DeleteOffsets(ctx context.Context, offsetsPath string) error
}

// Config is what an Admin works on.
type Config struct {
	Snapshots Snapshots
	Files     Files
	// Now is the clock that decides expiry and file ages; time.Now if nil.
	Now func() time.Time
	// Logger is the parent logger; admin logs to its "admin" sub-logger.
	Logger hclog.Logger
	// Parallelism bounds the ZooKeeper reads and file reads in flight;
	// 16 if zero.
	Parallelism int
}

// Admin runs the admin commands over one registry.
type Admin struct {
	snaps Snapshots
	files Files
	now   func() time.Time
	log   hclog.Logger
	par   int
}

// New checks cfg and returns an Admin.
func New(cfg Config) (*Admin, error) {
	if cfg.Snapshots == nil || cfg.Files == nil {
		return nil, errors.New("admin: Snapshots and Files are required")
	}
	a := &Admin{snaps: cfg.Snapshots, files: cfg.Files, now: cfg.Now, log: cfg.Logger, par: cfg.Parallelism}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = hclog.NewNullLogger()
	}
	a.log = a.log.Named("admin")
	if a.par <= 0 {
		a.par = 16
	}
	return a, nil
}

// Table is one entry of a snapshot's znode with its offsets file, as read.
type Table struct {
	TableID     int64
	OffsetsPath string
	// Offsets is the decoded file; valid only when Err is nil.
	Offsets offsets.TableOffsets
	// Err is why the file could not be read: it wraps storage.ErrNotFound,
	// remotestore.ErrOutsidePath, flussjson.ErrMalformedOffsetsFile or an I/O error.
	Err error
}

// Snapshot is one producer znode and its files, as read.
type Snapshot struct {
	ProducerID string
	// Err is why the znode could not be read or decoded; the other fields
	// are then empty.
	Err            error
	ExpirationTime int64 // epoch milliseconds
	Expired        bool
	Tables         []Table
}

// Buckets counts the bucket offsets of every readable table.
func (s *Snapshot) Buckets() int {
	n := 0
	for _, t := range s.Tables {
		if t.Err == nil {
			n += len(t.Offsets.Buckets)
		}
	}
	return n
}

// batchSize is how many snapshots are read at once and then handed out in
// order: it bounds memory whatever the number of snapshots.
const batchSize = 512

// each reads every snapshot, sorted by producer id, and calls fn with each
// in that order. With withFiles it also reads every offsets file. A znode
// deleted between listing and reading is left out. fn's error stops the
// walk and is returned.
func (a *Admin) each(ctx context.Context, withFiles bool, fn func(*Snapshot) error) error {
	ids, err := a.snaps.ListProducerIDs(ctx)
	if err != nil {
		return fmt.Errorf("list producers: %w", err)
	}
	slices.Sort(ids)
	now := a.now().UnixMilli()
	batch := make([]*Snapshot, 0, batchSize)
	for start := 0; start < len(ids); start += batchSize {
		batch = batch[:0]
		for _, id := range ids[start:min(start+batchSize, len(ids))] {
			batch = append(batch, &Snapshot{ProducerID: id})
		}
		if err := a.parallel(ctx, len(batch), func(i int) error {
			return a.readSnapshot(ctx, batch[i], now, withFiles)
		}); err != nil {
			return err
		}
		for _, s := range batch {
			if s.Err == errGone {
				continue
			}
			if err := fn(s); err != nil {
				return err
			}
		}
	}
	return nil
}

// errGone marks a snapshot deleted while it was being read.
var errGone = errors.New("snapshot deleted meanwhile")

// readSnapshot fills s. Only a cancelled context is returned as an error;
// everything else is recorded in s.
func (a *Admin) readSnapshot(ctx context.Context, s *Snapshot, now int64, withFiles bool) error {
	data, err := a.snaps.RawSnapshot(ctx, s.ProducerID)
	if errors.Is(err, zk.ErrNoNode) {
		s.Err = errGone
		return nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.Err = err
		return nil
	}
	snap, err := flussjson.DecodeSnapshot(data)
	if err != nil {
		s.Err = err
		return nil
	}
	s.ExpirationTime = snap.ExpirationTime
	s.Expired = snap.Expired(now)
	s.Tables = make([]Table, len(snap.Tables))
	for i, ref := range snap.Tables {
		s.Tables[i] = Table{TableID: ref.TableID, OffsetsPath: ref.OffsetsPath}
	}
	if !withFiles {
		return nil
	}
	for i := range s.Tables {
		t := &s.Tables[i]
		t.Offsets, t.Err = a.files.ReadOffsets(ctx, t.OffsetsPath)
		if t.Err != nil && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// parallel runs fn(0..n-1) on at most a.par goroutines and returns the
// first error.
func (a *Admin) parallel(ctx context.Context, n int, fn func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	for w := 0; w < min(a.par, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
