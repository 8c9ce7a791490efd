package zk

import (
	"context"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// BenchmarkLinearRead prices SyncGet's reach into go-zookeeper
// (gozkQueueRequest, gozk_internals.go) against what the public API can do
// instead, on the same server in the same run:
//   - get: a plain getData, not linearizable (the floor);
//   - syncget: SyncGet, a sync and a getData queued together (one round
//     trip), concurrent calls sharing one sync;
//   - sync+get: the public API's linearizable read, Sync and then Get (two
//     round trips: every exported call waits for its reply);
//   - shared-sync+get: the public API with the sharing SyncGet does, one
//     Sync per batch of concurrent readers and then their Gets (the
//     barrier of package readindex, rebuilt here over the public calls).
//
// Each at one reader and at 16 (RunParallel with 8 goroutines per CPU on
// a 2-CPU machine). ns/op is the time per read; docs/performance.md has
// the ratios.
func BenchmarkLinearRead(b *testing.B) {
	ctx := context.Background()
	c, err := Connect(b.Context(), Config{Address: zkAddr, Root: zktest.UniqueRoot()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	if _, err := c.Create(ctx, "/p", make([]byte, 200), Persistent); err != nil {
		b.Fatal(err)
	}
	// ZooKeeper's JVM is slow until it has compiled its read path: warm it
	// up so that the first side measured is not charged for it.
	for range 3000 {
		if _, _, err := c.SyncGet(ctx, "/p"); err != nil {
			b.Fatal(err)
		}
	}
	shared := newSharedSync(c)
	reads := map[string]func() error{
		"get":     func() error { _, _, err := c.Get(ctx, "/p"); return err },
		"syncget": func() error { _, _, err := c.SyncGet(ctx, "/p"); return err },
		"sync+get": func() error {
			if err := c.Sync(ctx, "/p"); err != nil {
				return err
			}
			_, _, err := c.Get(ctx, "/p")
			return err
		},
		"shared-sync+get": func() error {
			if err := shared.wait(ctx); err != nil {
				return err
			}
			_, _, err := c.Get(ctx, "/p")
			return err
		},
	}
	for _, name := range []string{"get", "syncget", "sync+get", "shared-sync+get"} {
		read := reads[name]
		b.Run(name+"/readers=1", func(b *testing.B) {
			for b.Loop() {
				if err := read(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/readers=16", func(b *testing.B) {
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := read(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// sharedSync is a read barrier over the public Sync alone: a waiter that
// finds no sync in flight sends one; one that arrives while a sync is in
// flight waits for the next, sent when that one returns, with everyone who
// arrived meanwhile (a sync that started before a waiter arrived proves
// nothing about writes acknowledged before it arrived).
type sharedSync struct {
	c     *Client
	mu    chan struct{} // one token: held while deciding
	round *syncRound    // the round in flight, or nil
	next  *syncRound    // the round waiting for it, or nil
}

type syncRound struct {
	done chan struct{}
	err  error
}

func newSharedSync(c *Client) *sharedSync {
	return &sharedSync{c: c, mu: make(chan struct{}, 1)}
}

func (s *sharedSync) wait(ctx context.Context) error {
	s.mu <- struct{}{}
	var r *syncRound
	switch {
	case s.round == nil:
		r = &syncRound{done: make(chan struct{})}
		s.round = r
		go s.run(ctx, r)
	case s.next == nil:
		s.next = &syncRound{done: make(chan struct{})}
		r = s.next
	default:
		r = s.next
	}
	<-s.mu
	<-r.done
	return r.err
}

func (s *sharedSync) run(ctx context.Context, r *syncRound) {
	for r != nil {
		r.err = s.c.Sync(ctx, "/p")
		close(r.done)
		s.mu <- struct{}{}
		r, s.next = s.next, nil
		s.round = r
		<-s.mu
	}
}
