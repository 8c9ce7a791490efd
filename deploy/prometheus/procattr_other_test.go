//go:build !linux

package prometheus

import "syscall"

// promProcAttr: without Pdeathsig, the test's cleanup stops Prometheus.
func promProcAttr() *syscall.SysProcAttr { return nil }
