package hdfstest

import (
	"bufio"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// Release is the folder of the Hadoop build file (maven/<Release>/pom.xml)
// and of its resolved jars (.deps/maven/<Release>/lib).
const Release = "hadoop-3.4.0"

//go:embed java/MiniHdfs.java
var helperSource []byte

// Config configures Start.
type Config struct {
	// Dir holds the cluster's data and log; empty: a new temporary folder,
	// removed by Close.
	Dir string
	// DataNodes is the number of DataNodes; 0 means 1. Files are
	// replicated to min(DataNodes, 3) of them.
	DataNodes int
	// StartTimeout bounds the start; 0 means 3 minutes.
	StartTimeout time.Duration
	// Port is the NameNode's RPC port on 127.0.0.1; 0 picks a free one.
	Port int
}

// Cluster is one running MiniDFSCluster process.
type Cluster struct {
	dir     string
	ownsDir bool
	port    int

	cmd    *exec.Cmd
	exited chan struct{}

	mu      sync.Mutex // one command at a time
	stdin   io.WriteCloser
	answers *bufio.Scanner

	closeOnce sync.Once
}

// stopGrace is how long Close waits after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// Start compiles the helper if needed and starts a cluster; it returns once
// the NameNode is active and every DataNode has registered.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.DataNodes <= 0 {
		cfg.DataNodes = 1
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 3 * time.Minute
	}
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	cp, err := classpath(root)
	if err != nil {
		return nil, err
	}
	classes, err := compileHelper(root, cp)
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: cfg.Dir}
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "hdfstest-"); err != nil {
			return nil, err
		}
		c.ownsDir = true
	}
	for attempt := 1; ; attempt++ {
		err = c.start(ctx, classes+string(os.PathListSeparator)+cp, cfg)
		if err == nil || attempt == 3 || cfg.Port != 0 || !strings.Contains(err.Error(), "BindException") {
			break
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(ctx context.Context, classpath string, cfg Config) error {
	port := cfg.Port
	if port == 0 {
		var err error
		if port, err = zktest.FreePort("127.0.0.1"); err != nil {
			return err
		}
	}
	logFile, err := os.OpenFile(c.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	cmd := exec.Command(java, "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.net.preferIPv4Stack=true", "-cp", classpath, "MiniHdfs",
		filepath.Join(c.dir, "data"), strconv.Itoa(port), strconv.Itoa(cfg.DataNodes))
	cmd.Dir = c.dir
	cmd.Stderr = logFile
	cmd.SysProcAttr = zktest.ProcAttr()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		logFile.Close()
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("hdfstest: start java: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(exited)
	}()
	c.cmd, c.exited, c.stdin = cmd, exited, stdin
	c.answers = bufio.NewScanner(stdout)
	c.answers.Buffer(make([]byte, 64<<10), 64<<20)
	ready := make(chan error, 1)
	go func() {
		if !c.answers.Scan() {
			ready <- fmt.Errorf("hdfstest: the minicluster exited before it was ready; log:\n%s", c.LogTail(4000))
			return
		}
		line := c.answers.Text()
		if !strings.HasPrefix(line, "ready ") {
			ready <- fmt.Errorf("hdfstest: unexpected first line %q", line)
			return
		}
		ready <- nil
	}()
	timer := time.NewTimer(cfg.StartTimeout)
	defer timer.Stop()
	select {
	case err = <-ready:
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("hdfstest: the minicluster was not ready within %v; log:\n%s", cfg.StartTimeout, c.LogTail(4000))
	}
	if err != nil {
		c.stop()
		return err
	}
	c.port = port
	return nil
}

// ErrNotResolved means Hadoop's jars are not in .deps/maven: run
// scripts/resolve-maven.sh (make test-deps does).
var ErrNotResolved = errors.New("hdfstest: Hadoop not resolved")

// classpath returns the resolved jars of Release as a java -cp value.
func classpath(root string) (string, error) {
	lib := filepath.Join(root, ".deps", "maven", Release, "lib")
	if jars, _ := filepath.Glob(filepath.Join(lib, "*.jar")); len(jars) == 0 {
		return "", fmt.Errorf("%w: no jars in %s (run scripts/resolve-maven.sh, or make test-deps)", ErrNotResolved, lib)
	}
	return filepath.Join(lib, "*"), nil
}

// repoRoot is the folder holding the repository's go.mod, found from this
// source file's place.
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("hdfstest: cannot locate the repository")
	}
	for dir := filepath.Dir(file); ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("hdfstest: no go.mod above " + filepath.Dir(file))
		}
	}
}

// compileHelper compiles java/MiniHdfs.java once per content into
// .deps/hdfstest/<hash>, and returns that folder.
func compileHelper(root, classpath string) (string, error) {
	sum := sha256.Sum256(append(append([]byte{}, helperSource...), Release...))
	out := filepath.Join(root, ".deps", "hdfstest", hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(out, "MiniHdfs.class")); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "MiniHdfs.java")
	if err := os.WriteFile(src, helperSource, 0o644); err != nil {
		return "", err
	}
	javac := "javac"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		javac = filepath.Join(home, "bin", "javac")
	}
	classes := filepath.Join(tmp, "classes")
	if b, err := exec.Command(javac, "-nowarn", "-cp", classpath, "-d", classes, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("hdfstest: javac MiniHdfs.java: %v\n%s", err, b)
	}
	// Another test binary may have won the race: its folder is as good.
	if err := os.Rename(classes, out); err != nil {
		if _, serr := os.Stat(filepath.Join(out, "MiniHdfs.class")); serr != nil {
			return "", err
		}
	}
	return out, nil
}

