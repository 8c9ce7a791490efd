//go:build !linux

package lincheck

import "syscall"

// childProcAttr: only Linux can tie a child's life to the test binary's;
// elsewhere the children stop when their standard input closes.
func childProcAttr() *syscall.SysProcAttr { return nil }
