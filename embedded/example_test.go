package embedded_test

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/embedded"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// A test starts a server, points its client at Addr, and makes the next
// GET_PRODUCER_OFFSETS fail as if storage were unavailable.
func Example() {
	ctx := context.Background()
	srv, err := embedded.Start(ctx, embedded.Config{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	srv.FailNext(1054, flusserr.StorageException, "injected")

	c, err := wire.Dial(ctx, srv.Addr(), wire.ClientOptions{})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	get := &messages.GetProducerOffsetsRequest{ProducerId: proto.String("job-1")}
	err = c.Call(ctx, 1054, 0, get, &messages.GetProducerOffsetsResponse{})
	fmt.Println("first GET:", err)
	err = c.Call(ctx, 1054, 0, get, &messages.GetProducerOffsetsResponse{})
	fmt.Println("second GET:", err)
	// Output:
	// first GET: STORAGE_EXCEPTION (26): injected
	// second GET: <nil>
}
