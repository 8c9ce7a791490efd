package zktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	gozk "github.com/go-zookeeper/zk"
)

// ErrNotInstalled is returned by Start when Java or the ZooKeeper jars cannot
// be found.
var ErrNotInstalled = errors.New("zktest: ZooKeeper is not installed (run `apt-get install -y zookeeper`, " +
	"or set ZOOKEEPER_CLASSPATH or ZOOKEEPER_HOME)")

// DefaultStartTimeout bounds how long Start waits for a new server to accept
// a session when the caller's context has no earlier deadline.
const DefaultStartTimeout = 60 * time.Second

// stopGrace is how long Stop waits after SIGTERM before it sends SIGKILL.
const stopGrace = 5 * time.Second

// ServerConfig describes one standalone ZooKeeper server.
type ServerConfig struct {
	// Dir holds zoo.cfg, the data directory (Dir/data) and the server log
	// (Dir/zookeeper.log). It is created if missing.
	Dir string
	// Port is the client port. Zero picks a free port on Bind.
	Port int
	// Bind is the client address (clientPortAddress); default 127.0.0.1.
	Bind string
	// TickTime is ZooKeeper's tick (default 500 ms). The shortest session
	// the server grants is two ticks.
	TickTime time.Duration
	// MaxSessionTimeout is the longest session the server grants (default
	// 120 s, so clients asking for Fluss's 60 s default get it).
	MaxSessionTimeout time.Duration
	// ID and Peers make the server a member of an ensemble (see
	// StartEnsemble): ID is its myid, Peers every member, itself included.
	// Without Peers the server is standalone.
	ID    int
	Peers []Peer

	// Secure adds a TLS client port (secureClientPort, bound to Bind) and
	// switches the server to Netty, which TLS needs. The TLS settings
	// themselves (ssl.keyStore.location and so on) go in ExtraConfig.
	Secure bool
	// SecurePort is the TLS client port when Secure is set; zero picks a
	// free port.
	SecurePort int
	// NoPlainPort leaves out the plain client port, so the server accepts
	// TLS connections only. It needs Secure and a Probe.
	NoPlainPort bool
	// ExtraConfig lines are appended to zoo.cfg as they are, for example
	// "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider".
	ExtraConfig []string
	// JVMFlags are added to the java command line before the main class,
	// for example "-Djava.security.auth.login.config=/path/jaas.conf".
	JVMFlags []string
	// Probe, if set, replaces the readiness check: start calls it until it
	// returns nil (each call bounded by its context), the process exits or
	// DefaultStartTimeout passes. A server that needs authentication or
	// TLS cannot be probed by the default check, a plain anonymous session.
	Probe func(ctx context.Context, s *Server) error
}

// Peer is one member of an ensemble, all on loopback.
type Peer struct {
	ID           int
	ClientPort   int
	QuorumPort   int
	ElectionPort int
}

func (c *ServerConfig) withDefaults() {
	if c.Bind == "" {
		c.Bind = "127.0.0.1"
	}
	if c.TickTime <= 0 {
		c.TickTime = 500 * time.Millisecond
	}
	if c.MaxSessionTimeout <= 0 {
		c.MaxSessionTimeout = 120 * time.Second
	}
}

// ConfigPath is where WriteConfig puts zoo.cfg.
func (c ServerConfig) ConfigPath() string { return filepath.Join(c.Dir, "zoo.cfg") }

// DataDir is the server's dataDir.
func (c ServerConfig) DataDir() string { return filepath.Join(c.Dir, "data") }

// LogPath is the file that receives the server's stdout and stderr.
func (c ServerConfig) LogPath() string { return filepath.Join(c.Dir, "zookeeper.log") }

// Addr is the "host:port" clients connect to.
func (c ServerConfig) Addr() string { return net.JoinHostPort(c.Bind, strconv.Itoa(c.Port)) }

