// Package fakecoord is an in-process fake Fluss coordinator for tests of
// proxy mode. It speaks the Fluss RPC protocol through wire.Server and
// serves:
//
//   - API_VERSIONS (1000) with its own list and server_type 1 (COORDINATOR);
//   - GET_METADATA (1012) naming itself (or Config.Advertised) as
//     coordinator, and one tablet server;
//   - AUTHENTICATE (1038): SASL PLAIN against Config.Users, or, with no
//     users, the PLAINTEXT protocol-mismatch answer;
//   - REGISTER/GET/DELETE_PRODUCER_OFFSETS (1053-1055) with answers a real
//     registry never gives for a fresh id (register always reports
//     ALREADY_EXISTS, get always names producer UpstreamProducerID), so a
//     test can tell that the upstream, not the sidecar, answered;
//   - admin keys LIST_DATABASES (1003), DATABASE_EXISTS (1004) and
//     GET_TABLE_INFO (1007) as opaque echoes: the SUCCESS body is the
//     request body, byte for byte;
//   - CREATE_DATABASE (1001) as an opaque write: its body is applied to a
//     Ledger (shared by the fakes of one cluster through Config.Ledger),
//     which counts how often each body was applied, and echoed.
//
// SetStandby makes the fake a coordinator that is not the leader: every
// request but API_VERSIONS and AUTHENTICATE is answered
// NOT_COORDINATOR_LEADER (65) before anything else runs, as a Fluss
// coordinator does, so nothing is applied.
//
// With Config.TabletServer it also runs a tablet-server side on a port of
// its own, which answers API_VERSIONS with server_type 2 (TABLET_SERVER),
// GET_METADATA and AUTHENTICATE, and is the tablet server GET_METADATA
// names, so that a client that checks server types can connect to every
// node the metadata names.
//
// Every request is recorded with the principal of its connection, and
// faults can be injected per api key: an error answer, a hold on a channel
// the test controls, an abrupt disconnect, or a SERVER_FAILURE frame.
package fakecoord

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"maps"
	"net"
	"strconv"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/authz"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// UpstreamProducerID is the producer_id of every GET_PRODUCER_OFFSETS answer
// of the fake.
const UpstreamProducerID = "from-upstream"

// ServerTypeCoordinator is the server_type the fake announces.
const ServerTypeCoordinator = int32(messages.ServerTypeCoordinator)

// ServerTypeTabletServer is the server_type its tablet-server side
// announces (Config.TabletServer).
const ServerTypeTabletServer = int32(messages.ServerTypeTabletServer)

// Config configures a fake coordinator. The zero value is usable.
type Config struct {
	// NodeID is the coordinator's node id in GET_METADATA (default 1).
	NodeID int32
	// Users is the SASL PLAIN user table, user to password. Empty means the
	// fake is a PLAINTEXT server: no authentication is required.
	Users map[string]string
	// Versions overrides the announced version range of some keys, as
	// [min, max]. Keys not listed use [0, 0]; GET_TABLE_INFO defaults to
	// [0, 1].
	Versions map[messages.Key][2]int32
	// Advertised is the host:port GET_METADATA names as coordinator, as a
	// Fluss coordinator names the advertised address of the listener a
	// request arrives on; empty names the fake's own address. Advertise
	// changes it.
	Advertised string
	// TabletServer runs the tablet-server side, which GET_METADATA then
	// names at its real address instead of an address nobody serves.
	TabletServer bool
	// Ledger records the writes (CREATE_DATABASE) the fake applies; fakes
	// that stand for the coordinators of one cluster share one. Nil: a
	// ledger of its own.
	Ledger *Ledger
	Logger hclog.Logger
}

// NotLeaderMessage is the message of the fake's answers 65, a Fluss
// coordinator's own.
const NotLeaderMessage = "This coordinator server is not the current leader."

// Ledger counts the writes applied by the fakes that share it, by body.
type Ledger struct {
	mu      sync.Mutex
	applied map[string]int
}

func (l *Ledger) apply(body []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.applied == nil {
		l.applied = map[string]int{}
	}
	l.applied[string(body)]++
}

// Applied returns a copy of how often each body was applied (nil before
// any write).
func (l *Ledger) Applied() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.applied)
}

