//go:build linux

package prometheus

import "syscall"

// promProcAttr asks the kernel to kill the test's Prometheus when the test
// binary dies, so that none outlives a crashed test.
func promProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
