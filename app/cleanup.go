package app

import (
	"encoding/json"
	"os"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/assembly"
	"github.com/fluss-sidecar/fluss-sidecar/buildinfo"
	"github.com/fluss-sidecar/fluss-sidecar/cleanup"
	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/storage"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// electorIdentity is the cleanup leader znode's data: who leads, for the
// followers' logs.
func electorIdentity(addrs []config.Listener) []byte {
	host, _ := os.Hostname()
	return identityJSON(host, os.Getpid(), config.FormatListeners(addrs), buildinfo.Get().Version)
}

func identityJSON(host string, pid int, listeners, version string) []byte {
	b, _ := json.Marshal(struct {
		Host      string `json:"host"`
		PID       int    `json:"pid"`
		Listeners string `json:"listeners"`
		Version   string `json:"version"`
	}{host, pid, listeners, version})
	return b
}

// cleanupConfig is how the assembly runs the periodic cleanup: on
// whichever sidecar sharing this ZooKeeper root leads it (see
// cleanup.Elector), over files.
func cleanupConfig(s Settings, zc *zk.Client, files storage.OrphanStore, obs cleanup.Observer, log hclog.Logger) assembly.Cleanup {
	return assembly.Cleanup{
		Files: files, Interval: s.CleanupInterval, Grace: s.OrphanGracePeriod, Observer: obs,
		Elect: func(bound []config.Listener) (*cleanup.Elector, error) {
			return cleanup.NewElector(cleanup.ElectorConfig{
				ZK: zc, Identity: electorIdentity(bound), Logger: log,
				OnChange: func(leading bool) {
					if obs != nil {
						obs.CleanupLeader(leading)
					}
				},
			})
		},
	}
}