// Request is one recorded request.
type Request struct {
	ConnID    uint64
	APIKey    messages.Key
	RequestID int32
	// Principal is the connection's principal when the request arrived:
	// the PLAIN user, or "" before authentication / on PLAINTEXT.
	Principal string
}

// Fault is injected into every request of one api key until cleared.
type Fault struct {
	// Entered, if set, receives the request (non-blocking if full) when it
	// arrives, before any other fault applies.
	Entered chan<- Request
	// Hold, if set, delays the request until Hold is closed or receives.
	Hold <-chan struct{}
	// Disconnect closes the client's socket abruptly instead of answering.
	Disconnect bool
	// ServerFailure writes a SERVER_FAILURE frame on the client's socket,
	// then closes it. Use it only with nothing else in flight on that
	// connection, or the frame may interleave with another answer.
	ServerFailure bool
	// Err, if set, is answered as an ERROR response.
	Err *flusserr.Error
}

// Coordinator is a running fake.
type Coordinator struct {
	cfg  Config
	srv  *wire.Server
	ln   net.Listener
	addr string
	port int32
	done chan struct{}

	tablet     *wire.Server // the tablet-server side, or nil
	tabletPort int32
	tabletDone chan struct{}

	mu         sync.Mutex
	standby    bool
	advertised string // Config.Advertised or Advertise
	faults     map[messages.Key]Fault
	requests   []Request
	conns      map[string]net.Conn // by remote address
}

// Start serves a fake coordinator on a fresh 127.0.0.1 port.
func Start(cfg Config) (*Coordinator, error) {
	if cfg.NodeID == 0 {
		cfg.NodeID = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Ledger == nil {
		cfg.Ledger = &Ledger{}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if cfg.Advertised != "" {
		if _, err := parseHostPort(cfg.Advertised); err != nil {
			return nil, err
		}
	}
	c := &Coordinator{
		cfg:        cfg,
		advertised: cfg.Advertised,
		addr:       ln.Addr().String(),
		port:       int32(ln.Addr().(*net.TCPAddr).Port),
		done:       make(chan struct{}),
		faults:     make(map[messages.Key]Fault),
		conns:      make(map[string]net.Conn),
	}
	c.ln = &trackingListener{Listener: ln, c: c}
	c.srv = wire.NewServer(wire.ServerConfig{
		Mux:     c.mux(),
		Logger:  cfg.Logger.Named("fakecoord"),
		Gate:    c.gate,
		Forward: wire.Forwarder{Call: c.echo},
		// Like a Fluss coordinator, run every request of a connection at
		// once: a test may hold some while others must still be served.
		MaxRunningPerConn: wire.DefaultMaxInFlightPerConn,
	})
	go func() {
		defer close(c.done)
		c.srv.Serve(context.Background(), c.ln)
	}()
	if cfg.TabletServer {
		if err := c.startTablet(); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

// startTablet serves the tablet-server side on a fresh 127.0.0.1 port.
func (c *Coordinator) startTablet() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	c.tabletPort = int32(ln.Addr().(*net.TCPAddr).Port)
	c.tabletDone = make(chan struct{})
	all := c.mux()
	var apis []wire.API
	for _, k := range []messages.Key{messages.KeyGetMetadata, messages.KeyAuthenticate} {
		a, _ := all.Lookup(k)
		apis = append(apis, a)
	}
	apis = append(apis, wire.API{
		Key: messages.KeyAPIVersions, Name: messages.KeyAPIVersions.Name(),
		NewRequest: func() proto.Message { return &messages.ApiVersionsRequest{} },
		Handle: func(context.Context, *wire.Session, *wire.Request) (proto.Message, error) {
			var vs []*messages.PbApiVersion
			for _, k := range []messages.Key{messages.KeyAPIVersions, messages.KeyGetMetadata, messages.KeyAuthenticate} {
				vs = append(vs, &messages.PbApiVersion{ApiKey: proto.Int32(int32(k)), MinVersion: proto.Int32(0), MaxVersion: proto.Int32(0)})
			}
			return &messages.ApiVersionsResponse{ApiVersions: vs, ServerType: proto.Int32(ServerTypeTabletServer)}, nil
		},
	})
	c.tablet = wire.NewServer(wire.ServerConfig{
		Mux:    wire.NewMux(apis...),
		Logger: c.cfg.Logger.Named("fakecoord-tablet"),
		Gate:   c.gate,
	})
	go func() {
		defer close(c.tabletDone)
		c.tablet.Serve(context.Background(), ln)
	}()
	return nil
}

// TabletAddr is the host:port of the tablet-server side; "" without
// Config.TabletServer.
func (c *Coordinator) TabletAddr() string {
	if c.tablet == nil {
		return ""
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(c.tabletPort)))
}

// Addr is the host:port the fake listens on.
func (c *Coordinator) Addr() string { return c.addr }

// Port is the port the fake listens on.
func (c *Coordinator) Port() int32 { return c.port }

// Advertise makes later GET_METADATA answers name addr (host:port) as
// coordinator; "" names the fake's own address again.
func (c *Coordinator) Advertise(addr string) error {
	if addr != "" {
		if _, err := parseHostPort(addr); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advertised = addr
	return nil
}

// coordinatorNode is the coordinator_server of GET_METADATA: the advertised
// address, or the fake's own.
func (c *Coordinator) coordinatorNode() *messages.PbServerNode {
	c.mu.Lock()
	addr := c.advertised
	c.mu.Unlock()
	if addr == "" {
		addr = c.addr
	}
	hp, _ := parseHostPort(addr)
	return &messages.PbServerNode{
		NodeId: proto.Int32(c.cfg.NodeID), Host: proto.String(hp.host), Port: proto.Int32(hp.port),
		Listeners: proto.String("CLIENT://" + addr),
	}
}

type hostPort struct {
	host string
	port int32
}

func parseHostPort(addr string) (hostPort, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return hostPort{}, fmt.Errorf("fakecoord: advertised address: %w", err)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return hostPort{}, fmt.Errorf("fakecoord: advertised address %q: port: %w", addr, err)
	}
	return hostPort{host, int32(p)}, nil
}

// NodeID is the coordinator's node id.
func (c *Coordinator) NodeID() int32 { return c.cfg.NodeID }

// Close stops the fake and closes every connection.
func (c *Coordinator) Close() {
	c.DisconnectAll()
	c.srv.Close()
	<-c.done
	if c.tablet != nil {
		c.tablet.Close()
		<-c.tabletDone
	}
}

// SetStandby makes the fake a standby coordinator (on) or the leader
// (off, the default).
func (c *Coordinator) SetStandby(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.standby = on
}

// Ledger is the ledger the fake applies its writes to.
func (c *Coordinator) Ledger() *Ledger { return c.cfg.Ledger }

// Inject sets the fault for key, replacing any previous one.
func (c *Coordinator) Inject(key messages.Key, f Fault) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults[key] = f
}

// Clear removes the fault for key.
func (c *Coordinator) Clear(key messages.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.faults, key)
}

