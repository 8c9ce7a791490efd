package app

import (
	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/remote"
)

// RemoteOptions are the remote store options the settings describe, for
// the server and for the admin commands alike.
func (s Settings) RemoteOptions(log hclog.Logger) remote.Options {
	return remote.Options{
		S3Endpoint: s.S3Endpoint, S3Region: s.S3Region, S3AccessKey: s.S3AccessKey,
		S3SecretKey: s.S3SecretKey, S3PathStyle: s.S3PathStyle, Logger: log,
	}
}
