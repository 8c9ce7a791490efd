package bench

import (
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/zktest"
)

// The storms charge each side of a comparison the CPU time its server
// process (and ZooKeeper) spent in the measured window, read from the
// kernel's own accounting of those processes: throughput alone hides a
// server that keeps up by burning the cores another process would use.

// pidCPU is the user and system CPU time process pid has used so far
// (zktest reads it from /proc/<pid>/stat); ok is false where that cannot
// be read.
func pidCPU(pid int) (time.Duration, bool) { return zktest.ProcessCPUTime(pid) }

// cpuCost is the CPU time spent in measured windows by a target's server
// process and by ZooKeeper, and the requests answered in them.
type cpuCost struct {
	server, zk time.Duration
	serverOK   bool // every window read the server's time
	zkOK       bool // every window read ZooKeeper's time
	windows    int
}

// cpuWindow reads the CPU times at the start of a window; its end adds the
// difference to a cpuCost. serverPID 0 means the target has no server of
// its own (raw ZooKeeper: the server is ZooKeeper).
type cpuWindow struct {
	serverPID      int
	server0, zk0   time.Duration
	serverOK, zkOK bool
}

func startCPUWindow(serverPID int, zkCPU func() (time.Duration, bool)) cpuWindow {
	w := cpuWindow{serverPID: serverPID}
	if serverPID != 0 {
		w.server0, w.serverOK = pidCPU(serverPID)
	}
	w.zk0, w.zkOK = zkCPU()
	return w
}

func (w cpuWindow) end(c *cpuCost, zkCPU func() (time.Duration, bool)) {
	zk1, zkOK := zkCPU()
	var s1 time.Duration
	serverOK := false
	if w.serverPID != 0 {
		s1, serverOK = pidCPU(w.serverPID)
	}
	if c.windows == 0 {
		c.serverOK, c.zkOK = true, true
	}
	c.windows++
	c.serverOK = c.serverOK && w.serverOK && serverOK
	c.zkOK = c.zkOK && w.zkOK && zkOK
	c.server += s1 - w.server0
	c.zk += zk1 - w.zk0
}

// add sums o into c: the sum is known only where both were.
func (c *cpuCost) add(o cpuCost) {
	if c.windows == 0 {
		*c = o
		return
	}
	c.server += o.server
	c.zk += o.zk
	c.serverOK = c.serverOK && o.serverOK
	c.zkOK = c.zkOK && o.zkOK
	c.windows += o.windows
}

// perRequest is a CPU time divided over reqs requests, in microseconds;
// ok false gives -1 (printed as n/a).
func perRequest(d time.Duration, ok bool, reqs int) float64 {
	if !ok || reqs == 0 {
		return -1
	}
	return float64(d.Nanoseconds()) / 1e3 / float64(reqs)
}
