package lincheck

import (
	"strings"
	"testing"

	"github.com/fluss-sidecar/fluss-sidecar/internal/hdfstest"
)

// remoteEnv chooses the remote.data.dir of every scenario: "hdfs" puts it
// on the test binary's HDFS minicluster (internal/hdfstest, one per
// binary); unset, a local directory.
const remoteEnv = "LINCHECK_REMOTE"

// remoteDataDir is a fresh remote.data.dir for one scenario, each under
// its own folder named after the test.
func remoteDataDir(t *testing.T) string {
	name := strings.NewReplacer("/", "_", " ", "_", ":", "_").Replace(t.Name())
	return hdfstest.RemoteDataDir(t, remoteEnv, "/lincheck/"+name)
}
