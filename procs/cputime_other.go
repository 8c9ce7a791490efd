//go:build !unix

package procs

import "time"

// ProcessCPUTime cannot be read here; the governor then leaves the
// processors alone.
func ProcessCPUTime() (time.Duration, bool) { return 0, false }
