// Package strictclient is a test client that checks a server's type the
// way Fluss clients do, so that tests can prove every endpoint the sidecar
// names answers as what it is named:
//
//   - as fluss-go does: every API_VERSIONS answer must carry server_type,
//     1 (COORDINATOR) or 2 (TABLET_SERVER), and it must be the type the
//     client meant to reach; the bootstrap addresses are coordinators;
//   - as Fluss's Java client does: a connection whose answered type
//     differs from the type of the node it was opened for is closed.
//
// Bootstrap does what both do at start: connect to a bootstrap address as
// a coordinator, ask GET_METADATA for the coordinator and the alive tablet
// servers (at least one), and connect to each, checking its type. SASL
// PLAIN logins follow API_VERSIONS, as in both clients.
package strictclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// ErrServerType is wrapped by every refusal of a server's type.
var ErrServerType = errors.New("strictclient: unexpected server type")

// Options say how to log in.
type Options struct {
	// User and Password log in with SASL PLAIN after API_VERSIONS; an empty
	// User connects PLAINTEXT.
	User, Password string
}

// Conn is a connection whose server answered with the expected type.
type Conn struct {
	*wire.Client
	Addr string
	// Type is the server_type the server answered.
	Type messages.ServerType
	// Versions is its API_VERSIONS answer.
	Versions *messages.ApiVersionsResponse
}

// Serves reports whether the server listed key in API_VERSIONS.
func (c *Conn) Serves(key messages.Key) bool {
	for _, v := range c.Versions.GetApiVersions() {
		if v.GetApiKey() == int32(key) {
			return true
		}
	}
	return false
}

// CheckType is the type check on one API_VERSIONS answer: an absent or
// unknown server_type is refused (fluss-go), and so is one that is not
// want (both clients; Java then closes the connection).
func CheckType(av *messages.ApiVersionsResponse, want messages.ServerType) (messages.ServerType, error) {
	if av.ServerType == nil {
		return 0, fmt.Errorf("%w: the API_VERSIONS answer has no server_type, want %v", ErrServerType, want)
	}
	got := messages.ServerType(av.GetServerType())
	if got != messages.ServerTypeCoordinator && got != messages.ServerTypeTabletServer {
		return got, fmt.Errorf("%w: %d, want %v", ErrServerType, av.GetServerType(), want)
	}
	if got != want {
		return got, fmt.Errorf("%w: %v, want %v", ErrServerType, got, want)
	}
	return got, nil
}

// Connect opens a connection to addr meant for a server of type want: the
// API_VERSIONS handshake, the type check (a refused type closes the
// connection), then the login when opts has a user.
func Connect(ctx context.Context, addr string, want messages.ServerType, opts Options) (*Conn, error) {
	c, err := wire.Dial(ctx, addr, wire.ClientOptions{})
	if err != nil {
		return nil, err
	}
	av, err := c.Handshake(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("API_VERSIONS at %s: %w", addr, err)
	}
	got, err := CheckType(av, want)
	if err != nil {
		c.Close() // as Java's client does on a mismatch
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	if opts.User != "" {
		tok := append(append(append([]byte{0}, opts.User...), 0), opts.Password...)
		req := &messages.AuthenticateRequest{Protocol: proto.String("PLAIN"), Token: tok}
		if err := c.Call(ctx, messages.KeyAuthenticate, 0, req, &messages.AuthenticateResponse{}); err != nil {
			c.Close()
			return nil, fmt.Errorf("AUTHENTICATE at %s: %w", addr, err)
		}
	}
	return &Conn{Client: c, Addr: addr, Type: got, Versions: av}, nil
}

// Cluster is what Bootstrap found and connected to.
type Cluster struct {
	Metadata    *messages.MetadataResponse
	Coordinator *Conn
	Tablets     []*Conn
}

// Close closes every connection.
func (c *Cluster) Close() {
	if c.Coordinator != nil {
		c.Coordinator.Close()
	}
	for _, t := range c.Tablets {
		t.Close()
	}
}

// Bootstrap connects to bootstrap as a coordinator, reads GET_METADATA and
// connects to the coordinator and every tablet server it names, each with
// its type checked. GET_METADATA must name a coordinator and at least one
// tablet server, as Java's client requires. The bootstrap connection is
// closed once the metadata is read.
func Bootstrap(ctx context.Context, bootstrap string, opts Options) (*Cluster, error) {
	seed, err := Connect(ctx, bootstrap, messages.ServerTypeCoordinator, opts)
	if err != nil {
		return nil, fmt.Errorf("bootstrap: %w", err)
	}
	md := &messages.MetadataResponse{}
	err = seed.Call(ctx, messages.KeyGetMetadata, 0, &messages.MetadataRequest{}, md)
	seed.Close()
	if err != nil {
		return nil, fmt.Errorf("bootstrap: GET_METADATA at %s: %w", bootstrap, err)
	}
	if md.CoordinatorServer == nil {
		return nil, errors.New("bootstrap: GET_METADATA names no coordinator")
	}
	if len(md.GetTabletServers()) == 0 {
		return nil, errors.New("bootstrap: GET_METADATA names no alive tablet server")
	}
	cl := &Cluster{Metadata: md}
	cl.Coordinator, err = Connect(ctx, address(md.GetCoordinatorServer()), messages.ServerTypeCoordinator, opts)
	if err != nil {
		return nil, fmt.Errorf("coordinator %d: %w", md.GetCoordinatorServer().GetNodeId(), err)
	}
	for _, n := range md.GetTabletServers() {
		t, err := Connect(ctx, address(n), messages.ServerTypeTabletServer, opts)
		if err != nil {
			cl.Close()
			return nil, fmt.Errorf("tablet server %d: %w", n.GetNodeId(), err)
		}
		cl.Tablets = append(cl.Tablets, t)
	}
	return cl, nil
}

func address(n *messages.PbServerNode) string {
	return net.JoinHostPort(n.GetHost(), strconv.Itoa(int(n.GetPort())))
}
