package lincheck

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/hdfstest"
)

// remoteEnv chooses the remote.data.dir of every scenario: "hdfs" puts it
// on the test binary's HDFS minicluster (internal/hdfstest, one per
// binary); unset, a local directory.
const remoteEnv = "LINCHECK_REMOTE"

// remoteDataDir is a fresh remote.data.dir for one scenario.
func remoteDataDir(t *testing.T) string {
	switch v := os.Getenv(remoteEnv); v {
	case "", "file":
		return "file://" + t.TempDir()
	case "hdfs":
		name := strings.NewReplacer("/", "_", " ", "_", ":", "_").Replace(t.Name())
		dir := hdfstest.Shared(t).URL(fmt.Sprintf("/lincheck/%s-%d", name, time.Now().UnixNano()))
		t.Logf("remote.data.dir %s (%s=hdfs)", dir, remoteEnv)
		return dir
	default:
		t.Fatalf("%s=%q: want hdfs, file or unset", remoteEnv, v)
		return ""
	}
}
