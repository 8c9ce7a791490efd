package zktest

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

func TestProcessCPUTimeReadsThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	// Burn CPU until the kernel's own accounting says 100 ms were used.
	var ru syscall.Rusage
	for x := 0; ; x++ {
		if x%1_000_000 == 0 {
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			if time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) >= 100*time.Millisecond {
				break
			}
		}
	}
	got, ok := ProcessCPUTime(os.Getpid())
	if !ok {
		t.Fatal("could not read /proc/<pid>/stat")
	}
	// /proc counts in ticks of 10 ms; allow one tick per thread's rounding.
	if got < 50*time.Millisecond {
		t.Fatalf("CPU time %v, want at least 50ms after burning 100ms", got)
	}
	if _, ok := ProcessCPUTime(-1); ok {
		t.Fatal("a process that does not exist has a CPU time")
	}
}
