package strictclient

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// TestCheckType: absent and unknown types are refused (fluss-go), and so is
// the other known type (both clients).
func TestCheckType(t *testing.T) {
	for _, tt := range []struct {
		name string
		typ  *int32
		want messages.ServerType
		ok   bool
	}{
		{"coordinator", proto.Int32(1), messages.ServerTypeCoordinator, true},
		{"tablet server", proto.Int32(2), messages.ServerTypeTabletServer, true},
		{"absent", nil, messages.ServerTypeCoordinator, false},
		{"zero", proto.Int32(0), messages.ServerTypeCoordinator, false},
		{"unknown", proto.Int32(3), messages.ServerTypeTabletServer, false},
		{"tablet server for a coordinator", proto.Int32(2), messages.ServerTypeCoordinator, false},
		{"coordinator for a tablet server", proto.Int32(1), messages.ServerTypeTabletServer, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CheckType(&messages.ApiVersionsResponse{ServerType: tt.typ}, tt.want)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrServerType)) {
				t.Fatalf("CheckType: %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestConnectClosesOnAMismatch: a connection to a server of the wrong type
// is refused and closed, as Java's client closes it.
func TestConnectClosesOnAMismatch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{}, 1)
	srv := wire.NewServer(wire.ServerConfig{
		Mux: wire.NewMux(wire.API{
			Key: messages.KeyAPIVersions, Name: "API_VERSIONS",
			NewRequest: func() proto.Message { return &messages.ApiVersionsRequest{} },
			Handle: func(context.Context, *wire.Session, *wire.Request) (proto.Message, error) {
				return &messages.ApiVersionsResponse{ServerType: messages.ServerTypeTabletServer.Int32()}, nil
			},
		}),
		Observer: closeObserver(closed),
	})
	go srv.Serve(context.Background(), ln)
	t.Cleanup(func() { srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := Connect(ctx, ln.Addr().String(), messages.ServerTypeCoordinator, Options{}); !errors.Is(err, ErrServerType) {
		t.Fatalf("Connect to a tablet server as a coordinator: %v", err)
	}
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("the refused connection was not closed")
	}
	c, err := Connect(ctx, ln.Addr().String(), messages.ServerTypeTabletServer, Options{})
	if err != nil {
		t.Fatalf("Connect to a tablet server as one: %v", err)
	}
	c.Close()
}

type closeObserver chan struct{}

func (closeObserver) ConnAccepted(string)                            {}
func (closeObserver) ConnRefused(string, string)                     {}
func (o closeObserver) ConnClosed(string)                            { o <- struct{}{} }
func (closeObserver) RequestStarted(string, wire.RequestHeader, int) {}
func (closeObserver) RequestDone(string, wire.RequestDone)           {}
