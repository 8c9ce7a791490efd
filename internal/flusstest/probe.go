package flusstest

import (
	"context"
	"time"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// tabletCount asks the coordinator at addr (a PLAINTEXT listener) for
// GET_METADATA and returns how many tablet servers it names.
func tabletCount(ctx context.Context, addr string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	if _, err := cl.Handshake(ctx); err != nil {
		return 0, err
	}
	resp := &messages.MetadataResponse{}
	if err := cl.Call(ctx, messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, resp); err != nil {
		return 0, err
	}
	return len(resp.GetTabletServers()), nil
}
