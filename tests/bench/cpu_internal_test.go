package bench

import (
	"testing"
	"time"
)

func TestCPUWindowCharges(t *testing.T) {
	zk := time.Duration(0)
	zkCPU := func() (time.Duration, bool) { return zk, true }
	var c cpuCost
	// No server of its own: only ZooKeeper is charged.
	w := startCPUWindow(0, zkCPU)
	zk += 3 * time.Millisecond
	w.end(&c, zkCPU)
	if c.zk != 3*time.Millisecond || !c.zkOK || c.serverOK || c.windows != 1 {
		t.Fatalf("after one window %+v", c)
	}
	if got := perRequest(c.zk, c.zkOK, 1000); got != 3 {
		t.Fatalf("3 ms over 1000 requests is %v us each, want 3", got)
	}
	if got := perRequest(c.server, c.serverOK, 1000); got != -1 {
		t.Fatalf("a missing server time is %v, want -1", got)
	}
	if got := perRequest(time.Second, true, 0); got != -1 {
		t.Fatalf("no requests gives %v, want -1", got)
	}
	// A second window that cannot read ZooKeeper leaves the sum unknown.
	bad := func() (time.Duration, bool) { return 0, false }
	w = startCPUWindow(0, zkCPU)
	w.end(&c, bad)
	if c.zkOK || c.windows != 2 {
		t.Fatalf("a window without ZooKeeper's time kept the sum known: %+v", c)
	}
	if cpuRatio(2, 1) != 2 || cpuRatio(-1, 1) != -1 || cpuRatio(1, 0) != -1 {
		t.Fatal("cpuRatio")
	}
}
