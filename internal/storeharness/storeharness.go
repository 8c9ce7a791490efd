// Package storeharness builds, for the conformance suite (storage/storetest),
// the stores each backend's TestStoreConformance runs it against: memstore,
// and zkstore with remote over file://, each behind the portable layer
// (storage.Checked*), with raw access behind their backs. A wrapper's test
// (faultstore, counted, snapcache) wraps these stores and keeps their raw
// access, stalls and outages.
package storeharness

import (
	"sync"

	"github.com/fluss-sidecar/fluss-sidecar/storage/storetest"
)

// stall is one stall of Stalls.Stall: held closes once a request is held,
// resume lets them through.
type stall struct {
	held   <-chan struct{}
	once   sync.Once
	resume func()
}

// NewStall returns a stall whose Held is held and whose Resume calls
// resume once.
func NewStall(held <-chan struct{}, resume func()) storetest.Stall {
	return &stall{held: held, resume: resume}
}

func (s *stall) Held() <-chan struct{} { return s.held }
func (s *stall) Resume()               { s.once.Do(s.resume) }