// WriteConfig creates c.Dir and the data directory and writes zoo.cfg for a
// standalone server: client port bound to c.Bind only, AdminServer off, four
// letter words limited to "ruok" and "srvr". It returns the file's path. The
// port must already be chosen (non-zero).
func WriteConfig(c ServerConfig) (string, error) {
	c.withDefaults()
	if c.Dir == "" {
		return "", errors.New("zktest: ServerConfig.Dir is empty")
	}
	if c.Port <= 0 || c.Port > 65535 {
		return "", fmt.Errorf("zktest: invalid port %d", c.Port)
	}
	if c.Secure && (c.SecurePort <= 0 || c.SecurePort > 65535) {
		return "", fmt.Errorf("zktest: invalid secure port %d", c.SecurePort)
	}
	if c.NoPlainPort && !c.Secure {
		return "", errors.New("zktest: NoPlainPort needs Secure")
	}
	if err := os.MkdirAll(c.DataDir(), 0o755); err != nil {
		return "", err
	}
	dataDir, err := filepath.Abs(c.DataDir())
	if err != nil {
		return "", err
	}
	tick := c.TickTime.Milliseconds()
	if tick < 1 {
		tick = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "tickTime=%d\n", tick)
	fmt.Fprintf(&b, "dataDir=%s\n", dataDir)
	if !c.NoPlainPort {
		fmt.Fprintf(&b, "clientPort=%d\n", c.Port)
		fmt.Fprintf(&b, "clientPortAddress=%s\n", c.Bind)
	}
	if c.Secure {
		fmt.Fprintf(&b, "secureClientPort=%d\n", c.SecurePort)
		fmt.Fprintf(&b, "secureClientPortAddress=%s\n", c.Bind)
		b.WriteString("serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n")
	}
	fmt.Fprintf(&b, "maxSessionTimeout=%d\n", c.MaxSessionTimeout.Milliseconds())
	b.WriteString("maxClientCnxns=0\n")
	b.WriteString("admin.enableServer=false\n")
	b.WriteString("4lw.commands.whitelist=ruok,srvr\n")
	b.WriteString("autopurge.purgeInterval=0\n")
	for _, line := range c.ExtraConfig {
		b.WriteString(line + "\n")
	}
	if len(c.Peers) > 0 {
		b.WriteString("initLimit=10\nsyncLimit=5\n")
		for _, p := range c.Peers {
			fmt.Fprintf(&b, "server.%d=%s:%d:%d\n", p.ID, c.Bind, p.QuorumPort, p.ElectionPort)
		}
		if err := os.WriteFile(filepath.Join(dataDir, "myid"), []byte(strconv.Itoa(c.ID)+"\n"), 0o644); err != nil {
			return "", err
		}
	}
	path := c.ConfigPath()
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// Server is a running (or stopped) ZooKeeper child process.
type Server struct {
	// Addr is "host:port" for clients, e.g. "127.0.0.1:40123". With
	// NoPlainPort nothing listens there.
	Addr string
	// SecureAddr is the TLS client port's "host:port" when the server was
	// configured Secure, else "".
	SecureAddr string

	cfg     ServerConfig
	ownsDir bool

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has been waited for
	logFile *os.File
	closed  bool
}

// Start runs a server in a fresh temporary directory on a free port of
// 127.0.0.1 and waits until it accepts a session (bounded by ctx and
// DefaultStartTimeout). Close removes the directory.
func Start(ctx context.Context) (*Server, error) {
	dir, err := os.MkdirTemp("", "zktest-")
	if err != nil {
		return nil, err
	}
	s, err := startServer(ctx, ServerConfig{Dir: dir}, true)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// StartConfig runs a server as described by cfg (see WriteConfig) and waits
// until it accepts a session. The directory is kept by Close. Port zero picks
// a free port.
func StartConfig(ctx context.Context, cfg ServerConfig) (*Server, error) {
	return startServer(ctx, cfg, false)
}

func startServer(ctx context.Context, cfg ServerConfig, ownsDir bool) (*Server, error) {
	cfg.withDefaults()
	if cfg.NoPlainPort && cfg.Probe == nil {
		return nil, errors.New("zktest: a server without a plain port needs a Probe")
	}
	pickPort, pickSecure := cfg.Port == 0, cfg.Secure && cfg.SecurePort == 0
	if !pickPort && !pickSecure {
		return startOnce(ctx, cfg, ownsDir, false, false)
	}
	retry := false
	return retryTakenPort(ctx, func() (*Server, error) {
		// A failed attempt's log would name its BindException again.
		if retry {
			_ = os.Remove(cfg.LogPath())
		}
		retry = true
		return startOnce(ctx, cfg, ownsDir, pickPort, pickSecure)
	})
}

// startAttempts bounds how often a server, or an ensemble, whose picked
// port was taken before it bound it is started on fresh ports.
const startAttempts = 3

// retryTakenPort calls start, which picks its ports with FreePort, again
// while it fails because such a port was taken before the server bound it
// (its log says so), startAttempts times in all.
func retryTakenPort[T any](ctx context.Context, start func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		v, err := start()
		if err == nil || attempt == startAttempts || !bindFailed(err.Error()) || ctx.Err() != nil {
			return v, err
		}
	}
}

func startOnce(ctx context.Context, cfg ServerConfig, ownsDir, pickPort, pickSecure bool) (*Server, error) {
	if pickPort {
		p, err := FreePort(cfg.Bind)
		if err != nil {
			return nil, err
		}
		cfg.Port = p
	}
	if pickSecure {
		p, err := FreePort(cfg.Bind)
		if err != nil {
			return nil, err
		}
		cfg.SecurePort = p
	}
	if _, err := WriteConfig(cfg); err != nil {
		return nil, err
	}
	s := &Server{Addr: cfg.Addr(), cfg: cfg, ownsDir: ownsDir}
	if cfg.Secure {
		s.SecureAddr = net.JoinHostPort(cfg.Bind, strconv.Itoa(cfg.SecurePort))
	}
	if err := s.start(ctx); err != nil {
		// Close would remove a directory the server owns; a retry needs it.
		s.ownsDir = false
		s.Close()
		return nil, err
	}
	return s, nil
}

// Config returns the server's configuration (with defaults and port filled).
func (s *Server) Config() ServerConfig { return s.cfg }

// LogTail returns up to the last n bytes of the server's log.
func (s *Server) LogTail(n int) string { return FileTail(s.cfg.LogPath(), n) }

// Exited is closed when the current server process ends, whatever the cause.
// It returns nil if no process was started.
func (s *Server) Exited() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exited
}

