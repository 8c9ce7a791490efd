//go:build unix && !linux

package zktest

import "syscall"

// sysProcAttr puts the server in its own process group, so that Stop can
// kill it with anything it spawned.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
