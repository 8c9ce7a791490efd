//go:build unix

package procs

import (
	"syscall"
	"time"
)

// ProcessCPUTime is the user and system CPU time this process has used,
// from getrusage.
func ProcessCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
