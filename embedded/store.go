package embedded

import (
	"context"
	"sort"

	"github.com/fluss-sidecar/fluss-sidecar/offsets"
)

// MaxListedProducers bounds StoreListing's producers.
const MaxListedProducers = 1000

// StoredSnapshot is one producer's snapshot as StoreListing shows it.
type StoredSnapshot struct {
	ProducerID string
	// ExpirationTime is in epoch milliseconds; Expired is judged on the
	// server's Clock.
	ExpirationTime int64
	Expired        bool
	Tables         []offsets.TableOffsets
}

// StoreListing is what the store holds: the snapshots (at most
// MaxListedProducers, sorted by producer id; Truncated says more exist)
// and the paths of every offsets file.
type StoreListing struct {
	Snapshots []StoredSnapshot
	Truncated bool
	Files     []string
}

// ListStore reads every snapshot through the registry, as a GET does.
func (s *Server) ListStore(ctx context.Context) (StoreListing, error) {
	ids, err := s.store.ListProducerIDs(ctx)
	if err != nil {
		return StoreListing{}, err
	}
	sort.Strings(ids)
	var out StoreListing
	if len(ids) > MaxListedProducers {
		ids, out.Truncated = ids[:MaxListedProducers], true
	}
	now := s.clock.Now().UnixMilli()
	for _, id := range ids {
		snap, found, err := s.registry.Get(ctx, &id)
		if err != nil {
			return StoreListing{}, err
		}
		if !found {
			continue // deleted meanwhile
		}
		out.Snapshots = append(out.Snapshots, StoredSnapshot{
			ProducerID: id, ExpirationTime: snap.ExpirationTime,
			Expired: offsets.Snapshot{ExpirationTime: snap.ExpirationTime}.Expired(now), Tables: snap.Tables,
		})
	}
	out.Files = s.store.Files()
	return out, nil
}

// ResetStore deletes every snapshot through the registry (as a DELETE
// does) and then every offsets file left, and returns how many snapshots
// it deleted.
func (s *Server) ResetStore(ctx context.Context) (int, error) {
	ids, err := s.store.ListProducerIDs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if err := s.registry.Delete(ctx, &id, nil); err != nil {
			return n, err
		}
		n++
	}
	for _, p := range s.store.Files() {
		if err := s.store.DeleteOffsets(ctx, p); err != nil {
			return n, err
		}
	}
	return n, nil
}

// ExpireNow deletes the snapshots expired on the server's Clock, as the
// periodic cleanup does, and returns how many it deleted. Advance the
// Clock first to expire snapshots whose TTL has not run out.
func (s *Server) ExpireNow(ctx context.Context) (int, error) {
	return s.registry.CleanupExpired(ctx)
}

// Clock is the server's clock for TTLs.
func (s *Server) Clock() *Clock { return s.clock }

// Reset puts the server back as it started: every rule removed and
// stalled request released, the request log cleared, the clock back on
// its base, the store emptied. ControlKey functions stay.
func (s *Server) Reset(ctx context.Context) error {
	s.RemoveRules()
	s.ClearLog()
	s.clock.Reset()
	_, err := s.ResetStore(ctx)
	return err
}