// Requests returns a copy of every request recorded so far, in arrival
// order.
func (c *Coordinator) Requests() []Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Request(nil), c.requests...)
}

// RequestsFor returns the recorded requests of one api key.
func (c *Coordinator) RequestsFor(key messages.Key) []Request {
	var out []Request
	for _, r := range c.Requests() {
		if r.APIKey == key {
			out = append(out, r)
		}
	}
	return out
}

// OpenConns is the number of client connections currently open.
func (c *Coordinator) OpenConns() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

// DisconnectAll closes every client socket abruptly.
func (c *Coordinator) DisconnectAll() {
	c.mu.Lock()
	conns := make([]net.Conn, 0, len(c.conns))
	for _, nc := range c.conns {
		conns = append(conns, nc)
	}
	c.mu.Unlock()
	for _, nc := range conns {
		nc.Close()
	}
}

// trackingListener remembers accepted sockets so faults can cut them.
type trackingListener struct {
	net.Listener
	c *Coordinator
}

func (l *trackingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: nc, c: l.c}
	l.c.mu.Lock()
	l.c.conns[nc.RemoteAddr().String()] = tc
	l.c.mu.Unlock()
	return tc, nil
}

type trackedConn struct {
	net.Conn
	c    *Coordinator
	once sync.Once
}

func (t *trackedConn) Close() error {
	t.once.Do(func() {
		t.c.mu.Lock()
		delete(t.c.conns, t.RemoteAddr().String())
		t.c.mu.Unlock()
	})
	return t.Conn.Close()
}

