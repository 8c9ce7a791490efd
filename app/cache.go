package app

import (
	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/storage/snapcache"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// CacheSettings size the snapshot cache; MaxBytes or MaxEntries 0 turns it
// off, and every GET then reads ZooKeeper and the files.
type CacheSettings struct {
	MaxBytes   int64 // sidecar.snapshot-cache.max-bytes (64mb)
	MaxEntries int   // sidecar.snapshot-cache.max-entries (100000)
}

// Enabled reports whether the cache is on.
func (c CacheSettings) Enabled() bool { return c.MaxBytes > 0 && c.MaxEntries > 0 }

func cacheSettingsFromConfig(c *config.Config) (CacheSettings, error) {
	var s CacheSettings
	var err error
	s.MaxBytes, err = c.MemorySize(KeyCacheMaxBytes, defaultMemory(KeyCacheMaxBytes))
	if err != nil {
		return s, err
	}
	n, err := c.Int(KeyCacheMaxEntries, defaultInt(KeyCacheMaxEntries))
	if err != nil {
		return s, err
	}
	if s.MaxBytes < 0 || n < 0 || n > 1<<31-1 {
		return s, fmt.Errorf("%s and %s must not be negative", KeyCacheMaxBytes, KeyCacheMaxEntries)
	}
	s.MaxEntries = int(n)
	return s, nil
}

// stores returns the snapshot and file stores the registry uses: snaps and
// files, behind the snapshot cache when it is on. zc must be the client
// snaps reads through.
func (a *App) stores(ctx context.Context, s CacheSettings, zc *zk.Client, snaps storage.SnapshotStore, files storage.FileStore, log hclog.Logger) (storage.SnapshotStore, storage.FileStore, error) {
	if !s.Enabled() {
		return snaps, files, nil
	}
	c, err := snapcache.New(ctx, snapcache.Config{
		Watcher: zc, Snapshots: snaps, Files: files,
		MaxEntries: s.MaxEntries, MaxBytes: s.MaxBytes, Logger: log,
	})
	if err != nil {
		return nil, nil, err
	}
	a.cache = c
	return c.Snapshots(), c.Files(), nil
}

// Cache is the snapshot cache, nil when it is off (for tests and metrics).
func (a *App) Cache() *snapcache.Cache { return a.cache }
