package lincheck

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// TestLinearizableWhileUpstreamLeaderless: two sidecars in proxy mode in
// front of one coordinator (a fake) that has no leadership: it answers
// NOT_COORDINATOR_LEADER (65) to everything but API_VERSIONS, as a lone
// coordinator does after its ZooKeeper session expired. REGISTER, GET and
// DELETE_PRODUCER_OFFSETS through both sidecars keep working and stay
// linearizable, while forwarded requests get 65 (after the proxy's
// resends); once the coordinator leads again, forwarded requests through
// the same client connection succeed.
func TestLinearizableWhileUpstreamLeaderless(t *testing.T) {
	fake, err := fakecoord.Start(fakecoord.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	fake.SetStandby(true)
	proxyKV := func() map[string]string {
		return map[string]string{
			"sidecar.mode":                       "proxy",
			"sidecar.upstream.address":           fake.Addr(),
			"sidecar.proxy.failover.max-resends": "2",
		}
	}
	var notLeader, recovered, other atomic.Int64
	res := runPlan(t, plan{
		kv: []map[string]string{proxyKV(), proxyKV()},
		fault: func(ctx context.Context, t *testing.T, r *rig) {
			c, err := wire.Dial(ctx, r.sidecars[0].Addr(), wire.ClientOptions{})
			if err != nil {
				t.Errorf("dial sidecar A: %v", err)
				return
			}
			defer c.Close()
			if _, err := c.Handshake(ctx); err != nil {
				t.Errorf("handshake with sidecar A: %v", err)
				return
			}
			// Leaderless for the first half of the run, then a leader.
			half := time.Now().Add(runDuration() / 2)
			leading := false
			for ctx.Err() == nil {
				if !leading && time.Now().After(half) && notLeader.Load() > 0 {
					fake.SetStandby(false)
					leading = true
				}
				resp, err := c.CallRaw(ctx, messages.KeyListDatabases, 0, []byte("x"))
				fe, _ := flusserr.From(resp.Err())
				switch {
				case err != nil:
					if ctx.Err() == nil {
						other.Add(1)
					}
				case resp.Type == wire.ResponseSuccess && leading:
					recovered.Add(1)
				case fe != nil && fe.Code == flusserr.NotCoordinatorLeader:
					notLeader.Add(1)
				default:
					other.Add(1)
				}
			}
		},
	})
	t.Logf("forwarded through sidecar A: %d answered 65 while leaderless, %d answered after the leader returned, %d other",
		notLeader.Load(), recovered.Load(), other.Load())
	assertLinearizable(t, res)
	if notLeader.Load() == 0 {
		t.Error("no forwarded request was answered 65: the coordinator was never seen leaderless")
	}
	if recovered.Load() == 0 {
		t.Error("no forwarded request succeeded after the coordinator led again")
	}
	if other.Load() != 0 {
		t.Errorf("%d forwarded requests got neither 65 nor an answer", other.Load())
	}
}
