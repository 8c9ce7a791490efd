package assembly

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// largeRequest is the request size after which the sidecar gives memory
// back to the operating system once no request is in memory any more.
const largeRequest = 1 << 20

// giveMemoryBack returns a function for wire.Budget.SetOnDrained: a forced
// garbage collection that returns freed memory to the operating system, at
// most every few seconds. Without it the Go runtime keeps the heap a large
// request grew until its periodic collection (every two minutes) and then
// returns it only gradually. A GOMEMLIMIT set in the environment still
// applies as usual.
func giveMemoryBack(log hclog.Logger) func() {
	const every = 5 * time.Second
	var mu sync.Mutex
	var last time.Time
	var pending bool
	var free func()
	free = func() {
		mu.Lock()
		defer mu.Unlock()
		if wait := every - time.Since(last); wait > 0 {
			// Ran a moment ago: run once more when the pause is over,
			// for what this request left.
			if !pending {
				pending = true
				time.AfterFunc(wait, func() {
					mu.Lock()
					pending = false
					mu.Unlock()
					free()
				})
			}
			return
		}
		last = time.Now()
		debug.FreeOSMemory()
		log.Named("memory").Trace("returned freed memory to the operating system after a large request")
	}
	return free
}
