package sidecar

import (
	"context"
	"errors"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// HealthFunc says whether the stores the registry serves from answer: nil
// when they do, else an error naming what is missing. It is asked once per
// GET_CLUSTER_HEALTH request and should honour ctx; the answer does not
// wait for it beyond HealthTimeout in any case.
type HealthFunc func(ctx context.Context) error

// HealthTimeout bounds how long a GET_CLUSTER_HEALTH request waits for the
// HealthFunc (or RequestTimeout when that is shorter). Fluss's readiness
// check waits 5 s for its answer by default; a slower check is answered
// UNKNOWN well before that.
const HealthTimeout = 2 * time.Second

// The status values of GetClusterHealthResponse (docs/protocol.md §6).
const (
	HealthGreen   int32 = 0
	HealthYellow  int32 = 1
	HealthRed     int32 = 2
	HealthUnknown int32 = 3
)

// getClusterHealth answers GET_CLUSTER_HEALTH (1062, v0) from the
// registry's own health, on both endpoints (a Fluss tablet server answers
// it too, which is what Fluss's readiness check asks): GREEN when Health
// says ZooKeeper and remote storage answer, RED when it names something
// missing, UNKNOWN when it does not answer within HealthTimeout. The
// sidecar holds no replicas, so the four replica counts are 0. Without a
// Health (embedded mode, whose one in-memory store always answers) the
// answer is GREEN. With authorization on, DESCRIBE on the cluster is
// needed, as on a Fluss server. In proxy mode the key is forwarded to the
// coordinator instead (ProxyMux).
func (s *Sidecar) getClusterHealth() wire.API {
	return wire.API{
		Key: messages.KeyGetClusterHealth, Name: messages.KeyGetClusterHealth.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.GetClusterHealthRequest{} },
		Handle: func(ctx context.Context, sess *wire.Session, _ *wire.Request) (proto.Message, error) {
			if s.authorizing() {
				if err := s.cfg.Authorizer.Authorize(sess, authz.OpDescribe, authz.Cluster()); err != nil {
					return nil, err
				}
			}
			return clusterHealthAnswer(s.health(ctx)), nil
		},
	}
}

// errHealthTimeout is the health check that did not answer in time.
var errHealthTimeout = errors.New("the health check did not answer in time")

// health runs the HealthFunc, bounded by HealthTimeout and RequestTimeout,
// and returns the status it means.
func (s *Sidecar) health(ctx context.Context) int32 {
	check := s.cfg.Health
	if check == nil {
		return HealthGreen
	}
	ctx, cancel := context.WithTimeout(ctx, min(HealthTimeout, s.cfg.RequestTimeout))
	defer cancel()
	done := make(chan error, 1) // a check that ignores ctx ends on its own, unread
	go func() { done <- check(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = errHealthTimeout
	}
	switch {
	case err == nil:
		return HealthGreen
	case errors.Is(err, errHealthTimeout):
		s.log.Debug("cluster health: UNKNOWN", "error", err)
		return HealthUnknown
	default:
		s.log.Debug("cluster health: RED", "error", err)
		return HealthRed
	}
}

// clusterHealthAnswer is the answer for status: every required field set,
// the replica counts 0.
func clusterHealthAnswer(status int32) *messages.GetClusterHealthResponse {
	return &messages.GetClusterHealthResponse{
		NumReplicas: proto.Int32(0), InSyncReplicas: proto.Int32(0),
		NumLeaderReplicas: proto.Int32(0), ActiveLeaderReplicas: proto.Int32(0),
		Status: proto.Int32(status),
	}
}
