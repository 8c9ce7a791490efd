package embedded_test

import (
	"net"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/app"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/internal/eventually"
)

// TestCloseDrainsListenersAtOnce: with a request in flight on the first
// listener, Close has closed the second listener too while that request
// still runs; one after the other, a shutdown could take the drain timeout
// once per listener. The running request is still answered.
func TestCloseDrainsListenersAtOnce(t *testing.T) {
	store := newStallingStore(t)
	t.Cleanup(store.release)
	srv := startFromKeys(t, map[string]string{
		app.KeyBindListeners: "FLUSS://127.0.0.1:0,SECOND://127.0.0.1:0",
		app.KeyDrainTimeout:  "10 min", // the test's deadline ends it first
	}, store.Store)
	var second config.Listener
	for _, l := range srv.Listeners() {
		if l.Name == "SECOND" {
			second = l
		}
	}
	c := dial(t, srv.Addr())
	answered := make(chan error, 1)
	go func() {
		_, err := register(t.Context(), c, "slow", 1)
		answered <- err
	}()
	<-store.entered
	closed := make(chan error, 1)
	go func() { closed <- srv.Close() }()
	func() {
		defer store.release() // also when the wait fails, or the cleanup's Close would wait for the drain
		eventually.True(t, "the second listener to refuse while the first drains", func() bool {
			nc, err := net.Dial("tcp", second.Address())
			if err != nil {
				return true
			}
			nc.Close()
			return false
		})
	}()
	if err := <-answered; err != nil {
		t.Fatalf("the register in flight: %v", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}
