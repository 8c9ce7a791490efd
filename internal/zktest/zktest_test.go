package zktest

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	gozk "github.com/go-zookeeper/zk"
)

// get reads path on a fresh connection, bounded by a deadline that only
// prevents a hang.
func get(t *testing.T, addr, path string) ([]byte, error) {
	t.Helper()
	conn, _, err := gozk.Connect([]string{addr}, 10*time.Second, gozk.WithLogger(nopLogger{}))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		b, _, err := conn.Get(path)
		ch <- res{b, err}
	}()
	select {
	case r := <-ch:
		return r.b, r.err
	case <-time.After(30 * time.Second):
		return nil, errors.New("get did not finish")
	}
}

func TestWriteConfig(t *testing.T) {
	dir := t.TempDir()
	path, err := WriteConfig(ServerConfig{Dir: dir, Port: 12345})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"clientPort=12345\n", "clientPortAddress=127.0.0.1\n", "admin.enableServer=false\n", "dataDir=" + dir + "/data\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("zoo.cfg lacks %q:\n%s", want, b)
		}
	}
	if _, err := WriteConfig(ServerConfig{Dir: dir}); err == nil {
		t.Error("port 0 accepted")
	}
}

// TestWriteConfigTLSOnly: a Secure server with NoPlainPort gets a TLS port
// on Netty, its ExtraConfig lines and no plain port; NoPlainPort alone is
// refused.
func TestWriteConfigTLSOnly(t *testing.T) {
	dir := t.TempDir()
	path, err := WriteConfig(ServerConfig{Dir: dir, Port: 2181, Secure: true, SecurePort: 2281, NoPlainPort: true,
		ExtraConfig: []string{"ssl.clientAuth=need"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zoo := string(b)
	for _, w := range []string{"secureClientPort=2281", "secureClientPortAddress=127.0.0.1",
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory", "ssl.clientAuth=need"} {
		if !strings.Contains(zoo, w+"\n") {
			t.Errorf("zoo.cfg lacks %q:\n%s", w, zoo)
		}
	}
	if strings.Contains(zoo, "clientPort=2181") {
		t.Errorf("zoo.cfg has a plain port:\n%s", zoo)
	}
	if _, err := WriteConfig(ServerConfig{Dir: dir, Port: 2181, NoPlainPort: true}); err == nil {
		t.Error("NoPlainPort without Secure accepted")
	}
}

func TestStartRestartStop(t *testing.T) {
	s := StartT(t)
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Fatalf("Addr = %q", s.Addr)
	}

	conn, _, err := gozk.Connect([]string{s.Addr}, 10*time.Second, gozk.WithLogger(nopLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Create("/kept", []byte("v"), 0, gozk.WorldACL(gozk.PermAll)); err != nil {
		t.Fatal(err)
	}
	conn.Close()

	if err := s.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, err := get(t, s.Addr, "/kept")
	if err != nil || string(b) != "v" {
		t.Fatalf("after restart: %q, %v", b, err)
	}

	exited := s.Exited()
	s.Stop()
	select {
	case <-exited:
	default:
		t.Fatal("process still running after Stop")
	}
	s.Stop() // idempotent
	if _, err := FreePort("127.0.0.1"); err != nil {
		t.Fatal(err)
	}

	dir := s.Config().Dir
	s.Close()
	s.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("dir %s not removed: %v", dir, err)
	}
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("ZOOKEEPER_CLASSPATH", "")
	t.Setenv("JAVA_HOME", "")
	t.Setenv("PATH", t.TempDir())
	_, err := Start(context.Background())
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install -y zookeeper") {
		t.Fatalf("err = %v", err)
	}
}

func TestUniqueRoot(t *testing.T) {
	a, b := UniqueRoot(), UniqueRoot()
	if a == b || !strings.HasPrefix(a, "/t-") {
		t.Fatalf("%q %q", a, b)
	}
}

// A picked port lies below the ephemeral range, where no outgoing
// connection's source port can take it before the server binds it.
func TestFreePortAvoidsTheEphemeralRange(t *testing.T) {
	lo := ephemeralLow()
	seen := make(map[int]bool)
	for range 50 {
		p, err := FreePort("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		if p < freePortFloor || p >= lo {
			t.Fatalf("FreePort = %d, want in [%d, %d)", p, freePortFloor, lo)
		}
		// A port is handed out once per process: two parallel tests never
		// race each other for it.
		if seen[p] {
			t.Fatalf("FreePort returned %d twice", p)
		}
		seen[p] = true
	}
}

func TestBindFailedReadsZooKeepersLog(t *testing.T) {
	for _, tc := range []struct {
		log  string
		want bool
	}{
		{"ERROR ... java.net.BindException: Address already in use", true},
		{"java.net.BindException: Cannot assign requested address", true},
		{"zktest: ZooKeeper exited during startup", false},
		{"", false},
	} {
		if got := bindFailed(tc.log); got != tc.want {
			t.Errorf("bindFailed(%q) = %v, want %v", tc.log, got, tc.want)
		}
	}
}
