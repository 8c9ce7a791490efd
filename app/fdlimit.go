package app

import (
	"fmt"
	"math"

	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// Descriptor reserve: the open files kept back from client connections when
// sidecar.max-connections is derived from the descriptor limit, for
// ZooKeeper's connection, remote storage's HTTP connections (which grow with
// the writes in flight), the listeners, the metrics port and its scrapes, and
// the Go runtime's own (epoll, pipes): FDReserveMin descriptors, or
// 1/FDReserveDivisor of the limit when that is more.
const (
	FDReserveMin     = 64
	FDReserveDivisor = 16
)

// FileLimit is what the sidecar found of the process's open-files limit
// (RLIMIT_NOFILE) at start.
type FileLimit struct {
	// Known is false where the limit cannot be read (not Linux, or the
	// call failed); the other fields are then zero but for Err.
	Known bool
	// Soft and Hard are the limits as found, before any raise. (Go's
	// runtime raises the soft limit when the process starts, so Soft is
	// usually already at or just below Hard.)
	Soft, Hard uint64
	// Current is the soft limit in force after the raise: Hard, or Soft if
	// the raise failed.
	Current uint64
	// Err says why the limit could not be read or raised.
	Err error
}

// String describes the limit for the start-up line.
func (f FileLimit) String() string {
	switch {
	case !f.Known && f.Err != nil:
		return "unknown (" + f.Err.Error() + ")"
	case !f.Known:
		return "unknown on this platform"
	case f.Err != nil:
		return fmt.Sprintf("%d (raising the soft limit to the hard limit %d failed: %v)", f.Current, f.Hard, f.Err)
	case f.Soft < f.Current:
		return fmt.Sprintf("%d (soft limit raised from %d to the hard limit)", f.Current, f.Soft)
	default:
		return fmt.Sprintf("%d (soft limit already at the hard limit)", f.Current)
	}
}

// FDReserve is the number of descriptors kept back from client connections
// out of a limit of limit open files.
func FDReserve(limit uint64) uint64 {
	return max(FDReserveMin, limit/FDReserveDivisor)
}

// DeriveMaxConnections is the per-listener connection limit that follows
// from an open-files limit when sidecar.max-connections is not set: the
// limit minus FDReserve (but never less than half the limit), halved in
// proxy mode, where every client connection that forwards holds a second
// descriptor for its upstream coordinator connection. An unknown limit
// gives wire.DefaultMaxConns; the result is at least 1 and at most
// math.MaxInt32.
func DeriveMaxConnections(f FileLimit, proxy bool) int {
	if !f.Known || f.Current == 0 {
		return wire.DefaultMaxConns
	}
	limit := f.Current
	n := limit - min(FDReserve(limit), limit)
	n = max(n, limit/2)
	if proxy {
		n /= 2
	}
	return int(min(max(n, 1), math.MaxInt32))
}

// applyFileLimit records f in s and, when sidecar.max-connections was not
// set (s.MaxConnections is 0), derives the limit from it.
func (s *Settings) applyFileLimit(f FileLimit) {
	s.FileLimit = &f
	if s.MaxConnections == 0 {
		s.MaxConnections = DeriveMaxConnections(f, s.Mode == ModeProxy)
		s.MaxConnectionsDerived = true
	}
}

// PrepareStart raises the process's open-files soft limit to its hard limit
// and, when sidecar.max-connections is not set, derives it from the raised
// limit, so that the start-up line (LogStartup) can say both. Start does
// the same when it is given settings that have not been through
// PrepareStart.
func PrepareStart(s *Settings) {
	s.applyFileLimit(RaiseFileLimit())
}

// maxConnectionsNote explains the connection limit in the start-up line.
func (s Settings) maxConnectionsNote() string {
	if !s.MaxConnectionsDerived || s.FileLimit == nil {
		return "set by " + KeyMaxConnections
	}
	f := *s.FileLimit
	if !f.Known {
		return fmt.Sprintf("default %d: the open-files limit is unknown", s.MaxConnections)
	}
	note := fmt.Sprintf("derived: open-files limit %d minus a reserve of %d", f.Current, FDReserve(f.Current))
	if s.Mode == ModeProxy {
		note += ", halved for the upstream connection of each client"
	}
	return note + "; per listener"
}
