// Package cleanup schedules the producer offsets cleanup: every interval,
// on the one sidecar that leads cleanup among those sharing a ZooKeeper,
// it deletes expired snapshots and then orphan offsets files, with the
// registry's algorithms.
package cleanup

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/producer"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
)

// Registry runs the cleanup algorithms; *producer.Registry implements it.
type Registry interface {
	CleanupExpired(ctx context.Context) (int, error)
	CleanupOrphans(ctx context.Context, store storage.OrphanStore, grace time.Duration) (producer.OrphanReport, error)
}

// Observer is told about every round (metrics).
type Observer interface {
	// CleanupRun: result is "ok", "failed", "following" (another
	// instance leads) or "electing" (none leads yet); expired and orphans
	// are what this round removed.
	CleanupRun(result string, expired, orphans int)
	// CleanupLeader: this instance started or stopped leading.
	CleanupLeader(leading bool)
}

// Round results.
const (
	ResultOK        = "ok"
	ResultFailed    = "failed"
	ResultFollowing = "following"
	// ResultElecting: no instance led cleanup at the round's start.
	ResultElecting = "electing"
)

// Config configures Run.
type Config struct {
	Registry Registry
	Files    storage.OrphanStore
	// Interval is coordinator.producer-offsets.cleanup-interval; the first
	// round is one interval after start, as a Fluss coordinator does.
	Interval time.Duration
	// Grace is sidecar.orphan-cleanup.grace-period.
	Grace time.Duration
	// Leader, when set, decides which instance runs rounds. Nil runs every
	// round here.
	Leader   *Elector
	Observer Observer
	Logger   hclog.Logger
}

// Run runs rounds until ctx ends.
func Run(ctx context.Context, cfg Config) {
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	log = log.Named("cleanup")
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		result, expired, orphans := round(ctx, cfg, log)
		if ctx.Err() != nil {
			return
		}
		if cfg.Observer != nil {
			cfg.Observer.CleanupRun(result, expired, orphans)
		}
	}
}

// round runs one cleanup round if this instance leads.
func round(ctx context.Context, cfg Config, log hclog.Logger) (result string, expired, orphans int) {
	if cfg.Leader != nil {
		leading, leader, err := cfg.Leader.Confirm(ctx)
		if errors.Is(err, ErrNoLeader) {
			log.Debug("cleanup round skipped: no cleanup leader elected yet")
			return ResultElecting, 0, 0
		}
		if err != nil {
			log.Warn("cleanup round skipped: cannot tell which instance leads cleanup", "error", err)
			return ResultFailed, 0, 0
		}
		if !leading {
			log.Debug("cleanup round skipped: following the cleanup leader", "leader", leader)
			return ResultFollowing, 0, 0
		}
	}
	result = ResultOK
	n, err := cfg.Registry.CleanupExpired(ctx)
	if err != nil && ctx.Err() == nil {
		result = ResultFailed
		log.Warn("expired snapshot cleanup failed", "error", err)
	}
	if n > 0 {
		log.Info("deleted expired producer snapshots", "count", n)
	}
	rep, err := cfg.Registry.CleanupOrphans(ctx, cfg.Files, cfg.Grace)
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		result = ResultFailed
		log.Warn("orphan file cleanup failed", "error", err)
	}
	if rep.Deleted > 0 || rep.Skipped > 0 {
		log.Info("orphan file cleanup", "deleted", rep.Deleted, "kept_in_grace", rep.Kept, "skipped_producers", rep.Skipped)
	}
	return result, n, rep.Deleted
}
