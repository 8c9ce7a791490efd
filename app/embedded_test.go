package app_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/internal/apptest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

func cfgOf(kv map[string]string) *config.Config {
	c := config.New()
	for k, v := range kv {
		c.Set(k, v)
	}
	return c
}

// TestEmbeddedSettings: embedded mode is chosen only by sidecar.embedded,
// and a configuration that names both memory and ZooKeeper (or remote
// storage) is refused rather than guessed.
func TestEmbeddedSettings(t *testing.T) {
	cases := []struct {
		name     string
		kv       map[string]string
		embedded bool
		err      string // "" when valid
	}{
		{"embedded alone", map[string]string{"sidecar.embedded": "true"}, true, ""},
		{"embedded and ZooKeeper", map[string]string{"sidecar.embedded": "true", "zookeeper.address": "127.0.0.1:2181"}, false, "zookeeper.address is set"},
		{"embedded and remote storage", map[string]string{"sidecar.embedded": "true", "remote.data.dir": "file:///tmp/x"}, false, "remote.data.dir is set"},
		{"embedded and remote directories", map[string]string{"sidecar.embedded": "true", "remote.data.dirs": "file:///tmp/x,file:///tmp/y"}, false, `remote.data.dirs is set ("file:///tmp/x,file:///tmp/y")`},
		{"embedded and a bad remote directory list", map[string]string{"sidecar.embedded": "true", "remote.data.dirs": ",,"}, false, "remote.data.dirs is set"},
		{"embedded with the strategy of no directory", map[string]string{"sidecar.embedded": "true", "remote.data.dirs.strategy": "ROUND_ROBIN"}, true, ""},
		{"remote directories in ZooKeeper mode", map[string]string{"zookeeper.address": "127.0.0.1:2181", "remote.data.dirs": "file:///tmp/x"}, false, ""},
		{"embedded proxy", map[string]string{"sidecar.embedded": "true", "sidecar.mode": "proxy", "sidecar.upstream.address": "127.0.0.1:1"}, false, "no coordinator to proxy to"},
		{"embedded not a bool", map[string]string{"sidecar.embedded": "perhaps", "zookeeper.address": "127.0.0.1:2181", "remote.data.dir": "file:///tmp/x"}, false, "sidecar.embedded"},
		{"ACL file without the authorizer", map[string]string{"sidecar.embedded": "true", "sidecar.embedded.acl-file": "/x.json"}, false, "authorizer.enabled is false"},
		{"ACL file with the authorizer", map[string]string{"sidecar.embedded": "true", "sidecar.embedded.acl-file": "/x.json", "authorizer.enabled": "true",
			"bind.listeners": "FLUSS://127.0.0.1:0,CLIENT://127.0.0.1:0"}, true, ""},
		{"ACL file with the authorizer and only the internal listener", map[string]string{"sidecar.embedded": "true", "sidecar.embedded.acl-file": "/x.json", "authorizer.enabled": "true"},
			false, "which skips authorization"},
		{"ACL file in ZooKeeper mode", map[string]string{"zookeeper.address": "127.0.0.1:2181", "remote.data.dir": "file:///tmp/x", "sidecar.embedded.acl-file": "/x.json"}, false, "applies only with sidecar.embedded"},
		{"control API in embedded mode", map[string]string{"sidecar.embedded": "true", "sidecar.embedded.control.listen": "127.0.0.1:0"}, true, ""},
		{"control API on a bare port", map[string]string{"sidecar.embedded": "true", "sidecar.embedded.control.listen": "9300"}, true, ""},
		{"control API on a public address", map[string]string{"sidecar.embedded": "true", "sidecar.embedded.control.listen": "0.0.0.0:9300"}, false, "not a loopback address"},
		{"control API with a bad port", map[string]string{"sidecar.embedded": "true", "sidecar.embedded.control.listen": "127.0.0.1:http"}, false, "is not a number"},
		{"control API in ZooKeeper mode", map[string]string{"zookeeper.address": "127.0.0.1:2181", "remote.data.dir": "file:///tmp/x", "sidecar.embedded.control.listen": "127.0.0.1:0"}, false, "applies only with sidecar.embedded"},
		{"zookeeper.address: embedded is not a switch", map[string]string{"zookeeper.address": "embedded", "remote.data.dir": "file:///tmp/x"}, false, "serve --embedded"},
		{"nor in capitals", map[string]string{"zookeeper.address": " EMBEDDED", "remote.data.dir": "file:///tmp/x"}, false, "serve --embedded"},
		{"no ZooKeeper is an error, not memory", map[string]string{"remote.data.dir": "file:///tmp/x"}, false, "No valid ZooKeeper quorum"},
		{"embedded false needs ZooKeeper", map[string]string{"sidecar.embedded": "false", "remote.data.dir": "file:///tmp/x"}, false, "No valid ZooKeeper quorum"},
		{"ZooKeeper mode", map[string]string{"zookeeper.address": "127.0.0.1:2181", "remote.data.dir": "file:///tmp/x"}, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := app.FromConfig(cfgOf(tc.kv))
			if tc.err == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if s.Embedded != tc.embedded {
					t.Fatalf("Embedded = %v, want %v", s.Embedded, tc.embedded)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v, want an error containing %q", err, tc.err)
			}
		})
	}
}