func (s *Server) start(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("zktest: server is closed")
	}
	if s.cmd != nil {
		s.mu.Unlock()
		return errors.New("zktest: server is already running")
	}
	java, classpath, err := findZooKeeper()
	if err != nil {
		s.mu.Unlock()
		return err
	}
	logFile, err := os.OpenFile(s.cfg.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	mainClass := "org.apache.zookeeper.server.ZooKeeperServerMain"
	if len(s.cfg.Peers) > 0 {
		mainClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
	}
	args := []string{
		"-Xms16m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.snapshot.trust.empty=true",
		"-Dzookeeper.jmx.log4j.disable=true",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
	}
	args = append(args, s.cfg.JVMFlags...)
	args = append(args, "-cp", classpath, mainClass, s.cfg.ConfigPath())
	cmd := exec.Command(java, args...)
	cmd.Dir = s.cfg.Dir
	cmd.Stdin = nil
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		s.mu.Unlock()
		return fmt.Errorf("zktest: starting %s: %w", java, err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited, s.logFile = cmd, exited, logFile
	s.mu.Unlock()

	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(exited)
	}()

	var ready error
	if s.cfg.Probe != nil {
		ready = waitProbe(ctx, s, exited)
	} else {
		ready = waitReady(ctx, s.Addr, exited)
	}
	if err := ready; err != nil {
		s.Stop()
		return fmt.Errorf("%w\n--- tail of %s ---\n%s", err, s.cfg.LogPath(), s.LogTail(4096))
	}
	return nil
}

// Stop kills the server process and its process group (SIGTERM, then SIGKILL
// after a short grace period) and waits for it to exit. The data directory is
// kept, so Restart brings the same data back. Stop is idempotent.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	StopGroup(cmd, exited, syscall.SIGTERM, stopGrace)
}

