//go:build linux

package app

import "syscall"

// RaiseFileLimit raises the process's open-files soft limit (RLIMIT_NOFILE)
// to its hard limit and reports both. Raising needs no privilege; a hard
// limit too low for the connections wanted has to be raised by whoever
// starts the sidecar (systemd LimitNOFILE, the container runtime's ulimit
// settings): see docs/limits.md.
func RaiseFileLimit() FileLimit {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return FileLimit{Err: err}
	}
	f := FileLimit{Known: true, Soft: r.Cur, Hard: r.Max, Current: r.Cur}
	if r.Cur < r.Max {
		raised := syscall.Rlimit{Cur: r.Max, Max: r.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			f.Err = err
		} else {
			f.Current = r.Max
		}
	}
	return f
}
