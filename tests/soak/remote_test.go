package soak

import (
	"context"
	"testing"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/internal/hdfstest"
	"github.com/fluss-sidecar/fluss-sidecar/storage/remotestore"
)

// remoteEnv chooses the run's remote.data.dir: "hdfs" puts it on an HDFS
// minicluster (internal/hdfstest); unset, a local directory.
const remoteEnv = "SOAK_REMOTE"

// remoteDataDir is the run's remote.data.dir, a file:// or hdfs:// URL.
func remoteDataDir(t *testing.T) string {
	t.Cleanup(hdfstest.StopShared)
	return hdfstest.RemoteDataDir(t, remoteEnv, "/soak")
}

// countRemoteFiles counts the files in the producer directories of an
// hdfs:// remote.data.dir, as the sidecars list them.
func countRemoteFiles(dir string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := remotestore.Open(ctx, dir, remotestore.Options{})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	ids, err := s.ListProducerDirs(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		files, err := s.ListProducerFiles(ctx, id)
		if err != nil {
			return 0, err
		}
		n += len(files)
	}
	return n, nil
}
