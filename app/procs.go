package app

import (
	"context"
	"os"
	"runtime"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/procs"
)

// GovernProcs sizes GOMAXPROCS to the process's load until ctx ends (package
// procs), when s says so and the GOMAXPROCS environment variable, an
// operator's explicit choice, is unset. Only a process that owns its
// runtime calls it (`serve`); a library user of the sidecar (embedded mode
// in a test suite) does not. It returns at once; the governor runs on its
// own goroutine and gives every processor back when ctx ends.
func GovernProcs(ctx context.Context, s Settings, log hclog.Logger) {
	max := runtime.GOMAXPROCS(0)
	switch {
	case !s.Ops.AdaptiveProcs:
		return
	case os.Getenv("GOMAXPROCS") != "":
		log.Info("GOMAXPROCS is set: "+KeyAdaptiveProcs+" leaves it alone", "gomaxprocs", max)
		return
	case max <= 1:
		return
	}
	go procs.Run(ctx, procs.Config{
		Max:     max,
		CPUTime: procs.ProcessCPUTime,
		Set:     runtime.GOMAXPROCS,
		Log:     log.Named("procs"),
	})
}
