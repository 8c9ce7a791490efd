package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// signalContext returns a context cancelled on the first SIGINT or
// SIGTERM (stop), and one cancelled on the second (hurry: skip the rest of
// the accept delay). SIGHUP, which a terminal sends when it closes and
// operators often send to ask for a reload, is logged and otherwise
// ignored: the sidecar logs to stderr, so it has no log file to reopen,
// and reads its configuration only at start. Without this, SIGHUP's
// default action would end the process with no drain.
func signalContext(log hclog.Logger) (stop, hurry context.Context, release func()) {
	stop, cancelStop := context.WithCancel(context.Background())
	hurry, cancelHurry := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case sig := <-ch:
				if sig == syscall.SIGHUP {
					log.Info("SIGHUP received and ignored: logs go to stderr and configuration is read only at start; send SIGTERM to stop")
					continue
				}
				if stop.Err() == nil {
					log.Info("signal received; shutting down", "signal", sig.String())
					cancelStop()
					continue
				}
				if hurry.Err() == nil {
					log.Info("second signal received; draining now", "signal", sig.String())
					cancelHurry()
				}
			case <-done:
				return
			}
		}
	}()
	return stop, hurry, func() {
		signal.Stop(ch)
		close(done)
		cancelStop()
		cancelHurry()
	}
}

// shutdownStatus is the exit status after a shutdown that returned err: 0
// for a clean one, 3 when the drain timed out and requests in flight were
// cut, 1 for any other failure while closing.
func shutdownStatus(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, wire.ErrDrainTimeout):
		return 3
	default:
		return 1
	}
}