func (c *Coordinator) conn(s *wire.Session) net.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns[s.RemoteAddr.String()]
}

// errDropped answers a request whose connection the fault has cut; nobody
// reads the answer.
var errDropped = errors.New("fakecoord: connection cut by an injected fault")

// gate records the request, applies its fault and enforces authentication.
func (c *Coordinator) gate(ctx context.Context, s *wire.Session, h wire.RequestHeader) error {
	r := Request{ConnID: s.ConnID, APIKey: h.APIKey, RequestID: h.RequestID, Principal: s.Principal()}
	c.mu.Lock()
	c.requests = append(c.requests, r)
	f, hasFault := c.faults[h.APIKey]
	standby := c.standby
	c.mu.Unlock()
	if standby && h.APIKey != messages.KeyAPIVersions && h.APIKey != messages.KeyAuthenticate {
		return (&apierr.Error{Class: apierr.ErrNotLeader, Detail: NotLeaderMessage}).Fluss()
	}
	if hasFault {
		if f.Entered != nil {
			select {
			case f.Entered <- r:
			default:
			}
		}
		if f.Hold != nil {
			select {
			case <-f.Hold:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if f.ServerFailure {
			if nc := c.conn(s); nc != nil {
				a := apierr.Of(errors.New("fakecoord: injected server failure"))
				nc.Write(wire.AppendServerFailure(nil, a.Code, a.Message))
				nc.Close()
			}
			return errDropped
		}
		if f.Disconnect {
			if nc := c.conn(s); nc != nil {
				nc.Close()
			}
			return errDropped
		}
		if f.Err != nil {
			return f.Err
		}
	}
	if len(c.cfg.Users) > 0 && h.APIKey != messages.KeyAPIVersions && h.APIKey != messages.KeyAuthenticate && !s.Authenticated() {
		return &apierr.Error{Class: apierr.ErrNotAuthenticated, Detail: "The connection has not completed authentication yet."}
	}
	return nil
}

func (c *Coordinator) versions() []*messages.PbApiVersion {
	keys := []messages.Key{
		messages.KeyAPIVersions, messages.KeyCreateDatabase, messages.KeyListDatabases, messages.KeyDatabaseExists, messages.KeyGetTableInfo,
		messages.KeyGetMetadata, messages.KeyAuthenticate,
		messages.KeyRegisterProducerOffsets, messages.KeyGetProducerOffsets, messages.KeyDeleteProducerOffsets,
	}
	var out []*messages.PbApiVersion
	for _, k := range keys {
		r := [2]int32{0, 0}
		if k == messages.KeyGetTableInfo {
			r = [2]int32{0, 1}
		}
		if v, ok := c.cfg.Versions[k]; ok {
			r = v
		}
		out = append(out, &messages.PbApiVersion{
			ApiKey: proto.Int32(int32(k)), MinVersion: proto.Int32(r[0]), MaxVersion: proto.Int32(r[1]),
		})
	}
	return out
}

func (c *Coordinator) mux() *wire.Mux {
	api := func(key messages.Key, newReq func() proto.Message, h wire.Handler) wire.API {
		max := int16(0)
		if v, ok := c.cfg.Versions[key]; ok {
			max = int16(v[1])
		}
		return wire.API{Key: key, Name: key.Name(), MaxVersion: max, NewRequest: newReq, Handle: h}
	}
	return wire.NewMux(
		api(messages.KeyAPIVersions, func() proto.Message { return &messages.ApiVersionsRequest{} },
			func(context.Context, *wire.Session, *wire.Request) (proto.Message, error) {
				return &messages.ApiVersionsResponse{ApiVersions: c.versions(), ServerType: proto.Int32(ServerTypeCoordinator)}, nil
			}),
		api(messages.KeyGetMetadata, func() proto.Message { return &messages.MetadataRequest{} },
			func(context.Context, *wire.Session, *wire.Request) (proto.Message, error) {
				return c.Metadata(), nil
			}),
		api(messages.KeyAuthenticate, func() proto.Message { return &messages.AuthenticateRequest{} }, c.authenticate),
		api(messages.KeyRegisterProducerOffsets, func() proto.Message { return &messages.RegisterProducerOffsetsRequest{} },
			func(context.Context, *wire.Session, *wire.Request) (proto.Message, error) {
				return &messages.RegisterProducerOffsetsResponse{Result: proto.Int32(1)}, nil
			}),
		api(messages.KeyGetProducerOffsets, func() proto.Message { return &messages.GetProducerOffsetsRequest{} },
			func(context.Context, *wire.Session, *wire.Request) (proto.Message, error) {
				return &messages.GetProducerOffsetsResponse{ProducerId: proto.String(UpstreamProducerID), ExpirationTime: proto.Int64(1)}, nil
			}),
		api(messages.KeyDeleteProducerOffsets, func() proto.Message { return &messages.DeleteProducerOffsetsRequest{} },
			func(context.Context, *wire.Session, *wire.Request) (proto.Message, error) {
				return &messages.DeleteProducerOffsetsResponse{}, nil
			}),
	)
}

// Metadata is the fake's GET_METADATA answer: itself (or the address of
// Config.Advertised or Advertise) as coordinator, and a tablet server with
// node id NodeID+100: its tablet-server side with Config.TabletServer, else
// at port 1 (never dialled by tests).
func (c *Coordinator) Metadata() *messages.MetadataResponse {
	if c.tablet != nil {
		addr := c.TabletAddr()
		return &messages.MetadataResponse{
			CoordinatorServer: c.coordinatorNode(),
			TabletServers: []*messages.PbServerNode{{
				NodeId: proto.Int32(c.cfg.NodeID + 100), Host: proto.String("127.0.0.1"), Port: proto.Int32(c.tabletPort),
				Listeners: proto.String("CLIENT://" + addr), Rack: proto.String("rack-a"),
			}},
		}
	}
	return &messages.MetadataResponse{
		CoordinatorServer: c.coordinatorNode(),
		TabletServers: []*messages.PbServerNode{{
			NodeId: proto.Int32(c.cfg.NodeID + 100), Host: proto.String("127.0.0.1"), Port: proto.Int32(1),
			Listeners: proto.String("CLIENT://127.0.0.1:1"), Rack: proto.String("rack-a"),
		}},
	}
}

// authenticate implements SASL PLAIN for a fake with users, and the
// PLAINTEXT mismatch answer otherwise.
func (c *Coordinator) authenticate(_ context.Context, s *wire.Session, req *wire.Request) (proto.Message, error) {
	r := req.Msg.(*messages.AuthenticateRequest)
	if len(c.cfg.Users) == 0 {
		return nil, &apierr.Error{Class: apierr.ErrProtocolMismatch, ServerProtocol: "PLAINTEXT", ClientProtocol: r.GetProtocol()}
	}
	if r.GetProtocol() != "PLAIN" {
		return nil, &apierr.Error{Class: apierr.ErrNotAuthenticated,
			Detail: "SASL server enables [PLAIN] while protocol of client is '" + r.GetProtocol() + "'"}
	}
	if s.Authenticated() {
		return &messages.AuthenticateResponse{}, nil
	}
	tok, err := authz.ParsePlainToken(r.GetToken())
	if err != nil {
		return nil, &apierr.Error{Class: apierr.ErrNotAuthenticated, Detail: err.Error()}
	}
	want, ok := c.cfg.Users[tok.User]
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(tok.Password)) != 1 {
		return nil, &apierr.Error{Class: apierr.ErrNotAuthenticated, Detail: "Authentication failed: Invalid username or password"}
	}
	s.SetIdentity(tok.User, true)
	return &messages.AuthenticateResponse{Challenge: []byte{}}, nil
}

// echo answers the opaque admin keys with their request body, and any other
// key with UNSUPPORTED_VERSION (a real server would drop it silently, which
// would only hang a test).
func (c *Coordinator) echo(_ context.Context, _ *wire.Session, h wire.RequestHeader, body []byte) (wire.Response, error) {
	switch h.APIKey {
	case messages.KeyListDatabases, messages.KeyDatabaseExists, messages.KeyGetTableInfo:
		return wire.Response{Type: wire.ResponseSuccess, Body: body}, nil
	case messages.KeyCreateDatabase:
		c.cfg.Ledger.apply(body)
		return wire.Response{Type: wire.ResponseSuccess, Body: body}, nil
	}
	return wire.Response{}, &apierr.Error{Class: apierr.ErrNotServed, APIKey: int32(h.APIKey), APIVersion: h.APIVersion}
}
