package lincheck

import "syscall"

// childProcAttr makes a sidecar child die with the test binary.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
