package remotestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
	"github.com/fluss-sidecar/fluss-sidecar/internal/faultrelay"
	"github.com/fluss-sidecar/fluss-sidecar/internal/hdfstest"
	"github.com/fluss-sidecar/fluss-sidecar/offsets/flussjson"
	"github.com/fluss-sidecar/fluss-sidecar/remote"
	"github.com/fluss-sidecar/fluss-sidecar/storeerr"
)

// TestHDFSRefusedAtOpen: Kerberos and an authority-less path are refused
// with a clear message before anything is dialled.
func TestHDFSRefusedAtOpen(t *testing.T) {
	cases := []struct {
		dir  string
		conf map[string]string
		want string
	}{
		{"hdfs://nn:9000/fluss", map[string]string{"hadoop.security.authentication": "Kerberos"}, "kerberos is not supported"},
		{"hdfs:///fluss", nil, "needs a NameNode address or a nameservice"},
	}
	for _, c := range cases {
		_, err := Open(context.Background(), c.dir, Options{Remote: remote.Options{HDFS: remote.HDFSOptions{Conf: c.conf}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q) = %v, want %q", c.dir, err, c.want)
		}
	}
	if _, err := Open(context.Background(), "hdfs://nn:9000/fluss", Options{Remote: remote.Options{HDFS: remote.HDFSOptions{Conf: map[string]string{"hadoop.security.authentication": "kerberos"}}}}); !errors.Is(err, remote.ErrKerberos) {
		t.Errorf("kerberos: %v, want ErrKerberos", err)
	}
}

// openHDFSStore opens a store on the shared cluster in a directory of its
// own, as user (empty: the cluster's superuser).
func openHDFSStore(t *testing.T, c *hdfstest.Cluster, dir, user string, o Options) *Store {
	t.Helper()
	o.Remote.HDFS.User = user
	s, err := Open(context.Background(), c.URL(dir), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestHDFSByteCompatibility: what the sidecar writes on HDFS, Hadoop's own
// client reads byte for byte as the local backend's file of the same
// snapshot; what Hadoop's client writes in Fluss's layout (the Java
// coordinator's golden bytes), the sidecar lists and reads.
func TestHDFSByteCompatibility(t *testing.T) {
	c := hdfstest.Shared(t)
	ctx := context.Background()
	dir := "/" + hdfsDirName(t)
	h := openHDFSStore(t, c, dir, "", Options{NewUUID: uuidSeq()})
	localDir := filepath.Join(t.TempDir(), "remote")
	l, err := Open(ctx, localDir, Options{NewUUID: uuidSeq()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i, tt := range []struct {
		producer string
		table    int
	}{{"p1", 0}, {"p-2", 1}} {
		to := tableA
		if tt.table == 1 {
			to = tableB
		}
		hp, err := h.WriteOffsets(ctx, tt.producer, to)
		if err != nil {
			t.Fatal(err)
		}
		lp, err := l.WriteOffsets(ctx, tt.producer, to)
		if err != nil {
			t.Fatal(err)
		}
		wantPath := c.URL(dir) + strings.TrimPrefix(lp, "file:"+localDir)
		if hp != wantPath {
			t.Errorf("#%d: HDFS path %q, want %q (the local path's layout)", i, hp, wantPath)
		}
		localBytes, err := os.ReadFile(strings.TrimPrefix(lp, "file:"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Cat(strings.TrimPrefix(hp, "hdfs://"+c.Addr()))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(localBytes) {
			t.Errorf("#%d: Hadoop's client reads %q, the local file holds %q", i, got, localBytes)
		}
	}
	// Nothing but offsets files: no temporary file left beside them.
	names, err := c.List(dir + "/producers/p1/12345")
	if err != nil || len(names) != 1 || !strings.HasSuffix(names[0], ".offsets") {
		t.Errorf("table directory holds %v, %v; want one .offsets file", names, err)
	}

	// Golden files of the Java coordinator, written by Hadoop's client.
	goldens, err := filepath.Glob("../../offsets/flussjson/testdata/offsets/*.json")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden offsets files: %v", err)
	}
	for _, g := range goldens {
		data, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		want, derr := flussjson.DecodeTableOffsets(data)
		if derr != nil {
			continue // a golden of a refused file
		}
		name := strings.TrimSuffix(filepath.Base(g), ".json")
		rel := "/producers/java-" + strings.ReplaceAll(name, "_", "-") + "/77/0b5a4c1e-1111-4222-8333-944445555666.offsets"
		if err := c.Put(dir+rel, data); err != nil {
			t.Fatal(err)
		}
		path := c.URL(dir) + rel
		got, err := h.ReadOffsets(ctx, path)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ReadOffsets = %+v, %v; want %+v", name, got, err, want)
		}
		files, err := h.ListProducerFiles(ctx, "java-"+strings.ReplaceAll(name, "_", "-"))
		if err != nil || len(files) != 1 || files[0].Path != path || files[0].TableDir != "77" {
			t.Errorf("%s: ListProducerFiles = %+v, %v; want %s", name, files, err, path)
		}
	}
}

// wantClass fails unless err has storeerr class want.
func wantClass(t *testing.T, what string, err error, want error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s succeeded, want %v", what, want)
	}
	if got := storeerr.Classify(err); got != want {
		t.Fatalf("%s: class %v, want %v (%v)", what, got, want, err)
	}
}

// TestHDFSFaults stops and restores the shared cluster's servers and
// states: each fault fails the calls it reaches with their class, leaves
// no partial file, and the store works again once the fault is gone.
// It must not run in parallel with other tests of the cluster.
func TestHDFSFaults(t *testing.T) {
	c := hdfstest.Shared(t)
	ctx := context.Background()
	dir := "/" + hdfsDirName(t)
	s := openHDFSStore(t, c, dir, "", Options{})
	existing, err := s.WriteOffsets(ctx, "p", tableA)
	if err != nil {
		t.Fatal(err)
	}
	works := func(t *testing.T) {
		eventually.Nil(t, "a write and a read", func() error {
			p, err := s.WriteOffsets(ctx, "p", tableB)
			if err != nil {
				return err
			}
			_, err = s.ReadOffsets(ctx, p)
			return err
		})
	}
	noTemp := func(t *testing.T) {
		t.Helper()
		files, err := s.ListProducerFiles(ctx, "p")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if !strings.HasSuffix(f.Path, ".offsets") {
				t.Errorf("left behind: %s", f.Path)
			}
		}
	}

	t.Run("SafeMode", func(t *testing.T) {
		if err := c.SafeMode(true); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.SafeMode(false) })
		_, err := s.WriteOffsets(ctx, "p", tableB)
		wantClass(t, "a write in safe mode", err, storeerr.ErrUnavailable)
		if !strings.Contains(err.Error(), "SafeModeException") {
			t.Errorf("the error does not say safe mode: %v", err)
		}
		if _, err := s.ReadOffsets(ctx, existing); err != nil {
			t.Errorf("a read in safe mode: %v", err)
		}
		if err := c.SafeMode(false); err != nil {
			t.Fatal(err)
		}
		works(t)
	})

	t.Run("SpaceQuota", func(t *testing.T) {
		if err := c.SpaceQuota(dir, 1024); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.SpaceQuota(dir, -1) })
		_, err := s.WriteOffsets(ctx, "p", tableB)
		wantClass(t, "a write over the space quota", err, storeerr.ErrNoSpace)
		noTemp(t)
		if err := c.SpaceQuota(dir, -1); err != nil {
			t.Fatal(err)
		}
		works(t)
	})

	t.Run("Permission", func(t *testing.T) {
		owned := dir + "-owned"
		if err := c.Mkdir(owned, "someone-else", 0o755); err != nil {
			t.Fatal(err)
		}
		o := openHDFSStore(t, c, owned, "fluss", Options{})
		_, err := o.WriteOffsets(ctx, "p", tableA)
		wantClass(t, "a write into another user's directory", err, storeerr.ErrPermission)
		err = remote.CheckAtStart(ctx, o, o.Dir().String(), 3, hclog.NewNullLogger())
		if err == nil || !strings.Contains(err.Error(), "unusable") {
			t.Errorf("CheckAtStart = %v, want unusable", err)
		}
	})

	t.Run("DataNodeStopped", func(t *testing.T) {
		if err := c.StopDataNode(0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.StartDataNode(0) })
		_, err := s.WriteOffsets(ctx, "p", tableB)
		wantClass(t, "a write without a DataNode", err, storeerr.ErrUnavailable)
		_, err = s.ReadOffsets(ctx, existing)
		wantClass(t, "a read without a DataNode", err, storeerr.ErrUnavailable)
		noTemp(t)
		if err := c.StartDataNode(0); err != nil {
			t.Fatal(err)
		}
		works(t)
	})

	t.Run("NameNodeStopped", func(t *testing.T) {
		if err := c.StopNameNode(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.StartNameNode() })
		_, err := s.WriteOffsets(ctx, "p", tableB)
		wantClass(t, "a write without the NameNode", err, storeerr.ErrUnavailable)
		_, err = s.ReadOffsets(ctx, existing)
		wantClass(t, "a read without the NameNode", err, storeerr.ErrUnavailable)
		_, err = s.ListProducerDirs(ctx)
		wantClass(t, "a listing without the NameNode", err, storeerr.ErrUnavailable)
		if err := remote.CheckAtStart(ctx, s, s.Dir().String(), 1, hclog.NewNullLogger()); err != nil {
			t.Errorf("CheckAtStart refused a cluster that is only down: %v", err)
		}
		if err := c.StartNameNode(); err != nil {
			t.Fatal(err)
		}
		works(t)
		if _, err := s.ReadOffsets(ctx, existing); err != nil {
			t.Errorf("a file written before the restart: %v", err)
		}
	})
}

// TestHDFSContextBoundsAHungNameNode: a NameNode that accepts connections
// and never answers (a stalled relay, since a real one cannot be made to
// hang on demand) holds no call past its context.
func TestHDFSContextBoundsAHungNameNode(t *testing.T) {
	// A stalled relay dials nothing: its target is never reached.
	hung, err := faultrelay.Start("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	defer hung.Close()
	if err := hung.Set(faultrelay.Stall); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), "hdfs://"+hung.Addr()+"/fluss", Options{Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, op := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"write", func(ctx context.Context) error { _, err := s.WriteOffsets(ctx, "p", tableA); return err }},
		{"read", func(ctx context.Context) error {
			_, err := s.ReadOffsets(ctx, s.ProducersDir().String()+"/p/1/x.offsets")
			return err
		}},
		{"list", func(ctx context.Context) error { _, err := s.ListProducerDirs(ctx); return err }},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := op.call(ctx)
		cancel()
		wantClass(t, op.name+" against a hung NameNode", err, storeerr.ErrTimeout)
	}
	if hung.Faulted() == 0 {
		t.Error("no call reached the hung NameNode")
	}
}
