package flusstest

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

var zkAddr string

func TestMain(m *testing.M) {
	zktest.Main(m, func(addr string) { zkAddr = addr })
}

// TestStartsRelease: each release's servers start from the resolved jars,
// the tablet servers register in ZooKeeper under the cluster's root, and
// the coordinator serves the producer-offsets keys exactly when the
// release has the registry.
func TestStartsRelease(t *testing.T) {
	for _, r := range []Release{Fluss091, Fluss070} {
		t.Run(r.Name, func(t *testing.T) {
			root := zktest.UniqueRoot()
			c := StartT(t, Config{Release: r, ZooKeeper: zkAddr, Root: root, Tablets: 2})
			ctx := t.Context()
			cl, err := wire.Dial(ctx, c.Coordinator.Endpoint(InternalListener), wire.ClientOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			av, err := cl.Handshake(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var keys []int32
			for _, v := range av.GetApiVersions() {
				keys = append(keys, v.GetApiKey())
			}
			if got := slices.Contains(keys, int32(messages.KeyRegisterProducerOffsets)); got != r.HasRegistry {
				t.Errorf("API_VERSIONS lists 1053: %v, want %v (keys %v)", got, r.HasRegistry, keys)
			}
			md := &messages.MetadataResponse{}
			if err := cl.Call(ctx, messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, md); err != nil {
				t.Fatal(err)
			}
			var ports []string
			for _, ts := range md.GetTabletServers() {
				ports = append(ports, ts.GetHost()+":"+itoa(ts.GetPort()))
			}
			for _, ts := range c.Tablets {
				if !slices.Contains(ports, ts.Endpoint(InternalListener)) {
					t.Errorf("GET_METADATA names tablet servers %v, not %s", ports, ts.Endpoint(InternalListener))
				}
			}
			zk := zktest.RawConn(t, zkAddr)
			ids, _, err := zk.Children(root + "/tabletservers/ids")
			if err != nil || len(ids) != 2 {
				t.Errorf("tablet servers registered under %s: %v, %v", root, ids, err)
			}
		})
	}
}

// TestStopEndsProcess: Stop ends the server's process, Restart brings the
// cluster back on the same endpoint.
func TestStopEndsProcess(t *testing.T) {
	c := StartT(t, Config{Release: Fluss091, ZooKeeper: zkAddr, Root: zktest.UniqueRoot()})
	addr := c.Coordinator.Endpoint(InternalListener)
	c.Coordinator.Stop()
	if c.Coordinator.Running() || c.Coordinator.Pid() != 0 {
		t.Fatal("the coordinator still runs after Stop")
	}
	if _, err := tabletCount(t.Context(), addr); err == nil {
		t.Fatal("a stopped coordinator answered")
	}
	if err := c.Restart(t.Context(), c.Coordinator); err != nil {
		t.Fatal(err)
	}
	if n, err := tabletCount(t.Context(), addr); err != nil || n != 1 {
		t.Fatalf("after restart: %d tablet servers, %v", n, err)
	}
}

func TestNotResolved(t *testing.T) {
	_, err := MavenClasspath(t.TempDir(), "fluss-0.9.1")
	if !errors.Is(err, ErrNotResolved) || !strings.Contains(err.Error(), "resolve-maven.sh") {
		t.Fatalf("err = %v, want ErrNotResolved naming the script", err)
	}
}

// TestServerYAML: the keys a server gets for listeners, SASL, the
// authorizer and advertised addresses, as Fluss spells them.
func TestServerYAML(t *testing.T) {
	cfg := Config{
		Release: Fluss091, ZooKeeper: "127.0.0.1:2181", Dir: "/d",
		Listeners:             []Listener{{Name: "CLIENT", SASL: true}},
		Users:                 map[string]string{"bob": "b", "admin": "a"},
		SuperUsers:            []string{"admin"},
		CoordinatorAdvertised: map[string]string{"CLIENT": "127.0.0.1:9000"},
	}
	if err := cfg.withDefaults(); err != nil {
		t.Fatal(err)
	}
	c := &Cluster{cfg: cfg}
	s := &Server{dir: "/d/coordinator", listeners: []string{"FLUSS", "CLIENT"}, ports: map[string]int{"FLUSS": 1, "CLIENT": 2}}
	want := `advertised.listeners: CLIENT://127.0.0.1:9000
authorizer.enabled: true
bind.listeners: FLUSS://127.0.0.1:1, CLIENT://127.0.0.1:2
internal.listener.name: FLUSS
remote.data.dir: file:///d/remote
security.protocol.map: CLIENT:SASL
security.sasl.enabled.mechanisms: PLAIN
security.sasl.plain.jaas.config: org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required user_admin="a" user_bob="b";
super.users: User:admin
zookeeper.address: 127.0.0.1:2181
zookeeper.path.root: /fluss
`
	if got := c.serverYAML(s, -1); got != want {
		t.Errorf("coordinator server.yaml:\n%s\nwant:\n%s", got, want)
	}
	tablet := c.serverYAML(s, 3)
	for _, line := range []string{"tablet-server.id: 3\n", "data.dir: /d/coordinator/data\n"} {
		if !strings.Contains(tablet, line) {
			t.Errorf("tablet server.yaml lacks %q:\n%s", line, tablet)
		}
	}
	c.cfg.Extra = map[string]string{"remote.data.dir": "", "remote.data.dirs": "/a,/b"}
	if y := c.serverYAML(s, 0); strings.Contains(y, "remote.data.dir:") || !strings.Contains(y, "remote.data.dirs: /a,/b\n") {
		t.Errorf("an empty Extra value must remove the kit's key:\n%s", y)
	}
	if strings.Contains(tablet, "advertised.listeners") {
		t.Errorf("a tablet server advertises the coordinator's addresses:\n%s", tablet)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
