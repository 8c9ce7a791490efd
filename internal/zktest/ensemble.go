package zktest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Ensemble is a replicated ZooKeeper of several server processes on
// loopback ports, for tests of leader failover.
type Ensemble struct {
	Servers []*Server
	dir     string
}

// StartEnsemble starts n servers (QuorumPeerMain, one config each, every
// port on 127.0.0.1) in a fresh temporary directory and waits until each
// accepts a session, which needs a quorum. A port picked for a member can be
// taken before the member binds it; the whole ensemble is then started again
// on fresh ports, a few times.
func StartEnsemble(ctx context.Context, n int) (*Ensemble, error) {
	return retryTakenPort(ctx, func() (*Ensemble, error) { return startEnsembleOnce(ctx, n) })
}

func startEnsembleOnce(ctx context.Context, n int) (*Ensemble, error) {
	dir, err := os.MkdirTemp("", "zktest-ensemble-")
	if err != nil {
		return nil, err
	}
	e := &Ensemble{dir: dir}
	peers := make([]Peer, n)
	for i := range peers {
		var ports [3]int
		for k := range ports {
			if ports[k], err = FreePort("127.0.0.1"); err != nil {
				e.Close()
				return nil, err
			}
		}
		peers[i] = Peer{ID: i + 1, ClientPort: ports[0], QuorumPort: ports[1], ElectionPort: ports[2]}
	}
	for _, p := range peers {
		cfg := ServerConfig{Dir: filepath.Join(dir, strconv.Itoa(p.ID)), Port: p.ClientPort, ID: p.ID, Peers: peers}
		cfg.withDefaults()
		if _, err := WriteConfig(cfg); err != nil {
			e.Close()
			return nil, err
		}
		e.Servers = append(e.Servers, &Server{Addr: cfg.Addr(), cfg: cfg})
	}
	// Every member must run before any can serve: start them together.
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, s := range e.Servers {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.start(ctx) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Address is the connect string naming every member.
func (e *Ensemble) Address() string {
	addrs := make([]string, len(e.Servers))
	for i, s := range e.Servers {
		addrs[i] = s.Addr
	}
	return strings.Join(addrs, ",")
}

// Leader returns the member that is leader now, or nil.
func (e *Ensemble) Leader() *Server {
	for _, s := range e.Servers {
		if mode, _ := s.Mode(); mode == "leader" {
			return s
		}
	}
	return nil
}

// Close stops every member and removes the directory.
func (e *Ensemble) Close() {
	for _, s := range e.Servers {
		s.Close()
	}
	_ = os.RemoveAll(e.dir)
}

// Mode asks the server (four-letter word "srvr") whether it is "leader",
// "follower" or "standalone".
func (s *Server) Mode() (string, error) {
	conn, err := net.DialTimeout("tcp", s.Addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte("srvr")); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		if mode, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return mode, nil
		}
	}
	return "", fmt.Errorf("zktest: no mode in the srvr answer of %s", s.Addr)
}
