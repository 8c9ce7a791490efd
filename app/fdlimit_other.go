//go:build !linux

package app

// RaiseFileLimit does nothing outside Linux and reports the limit as
// unknown, so sidecar.max-connections defaults to wire.DefaultMaxConns
// there. (Go itself raises the soft limit at start on other Unix systems.)
func RaiseFileLimit() FileLimit {
	return FileLimit{}
}
