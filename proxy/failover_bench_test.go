package proxy

import (
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// BenchmarkFailoverBookkeeping times what resending adds to one request of
// the fast path, on one goroutine (no contention on the link's lock): the
// request kept for a resend, tracked by tag on its way out and untracked
// when its answer comes, and its upstream connection's in-flight count.
// Set against the proxy's cost per forwarded request
// (BenchmarkForwardingResends), it bounds what turning resending off can
// save.
func BenchmarkFailoverBookkeeping(b *testing.B) {
	l := &link{}
	up := &upstreamConn{}
	body := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		f := &fwd{id: 7, key: messages.KeyListDatabases, body: body}
		f.up = up
		tag := l.track(f)
		up.pending.Add(1)
		if g := l.untrack(tag); g != nil {
			g.up.done()
		}
	}
}