// TestZooKeeperSidecarNeverRunsInMemory: a sidecar configured for a
// ZooKeeper that does not answer fails to start; it does not serve from
// memory instead.
func TestZooKeeperSidecarNeverRunsInMemory(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	s, err := app.FromConfig(cfgOf(map[string]string{
		"bind.listeners":                      "FLUSS://127.0.0.1:0",
		"zookeeper.address":                   closed,
		"zookeeper.client.connection-timeout": "1 s",
		"remote.data.dir":                     "file://" + t.TempDir(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := app.Start(ctx, s, app.Options{})
	if err == nil {
		a.Close()
		t.Fatal("started without its ZooKeeper")
	}
	if !strings.Contains(err.Error(), "ZooKeeper") {
		t.Fatalf("error does not name ZooKeeper: %v", err)
	}
}

// TestEmbeddedAppSecurity: in embedded mode the SASL users come from the
// same keys as in ZooKeeper mode, and the ACL file gives denials.
func TestEmbeddedAppSecurity(t *testing.T) {
	acl := filepath.Join(t.TempDir(), "acls.json")
	os.WriteFile(acl, []byte(`{"tables":{"7":"db.t","8":"db.u"},"acls":[{"resource":"TABLE:db.t","principal":"User:alice","operation":"WRITE"}]}`), 0o644)
	a := apptest.StartConfig(t, cfgOf(map[string]string{
		"bind.listeners":                  "CLIENT://127.0.0.1:0",
		"security.protocol.map":           "CLIENT:SASL",
		"security.sasl.plain.jaas.config": `org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_alice="pw";`,
		"authorizer.enabled":              "true",
		"sidecar.embedded":                "true",
		"sidecar.embedded.acl-file":       acl,
	}), app.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := wire.Dial(ctx, a.Addr(), wire.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	login := func(pw string) error {
		return c.Call(ctx, keyAuthenticate, 0, &messages.AuthenticateRequest{
			Protocol: proto.String("PLAIN"), Token: []byte("\x00alice\x00" + pw)}, &messages.AuthenticateResponse{})
	}
	if fe, ok := flusserr.From(login("wrong")); !ok || fe.Code != flusserr.AuthenticateException {
		t.Fatalf("wrong password: %v", fe)
	}
	c.Close()
	if c, err = wire.Dial(ctx, a.Addr(), wire.ClientOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := login("pw"); err != nil {
		t.Fatal(err)
	}
	reg := func(table int64) error {
		return c.Call(ctx, keyRegister, 0, &messages.RegisterProducerOffsetsRequest{
			ProducerId: proto.String("p"),
			TableOffsets: []*messages.PbProducerTableOffsets{{TableId: proto.Int64(table),
				BucketOffsets: []*messages.PbBucketOffset{{BucketId: proto.Int32(0), LogEndOffset: proto.Int64(1)}}}},
		}, &messages.RegisterProducerOffsetsResponse{})
	}
	if fe, ok := flusserr.From(reg(8)); !ok || fe.Code != flusserr.AuthorizationException {
		t.Fatalf("register on db.u: %v, want 48", reg(8))
	}
	if err := reg(7); err != nil {
		t.Fatalf("register on db.t: %v", err)
	}
	if a.Registry() == nil {
		t.Fatal("no registry")
	}
}

// TestEmbeddedACLFileErrorsStopStart: a bad ACL file fails the start.
func TestEmbeddedACLFileErrorsStopStart(t *testing.T) {
	acl := filepath.Join(t.TempDir(), "acls.json")
	os.WriteFile(acl, []byte(`{"acls":[{"resource":"TOPIC:x","principal":"User:a","operation":"READ"}]}`), 0o644)
	s, err := app.FromConfig(cfgOf(map[string]string{
		"bind.listeners": "FLUSS://127.0.0.1:0,CLIENT://127.0.0.1:0", "sidecar.embedded": "true",
		"authorizer.enabled": "true", "sidecar.embedded.acl-file": acl,
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if a, err := app.Start(ctx, s, app.Options{}); err == nil {
		a.Close()
		t.Fatal("started with a bad ACL file")
	} else if !strings.Contains(err.Error(), "sidecar.embedded.acl-file") {
		t.Fatalf("error does not name the key: %v", err)
	}
}
