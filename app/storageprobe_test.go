package app_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/storagetest"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
)

// TestStartRefusesUnwritableProducers: the start-up probe writes where
// offsets files go, so a producers directory that refuses writes (the one
// above it accepts them) fails the start with one line naming it; before,
// the sidecar started, reported ready, and failed every REGISTER.
func TestStartRefusesUnwritableProducers(t *testing.T) {
	dir := t.TempDir()
	lock, _ := storagetest.ProducersLock(t, dir)
	lock()
	s, err := app.FromConfig(apptest.Config(t, sharedZK, map[string]string{"remote.data.dir": "file://" + dir}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, err := app.Start(ctx, s, app.Options{})
	if err == nil {
		a.Close()
		t.Fatal("started with an unwritable producers directory")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "is unusable (permission)") || !strings.Contains(msg, "file:"+dir+"/producers") {
		t.Fatalf("start error %q: want one line naming %s/producers as unusable", msg, dir)
	}
	// The directory above stays clean: the probe never wrote there.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "producers" {
			t.Errorf("left in remote.data.dir: %s", e.Name())
		}
	}
}

// TestReadyzStorageStopsAcceptingWrites: a running sidecar probes remote
// storage every sidecar.storage.check-interval; /readyz names remote
// storage while the producers directory refuses writes and is ready again
// once it takes them.
func TestReadyzStorageStopsAcceptingWrites(t *testing.T) {
	dir := t.TempDir()
	lock, unlock := storagetest.ProducersLock(t, dir)
	var logs syncbuf.Buffer
	c := apptest.Config(t, sharedZK, reporterOn(map[string]string{
		"remote.data.dir": "file://" + dir, app.KeyStorageCheckInterval: "50ms",
	}))
	a := apptest.StartConfig(t, c, app.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
	waitReady(t, a, 200)
	if got := value(scrape(t, a), "fluss_sidecar_storage_remoteAcceptsWrites"); got != 1 {
		t.Errorf("remoteAcceptsWrites %v while writable", got)
	}
	lock()
	r := waitReady(t, a, 503)
	if len(r.Missing) != 1 || !strings.HasPrefix(r.Missing[0], "remote storage:") || !strings.Contains(r.Missing[0], dir+"/producers") {
		t.Fatalf("not-ready body %+v, want remote storage naming %s/producers", r, dir)
	}
	if got := value(scrape(t, a), "fluss_sidecar_storage_remoteAcceptsWrites"); got != 0 {
		t.Errorf("remoteAcceptsWrites %v while read-only", got)
	}
	unlock()
	waitReady(t, a, 200)
	out := logs.String()
	for _, want := range []string{"remote storage stopped accepting writes; not ready", "remote storage accepts writes again; ready"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// TestUnreachableEndpointNeverPanics reproduces a crash: with
// gocloud.dev v0.47.0 an Azure endpoint that cannot be reached panicked in
// the start-up probe and ended the process. Now, for s3, gs and abfs on a
// closed loopback port, the start logs one clear line and goes on not
// ready; REGISTER is answered with a retriable code and the process keeps
// serving. A panic anywhere would end this test binary; a contained one
// shows in the log, which must have none.
func TestUnreachableEndpointNeverPanics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	for _, tt := range []struct {
		name string
		kv   map[string]string
	}{
		{"s3", map[string]string{"remote.data.dir": "s3://fluss/c1", "s3.endpoint": "http://" + dead, "s3.region": "us-east-1",
			"s3.access-key": "k", "s3.secret-key": "s", "s3.path.style.access": "true"}},
		{"gs", map[string]string{"remote.data.dir": "gs://fluss/c1", "fs.gs.storage.root.url": "http://" + dead + "/", "fs.gs.auth.type": "UNAUTHENTICATED"}},
		{"abfs", map[string]string{"remote.data.dir": "abfs://ops@opsacct.dfs.core.windows.net/fluss",
			"fs.azure.account.key": storagetest.AzuriteKey, app.KeyAzureEndpoint: "http://" + dead + "/opsacct"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			kv := reporterOn(tt.kv)
			kv[app.KeyStorageStartChecks] = "1"
			kv["sidecar.request-timeout"] = "3s"
			var logs syncbuf.Buffer
			a := apptest.StartConfig(t, apptest.Config(t, sharedZK, kv),
				app.Options{Logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})})
			r := waitReady(t, a, 503)
			if len(r.Missing) != 1 || !strings.HasPrefix(r.Missing[0], "remote storage:") {
				t.Fatalf("not-ready body %+v", r)
			}
			c := dial(t, a.Addr())
			err := registerTTL(t.Context(), c, "unreachable-"+tt.name, 60000)
			fe, ok := flusserr.From(err)
			if !ok || !fe.Retriable() {
				t.Fatalf("register: %v, want a retriable code", err)
			}
			// Still serving: the same connection answers again.
			if _, err := c.Handshake(t.Context()); err != nil {
				t.Fatalf("after the failed register: %v", err)
			}
			out := logs.String()
			if strings.Contains(strings.ToLower(out), "panic") {
				t.Fatalf("log mentions a panic:\n%s", out)
			}
			if n := strings.Count(out, "remote storage is not reachable; starting anyway"); n != 1 {
				t.Errorf("%d start lines about unreachable storage, want 1:\n%s", n, out)
			}
		})
	}
}