// StopGroup sends sig to the process group of cmd (started with
// ProcAttr), then SIGKILL once grace has passed, and returns when exited,
// closed after cmd was waited for, is closed. A child kit (a Fluss server)
// stops its processes with it too.
func StopGroup(cmd *exec.Cmd, exited <-chan struct{}, sig syscall.Signal, grace time.Duration) {
	kill := func(sig syscall.Signal) {
		if err := signalGroup(cmd.Process.Pid, sig); err != nil {
			_ = cmd.Process.Kill()
		}
	}
	kill(sig)
	select {
	case <-exited:
	case <-time.After(grace):
		kill(syscall.SIGKILL)
		<-exited
	}
}

// ProcAttr puts a child server in a process group of its own, so that
// StopGroup ends it with anything it spawned, and on Linux has the kernel
// kill it when the test binary dies.
func ProcAttr() *syscall.SysProcAttr { return sysProcAttr() }

// Restart stops the server if it runs and starts it again on the same port
// with the same data directory, then waits until it accepts a session.
// Sessions that have not expired survive, so clients reconnect to them.
func (s *Server) Restart(ctx context.Context) error {
	s.Stop()
	if err := s.start(ctx); err != nil {
		return err
	}
	return nil
}

// Close stops the server and, for a server made by Start, removes its
// directory. It is idempotent.
func (s *Server) Close() {
	s.Stop()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	if s.ownsDir {
		_ = os.RemoveAll(s.cfg.Dir)
	}
}