// Addr is the NameNode's RPC address, "127.0.0.1:port".
func (c *Cluster) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)) }

// Port is the NameNode's RPC port.
func (c *Cluster) Port() int { return c.port }

// URL returns "hdfs://127.0.0.1:port" followed by path.
func (c *Cluster) URL(path string) string { return "hdfs://" + c.Addr() + path }

// LogPath is the file holding the cluster's stderr.
func (c *Cluster) LogPath() string { return filepath.Join(c.dir, "minicluster.log") }

// LogTail returns up to the last n bytes of the cluster's log.
func (c *Cluster) LogTail(n int64) string { return zktest.FileTail(c.LogPath(), int(n)) }

// Pid is the JVM's process id.
func (c *Cluster) Pid() int { return c.cmd.Process.Pid }

// ErrExited means the minicluster process is gone.
var ErrExited = errors.New("hdfstest: the minicluster has exited")

// Do sends one command line to the helper and returns the value of its "ok"
// answer, or its "error" answer as an error.
func (c *Cluster) Do(args ...string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.exited:
		return "", ErrExited
	default:
	}
	if _, err := io.WriteString(c.stdin, strings.Join(args, " ")+"\n"); err != nil {
		return "", fmt.Errorf("hdfstest: %s: %w", args[0], err)
	}
	if !c.answers.Scan() {
		return "", fmt.Errorf("%w (during %s); log:\n%s", ErrExited, args[0], c.LogTail(4000))
	}
	line := c.answers.Text()
	if v, ok := strings.CutPrefix(line, "ok "); ok {
		return v, nil
	}
	if line == "ok" {
		return "", nil
	}
	return "", fmt.Errorf("hdfstest: %s: %s", strings.Join(args, " "), strings.TrimPrefix(line, "error "))
}

func (c *Cluster) do(args ...string) error {
	_, err := c.Do(args...)
	return err
}

// StopDataNode stops DataNode i (from 0); StartDataNode starts it again on
// the same ports with the same data.
func (c *Cluster) StopDataNode(i int) error  { return c.do("stop-datanode", strconv.Itoa(i)) }
func (c *Cluster) StartDataNode(i int) error { return c.do("start-datanode", strconv.Itoa(i)) }

// StopNameNode stops the NameNode; StartNameNode starts it again on the
// same port with the same namespace and waits until it is active.
func (c *Cluster) StopNameNode() error  { return c.do("stop-namenode") }
func (c *Cluster) StartNameNode() error { return c.do("start-namenode") }

// SafeMode puts the NameNode in safe mode (on) or takes it out, as
// `hdfs dfsadmin -safemode enter|leave` does.
func (c *Cluster) SafeMode(on bool) error {
	if on {
		return c.do("safemode", "enter")
	}
	return c.do("safemode", "leave")
}

// SpaceQuota limits the bytes (replicas included) under dir, as
// `hdfs dfsadmin -setSpaceQuota` does; bytes < 0 clears the quota.
func (c *Cluster) SpaceQuota(dir string, bytes int64) error {
	if bytes < 0 {
		return c.do("space-quota", dir, "clear")
	}
	return c.do("space-quota", dir, strconv.FormatInt(bytes, 10))
}

// Mkdir makes dir (and its parents), owned by owner with permission perm.
func (c *Cluster) Mkdir(dir, owner string, perm os.FileMode) error {
	return c.do("mkdir", dir, owner, strconv.FormatUint(uint64(perm.Perm()), 8))
}

// Cat reads a file with Hadoop's client.
func (c *Cluster) Cat(path string) ([]byte, error) {
	v, err := c.Do("cat", path)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(v)
}

// Put writes a file with Hadoop's client, its parents made, replacing
// what was there.
func (c *Cluster) Put(path string, data []byte) error {
	return c.do("put", path, base64.StdEncoding.EncodeToString(data))
}

// List names the entries of dir by path, a directory's with a trailing
// "/".
func (c *Cluster) List(dir string) ([]string, error) {
	v, err := c.Do("ls", dir)
	if err != nil {
		return nil, err
	}
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' }), nil
}

func (c *Cluster) stop() {
	if c.cmd == nil {
		return
	}
	_ = c.stdin.Close()
	zktest.StopGroup(c.cmd, c.exited, syscall.SIGTERM, stopGrace)
}

// Close stops the cluster's process group and, for a cluster made without
// a Dir, removes its folder. It is idempotent.
func (c *Cluster) Close() {
	c.closeOnce.Do(func() {
		c.stop()
		if c.ownsDir {
			_ = os.RemoveAll(c.dir)
		}
	})
}
