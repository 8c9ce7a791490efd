package zktest

import (
	"time"

	"github.com/prometheus/procfs"
)

// ProcessCPUTime is the user and system CPU time of process pid, from
// /proc/<pid>/stat (through procfs, which the Prometheus process collector
// already uses); ok is false where that cannot be read.
func ProcessCPUTime(pid int) (time.Duration, bool) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, false
	}
	st, err := p.Stat()
	if err != nil {
		return 0, false
	}
	return time.Duration(st.CPUTime() * float64(time.Second)), true
}