// FreePort returns a TCP port that was free on host a moment ago. It
// prefers a port below the kernel's ephemeral range: a port from that range
// (what binding host:0 gives) can be taken as the source port of any
// outgoing connection before the server binds it, and the members of an
// ensemble open such connections to each other while they start.
func FreePort(host string) (int, error) {
	if host == "" {
		host = "127.0.0.1"
	}
	lo := ephemeralLow()
	for range 64 {
		port := freePortFloor + mrand.IntN(lo-freePortFloor)
		if !handedOut.claim(port) {
			continue // given to another caller of this process, maybe not bound yet
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			_ = l.Close()
			return port, nil
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// freePortFloor is the lowest port FreePort picks at random: above the
// ports most services on a developer machine listen on.
const freePortFloor = 10000

// handedOut holds the ports FreePort has returned in this process, so that
// it never returns one twice: tests running in parallel each get their own,
// even before the first caller's server binds it.
var handedOut = &portSet{ports: make(map[int]bool)}

type portSet struct {
	mu    sync.Mutex
	ports map[int]bool
}

// claim reports whether port was not handed out before, and marks it.
func (s *portSet) claim(port int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ports[port] {
		return false
	}
	s.ports[port] = true
	return true
}

// ephemeralLow is the first port of the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), 32768 where it cannot be read
// or leaves no room above freePortFloor.
func ephemeralLow() int {
	const fallback = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return fallback
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return fallback
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo <= freePortFloor+1000 {
		return fallback
	}
	return lo
}

// bindFailed reports whether a server's start failed because a port it was
// given was taken by the time it bound it.
func bindFailed(log string) bool {
	return strings.Contains(log, "BindException") || strings.Contains(log, "Address already in use")
}

// waitReady waits until a go-zookeeper client gets a session from addr and
// can read "/", the process exits, or the wait is over. A probe that gets no
// session within probeTimeout is replaced by a fresh one: a connection
// accepted while the server was still starting can be left hanging by it.
func waitReady(ctx context.Context, addr string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultStartTimeout)
	defer cancel()
	for {
		err := probe(ctx, addr, exited)
		if err == nil || !errors.Is(err, errProbeStuck) {
			return err
		}
	}
}

// waitProbe calls the server's own Probe until it succeeds, the process
// exits or DefaultStartTimeout passes.
func waitProbe(ctx context.Context, s *Server, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultStartTimeout)
	defer cancel()
	var last error
	for {
		one, stop := context.WithTimeout(ctx, probeTimeout)
		last = s.cfg.Probe(one, s)
		stop()
		if last == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("zktest: ZooKeeper exited during startup (last probe: %v)", last)
		case <-ctx.Done():
			return fmt.Errorf("zktest: ZooKeeper not ready: %w (last probe: %v)", ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// probeTimeout bounds one probe connection in waitReady.
const probeTimeout = 10 * time.Second

var errProbeStuck = errors.New("zktest: probe got no session")

func probe(ctx context.Context, addr string, exited <-chan struct{}) error {
	conn, events, err := gozk.Connect([]string{addr}, 10*time.Second,
		gozk.WithLogger(nopLogger{}), gozk.WithLogInfo(false))
	if err != nil {
		return err
	}
	defer conn.Close()
	stuck := time.NewTimer(probeTimeout)
	defer stuck.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return errProbeStuck
			}
			if ev.State != gozk.StateHasSession {
				continue
			}
			got := make(chan error, 1)
			go func() {
				_, _, err := conn.Get("/")
				got <- err
			}()
			select {
			case err := <-got:
				if err == nil {
					return nil
				}
				// A failure here is retried with the next session event.
			case <-exited:
				return errors.New("zktest: ZooKeeper exited during startup")
			case <-ctx.Done():
				return fmt.Errorf("zktest: ZooKeeper at %s not ready: %w", addr, ctx.Err())
			case <-stuck.C:
				return errProbeStuck
			}
		case <-exited:
			return errors.New("zktest: ZooKeeper exited during startup")
		case <-ctx.Done():
			return fmt.Errorf("zktest: ZooKeeper at %s not ready: %w", addr, ctx.Err())
		case <-stuck.C:
			return errProbeStuck
		}
	}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// findZooKeeper returns the java binary and the class path of the server.
func findZooKeeper() (java, classpath string, err error) {
	java = "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		if p := filepath.Join(home, "bin", "java"); fileExists(p) {
			java = p
		}
	}
	if java, err = exec.LookPath(java); err != nil {
		return "", "", fmt.Errorf("%w: java not found: %v", ErrNotInstalled, err)
	}
	if cp := os.Getenv("ZOOKEEPER_CLASSPATH"); cp != "" {
		return java, cp, nil
	}
	var jars []string
	if home := os.Getenv("ZOOKEEPER_HOME"); home != "" {
		for _, pattern := range []string{"*.jar", "lib/*.jar"} {
			m, _ := filepath.Glob(filepath.Join(home, pattern))
			jars = append(jars, m...)
		}
	}
	if len(jars) == 0 {
		// Debian: the jar's manifest Class-Path names the dependencies under
		// /usr/share/java, except Netty's codec (and resolver), which the
		// TLS port needs; they and an SLF4J binding (so the log has text)
		// are added.
		const debJar = "/usr/share/java/zookeeper.jar"
		if !fileExists(debJar) {
			return "", "", ErrNotInstalled
		}
		jars = append(jars, debJar)
		for _, p := range []string{"slf4j-simple.jar", "netty-codec.jar", "netty-resolver.jar"} {
			if p = filepath.Join("/usr/share/java", p); fileExists(p) {
				jars = append(jars, p)
			}
		}
	}
	return java, strings.Join(jars, string(os.PathListSeparator)), nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// FileTail returns up to the last n bytes of the file at path, or a note
// saying why it has none: the log tail a kit prints when a server fails.
func FileTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	off := st.Size() - int64(n)
	if off < 0 {
		off = 0
	}
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	return string(b)
}

// UniqueRoot returns a fresh absolute path such as "/t-3f2a9c0d1e4b5a67",
// for a test to use as its ZooKeeper root so tests sharing a server do not
// see each other's znodes.
func UniqueRoot() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return "/t-" + hex.EncodeToString(b[:])
}

// CPUTime returns the CPU time (user and system) the server's process has
// used so far, read from /proc on Linux; ok is false where that is not
// possible. Benchmarks use it to charge ZooKeeper's work to the side of a
// comparison that caused it.
func (s *Server) CPUTime() (d time.Duration, ok bool) {
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return 0, false
	}
	return ProcessCPUTime(cmd.Process.Pid)
}

// Java returns the java binary and the class path of ZooKeeper's jars, for
// tests that run ZooKeeper's own Java client (org.apache.zookeeper.ZooKeeperMain)
// beside ours.
func Java() (java, classpath string, err error) { return findZooKeeper() }
