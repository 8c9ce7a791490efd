package compat_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/flusstest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// TestRemoteDataDirsBesideCoordinator: remote.data.dirs next to a real
// Fluss 0.9.1 coordinator. The coordinator does not know the key: it needs
// remote.data.dir and keeps producer offsets there. A sidecar given the
// coordinator's own server.yaml, or a file naming the coordinator's
// directory first in remote.data.dirs only, shares its snapshots.
func TestRemoteDataDirsBesideCoordinator(t *testing.T) {
	zk := zktest.StartT(t)

	t.Run("coordinator refuses remote.data.dirs alone", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		defer cancel()
		c, err := flusstest.Start(ctx, flusstest.Config{
			Release: flusstest.Fluss091, ZooKeeper: zk.Addr, Root: zktest.UniqueRoot(),
			Extra: map[string]string{"remote.data.dir": "", "remote.data.dirs": t.TempDir()},
		})
		if err == nil {
			c.Close()
			t.Fatal("a Fluss 0.9.1 coordinator started with remote.data.dirs and no remote.data.dir")
		}
		line := ""
		for _, l := range strings.Split(err.Error(), "\n") {
			if strings.Contains(l, "remote.data.dir") && !strings.Contains(l, "Loading configuration property") {
				line = l
				break
			}
		}
		if line == "" {
			t.Fatalf("the coordinator failed, but not over remote.data.dir: %v", err)
		}
		t.Logf("Fluss 0.9.1's coordinator refuses to start: %s", line)
	})

	shared, other := t.TempDir(), t.TempDir()
	c := flusstest.StartT(t, flusstest.Config{
		Release: flusstest.Fluss091, ZooKeeper: zk.Addr, Root: zktest.UniqueRoot(),
		RemoteDir: "file://" + shared,
		// A list whose first entry is not remote.data.dir: Fluss's producer
		// offsets follow remote.data.dir.
		Extra: map[string]string{"remote.data.dirs": "file://" + other + ",file://" + shared},
	})
	coordinator := dialPlain(t, c.Coordinator.Endpoint(flusstest.InternalListener))

	for i, tc := range []struct {
		name string
		edit func(*config.Config)
	}{
		{"the coordinator's own file", func(*config.Config) {}},
		{"remote.data.dirs only, the coordinator's directory first", func(cfg *config.Config) {
			cfg.Set("remote.data.dir", "")
			cfg.Set("remote.data.dirs", "file://"+shared+",file://"+other)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Load(c.Coordinator.ConfigPath())
			if err != nil {
				t.Fatal(err)
			}
			cfg.Set(app.KeyBindListeners, "FLUSS://127.0.0.1:0")
			tc.edit(cfg)
			sidecar := dialPlain(t, apptest.StartConfig(t, cfg, app.Options{}).Addr())
			id := "dirs-" + strconv.Itoa(i)
			registerOne(t, sidecar, id+"-s", 11)
			registerOne(t, coordinator, id+"-c", 22)
			for _, read := range []*wire.Client{sidecar, coordinator} {
				for id, want := range map[string]int64{id + "-s": 11, id + "-c": 22} {
					if got := getOne(t, read, id); got != want {
						t.Errorf("GET %s: offset %d, want %d", id, got, want)
					}
				}
			}
			if n := countFiles(t, other); n != 0 {
				t.Errorf("%d files under the list's other directory, want none", n)
			}
			if n := countFiles(t, shared); n < 2 {
				t.Errorf("%d offsets files under remote.data.dir, want at least this test's 2", n)
			}
		})
	}
}

func dialPlain(t *testing.T, addr string) *wire.Client {
	t.Helper()
	c, err := wire.Dial(t.Context(), addr, wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Handshake(t.Context()); err != nil {
		t.Fatal(err)
	}
	return c
}

// registerOne registers id with one bucket of table 1 at offset, and wants
// CREATED.
func registerOne(t *testing.T, c *wire.Client, id string, offset int64) {
	t.Helper()
	req := &messages.RegisterProducerOffsetsRequest{
		ProducerId: proto.String(id),
		TableOffsets: []*messages.PbProducerTableOffsets{{
			TableId:       proto.Int64(1),
			BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(offset)}},
		}},
	}
	resp := &messages.RegisterProducerOffsetsResponse{}
	if err := c.Call(t.Context(), messages.KeyRegisterProducerOffsets, 0, req, resp); err != nil {
		t.Fatalf("register %s: %v", id, err)
	}
	if resp.GetResult() != 0 {
		t.Fatalf("register %s: result %d, want CREATED", id, resp.GetResult())
	}
}

// getOne returns the offset of bucket 0 of table 1 in id's snapshot, or -1.
func getOne(t *testing.T, c *wire.Client, id string) int64 {
	t.Helper()
	resp := &messages.GetProducerOffsetsResponse{}
	if err := c.Call(t.Context(), messages.KeyGetProducerOffsets, 0, &messages.GetProducerOffsetsRequest{ProducerId: proto.String(id)}, resp); err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	for _, to := range resp.GetTableOffsets() {
		for _, b := range to.GetBucketOffsets() {
			return b.GetLogEndOffset()
		}
	}
	return -1
}

func countFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return n
}
