package flusstest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// stopGrace is how long Stop waits after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// Server is one Fluss server process of a cluster.
type Server struct {
	// Name is "coordinator" or "tablet-<id>", also its folder's name.
	Name string

	dir       string
	args      []string
	listeners []string       // InternalListener first, then the client listeners
	ports     map[string]int // listener name to bound port

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// Endpoint is the "127.0.0.1:port" the server binds for the listener name,
// or "" if it has no such listener.
func (s *Server) Endpoint(listener string) string {
	p, ok := s.ports[listener]
	if !ok {
		return ""
	}
	return hostPort(p)
}

// LogPath is the file holding the server's stdout and stderr.
func (s *Server) LogPath() string { return filepath.Join(s.dir, "server.log") }

// Pid is the server process's id, or 0 when it is stopped.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Running reports whether the server process has been started and has not
// exited.
func (s *Server) Running() bool {
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if exited == nil {
		return false
	}
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// LogTail returns up to the last n bytes of the server's log.
func (s *Server) LogTail(n int64) string { return zktest.FileTail(s.LogPath(), int(n)) }

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("flusstest: %s is already running", s.Name)
	}
	logFile, err := os.OpenFile(s.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	java := "java"
	if home := os.Getenv("JAVA_HOME"); home != "" {
		java = filepath.Join(home, "bin", "java")
	}
	cmd := exec.Command(java, s.args...)
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = zktest.ProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("flusstest: starting %s: %w", s.Name, err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited = cmd, exited
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(exited)
	}()
	return nil
}

// Stop ends the server's process group (SIGTERM, then SIGKILL after a
// grace period) and waits for it. Its data stay for Restart. Stop is
// idempotent.
func (s *Server) Stop() { s.stop(syscall.SIGTERM) }

// Kill ends the server's process group with SIGKILL at once, as a crash
// would, and waits for it.
func (s *Server) Kill() { s.stop(syscall.SIGKILL) }

func (s *Server) stop(sig syscall.Signal) {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	zktest.StopGroup(cmd, exited, sig, stopGrace)
}

// Restart stops the server and starts it again with the same ports,
// configuration and data, then waits until the cluster is ready.
func (c *Cluster) Restart(ctx context.Context, s *Server) error {
	s.Stop()
	if err := s.start(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.StartTimeout)
	defer cancel()
	return c.WaitReady(ctx)
}
