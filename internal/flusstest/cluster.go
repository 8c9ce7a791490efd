package flusstest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// InternalListener is the listener every server of a cluster has, for the
// servers' own traffic and for the kit's readiness probe. It is PLAINTEXT.
const InternalListener = "FLUSS"

// Listener is a client listener of every server of a cluster.
type Listener struct {
	// Name as server.yaml's bind.listeners writes it, e.g. "CLIENT".
	Name string
	// SASL makes the listener SASL/PLAIN with Config.Users.
	SASL bool
}

// Config describes a cluster: one coordinator and Tablets tablet servers.
type Config struct {
	Release Release
	// ZooKeeper is the address of a running ZooKeeper ("host:port").
	ZooKeeper string
	// Root is zookeeper.path.root; default "/fluss".
	Root string
	// Dir holds the servers' configuration, data and logs; default a new
	// temporary folder that Close removes.
	Dir string
	// RemoteDir is remote.data.dir; default file://Dir/remote. Give it as
	// a file:// URL: with a bare path a coordinator's orphan cleanup
	// compares its listing's URLs with the bare paths its znodes hold and
	// deletes live files (docs/storage-format.md, the Java weaknesses).
	RemoteDir string
	// Tablets is the number of tablet servers; default 1.
	Tablets int
	// Listeners are the client listeners besides InternalListener.
	Listeners []Listener
	// Users are the SASL/PLAIN users (name to password) of SASL listeners.
	Users map[string]string
	// SuperUsers, when not empty, turns the servers' authorizer on with
	// these users as super users (names without "User:").
	SuperUsers []string
	// CoordinatorAdvertised maps a listener name to the "host:port" the
	// coordinator advertises for it (the sidecar's, in proxy deployment (a)).
	CoordinatorAdvertised map[string]string
	// Extra holds more server.yaml keys for every server, and
	// CoordinatorExtra for the coordinator only. An empty value removes a
	// key the kit would write (remote.data.dir, say).
	Extra, CoordinatorExtra map[string]string
	// JVMOptions replace the default heap and JIT options of every server.
	JVMOptions []string
	// StartTimeout bounds Start and Restart; default 3 minutes.
	StartTimeout time.Duration
}

// DefaultJVMOptions suit tests: a small heap and a quick start. The
// add-opens let a tablet server on Java 17 use its shaded Arrow, as
// Fluss's own start scripts allow: without them a write to a primary-key
// table fails on the server (MemoryUtil cannot be initialized).
var DefaultJVMOptions = []string{"-Xms64m", "-Xmx768m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:MaxDirectMemorySize=512m",
	"--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED"}

func (c *Config) withDefaults() error {
	if c.Release.Name == "" {
		return errors.New("flusstest: Config.Release is required")
	}
	if c.ZooKeeper == "" {
		return errors.New("flusstest: Config.ZooKeeper is required")
	}
	if c.Root == "" {
		c.Root = "/fluss"
	}
	if c.Tablets == 0 {
		c.Tablets = 1
	}
	if c.RemoteDir == "" {
		c.RemoteDir = "file://" + filepath.Join(c.Dir, "remote")
	}
	if c.JVMOptions == nil {
		c.JVMOptions = DefaultJVMOptions
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 3 * time.Minute
	}
	for _, l := range c.Listeners {
		if l.Name == InternalListener || l.Name == "" || strings.ContainsAny(l.Name, ":,/ ") {
			return fmt.Errorf("flusstest: bad listener name %q", l.Name)
		}
		if l.SASL && len(c.Users) == 0 {
			return fmt.Errorf("flusstest: SASL listener %s needs Config.Users", l.Name)
		}
	}
	return nil
}

// Cluster is a running coordinator and its tablet servers.
type Cluster struct {
	Coordinator *Server
	Tablets     []*Server
	cfg         Config
	ownsDir     bool
}

// Start starts the cluster and waits until the coordinator's GET_METADATA
// names every tablet server. On failure every process started is stopped
// and the error carries the tail of the failing server's log.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	ownsDir := false
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "flusstest-")
		if err != nil {
			return nil, err
		}
		cfg.Dir, ownsDir = dir, true
	}
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	classpath, err := cfg.Release.Classpath()
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, ownsDir: ownsDir}
	coord, err := c.newServer("coordinator", -1, classpath)
	if err != nil {
		return nil, err
	}
	c.Coordinator = coord
	for i := range cfg.Tablets {
		ts, err := c.newServer("tablet-"+strconv.Itoa(i), i, classpath)
		if err != nil {
			return nil, err
		}
		c.Tablets = append(c.Tablets, ts)
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.StartTimeout)
	defer cancel()
	for _, s := range c.servers() {
		if err := s.start(); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.WaitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) servers() []*Server {
	return append([]*Server{c.Coordinator}, c.Tablets...)
}

// Config returns the cluster's configuration, defaults filled in.
func (c *Cluster) Config() Config { return c.cfg }

// Dir is the folder of the servers' configuration, data and logs.
func (c *Cluster) Dir() string { return c.cfg.Dir }

// ConfigPath is the server.yaml the server was started with.
func (s *Server) ConfigPath() string { return filepath.Join(s.dir, "conf", "server.yaml") }

