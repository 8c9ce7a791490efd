//go:build linux

package flusstest

import "syscall"

// sysProcAttr puts the server in its own process group, so that Stop ends
// it with anything it spawned, and asks the kernel to kill it when the
// parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