// WaitReady waits until every server runs and the coordinator's
// GET_METADATA names every tablet server.
func (c *Cluster) WaitReady(ctx context.Context) error {
	addr := c.Coordinator.Endpoint(InternalListener)
	var last error
	for {
		for _, s := range c.servers() {
			if !s.Running() {
				return fmt.Errorf("flusstest: %s exited while starting:\n%s", s.Name, s.LogTail(4096))
			}
		}
		n, err := tabletCount(ctx, addr)
		if err == nil && n >= len(c.Tablets) {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("the coordinator names %d of %d tablet servers", n, len(c.Tablets))
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("flusstest: cluster not ready: %v (%v); coordinator log:\n%s", ctx.Err(), last, c.Coordinator.LogTail(4096))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Close stops every server and, when the cluster made its folder, removes
// it. It is safe to call more than once.
func (c *Cluster) Close() {
	for _, s := range c.servers() {
		if s != nil {
			s.Stop()
		}
	}
	if c.ownsDir {
		_ = os.RemoveAll(c.cfg.Dir)
		c.ownsDir = false
	}
}

// keepDir makes Close leave the folder, for a failed test's logs.
func (c *Cluster) keepDir() { c.ownsDir = false }

// newServer lays out one server's folder and configuration; tablet is its
// tablet-server id, or -1 for the coordinator.
func (c *Cluster) newServer(name string, tablet int, classpath string) (*Server, error) {
	dir := filepath.Join(c.cfg.Dir, name)
	if err := os.MkdirAll(filepath.Join(dir, "conf"), 0o755); err != nil {
		return nil, err
	}
	s := &Server{Name: name, dir: dir, ports: map[string]int{}}
	names := []string{InternalListener}
	for _, l := range c.cfg.Listeners {
		names = append(names, l.Name)
	}
	for _, n := range names {
		p, err := zktest.FreePort("127.0.0.1")
		if err != nil {
			return nil, err
		}
		s.ports[n] = p
		s.listeners = append(s.listeners, n)
	}
	yaml := c.serverYAML(s, tablet)
	if err := os.WriteFile(filepath.Join(dir, "conf", "server.yaml"), []byte(yaml), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "conf", "log4j2.properties"), []byte(log4jConfig), 0o644); err != nil {
		return nil, err
	}
	main := c.cfg.Release.coordinatorMain()
	if tablet >= 0 {
		main = c.cfg.Release.tabletMain()
	}
	s.args = append(slices.Clone(c.cfg.JVMOptions),
		"-Dlog4j.configurationFile="+filepath.Join(dir, "conf", "log4j2.properties"),
		"-cp", classpath, main, "--configDir", filepath.Join(dir, "conf"))
	return s, nil
}

// serverYAML writes one server's server.yaml: the keys are Fluss's own.
func (c *Cluster) serverYAML(s *Server, tablet int) string {
	kv := map[string]string{
		app.KeyZKAddress:          c.cfg.ZooKeeper,
		app.KeyZKRoot:             c.cfg.Root,
		app.KeyRemoteDataDir:      c.cfg.RemoteDir,
		authz.KeyInternalListener: InternalListener,
	}
	var bind, protocols []string
	for _, n := range s.listeners {
		bind = append(bind, n+"://"+s.Endpoint(n))
	}
	kv[app.KeyBindListeners] = strings.Join(bind, ", ")
	for _, l := range c.cfg.Listeners {
		if l.SASL {
			protocols = append(protocols, l.Name+":SASL")
		}
	}
	if len(protocols) > 0 {
		kv[authz.KeyProtocolMap] = strings.Join(protocols, ",")
		kv[authz.KeyMechanisms] = "PLAIN"
		kv[authz.KeyPlainJAAS] = c.jaasConfig()
	}
	if len(c.cfg.SuperUsers) > 0 {
		kv[authz.KeyAuthorizerEnabled] = "true"
		var su []string
		for _, u := range c.cfg.SuperUsers {
			su = append(su, "User:"+u)
		}
		kv[authz.KeySuperUsers] = strings.Join(su, ";")
	}
	if tablet >= 0 {
		kv["tablet-server.id"] = strconv.Itoa(tablet)
		kv["data.dir"] = filepath.Join(s.dir, "data")
	} else {
		var adv []string
		for _, n := range s.listeners {
			if a, ok := c.cfg.CoordinatorAdvertised[n]; ok {
				adv = append(adv, n+"://"+a)
			}
		}
		if len(adv) > 0 {
			kv[app.KeyAdvertisedListeners] = strings.Join(adv, ", ")
		}
		maps.Copy(kv, c.cfg.CoordinatorExtra)
	}
	if tablet >= 0 {
		maps.Copy(kv, c.cfg.Extra)
	} else {
		extra := maps.Clone(c.cfg.Extra)
		for k := range c.cfg.CoordinatorExtra {
			delete(extra, k)
		}
		maps.Copy(kv, extra)
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if kv[k] == "" {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", k, kv[k])
	}
	return b.String()
}

// jaasConfig is the servers' SASL/PLAIN user list, one user_<name> entry
// per user, names sorted.
func (c *Cluster) jaasConfig() string {
	var b strings.Builder
	b.WriteString(c.cfg.Release.loginModule() + " required")
	for _, u := range slices.Sorted(maps.Keys(c.cfg.Users)) {
		fmt.Fprintf(&b, " user_%s=%q", u, c.cfg.Users[u])
	}
	b.WriteString(";")
	return b.String()
}

// log4jConfig sends the server's log to its stdout, which the kit writes
// to the server's log file.
const log4jConfig = `rootLogger.level = INFO
rootLogger.appenderRef.console.ref = ConsoleAppender
appender.console.name = ConsoleAppender
appender.console.type = CONSOLE
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n
`

// hostPort is net.JoinHostPort for the loopback address.
func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
