package wire

import (
	"context"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/messages"
)

// Handler serves one request: the one shape of every served API. It
// returns the response message for a SUCCESS answer, or an error: a
// *flusserr.Error (possibly wrapped) becomes an ERROR response with its code
// and message, anything else becomes UNKNOWN_SERVER_ERROR (-1) with the
// error text. ctx is cancelled when the connection closes.
type Handler func(ctx context.Context, s *Session, r *Request) (proto.Message, error)

// Request is one request as its Handler sees it.
type Request struct {
	// Version is the request's api version, within the API's range.
	Version int16
	// RequestID is the id the client gave the request, unique among its
	// connection's requests in flight.
	RequestID int32
	// Body is the request's body, the request's own copy.
	Body []byte
	// Msg is the body decoded into a message of API.NewRequest, or nil
	// for an API with RawBody set.
	Msg proto.Message
}

// API is one served api key: its versions, how to make an empty request
// message to decode into, and how a request is served: by Handle, and
// first, if set, by the Quick path on the connection's reader goroutine.
type API struct {
	Key        messages.Key
	Name       string
	MinVersion int16
	MaxVersion int16
	// NewRequest returns a fresh, empty request message.
	NewRequest func() proto.Message
	// Handle serves every request of a supported version that Quick does
	// not answer, errors included.
	Handle Handler
	// RawBody leaves decoding to Handle (Request.Msg is nil): for an API
	// whose requests can be large, so that it can decode them into
	// something smaller than the generated message. It can use DecodeBody
	// for requests it does not read itself.
	RawBody bool
	// Quick, if set, answers requests from memory before Handle; see
	// Quick.
	Quick Quick
	// Subject, if set, names what each request is about in its log line
	// and RequestDone; see Subject.
	Subject Subject
}

// Quick is an API's fast path: answers from memory, built on the
// connection's reader goroutine straight into the response frame, without
// a goroutine or a decoded message. Answer set alone answers at once;
// with Wait, a request may first be parked until a condition is met.
type Quick struct {
	// Answer is offered each request of a supported version first, on the
	// connection's reader goroutine, after the Gate: it answers from
	// memory, or declines. It must not block or wait for I/O. It appends
	// the encoded SUCCESS body to dst and returns it with ok=true, or
	// returns ok=false (anything it appended is discarded) to have the
	// request served as usual by Handle, which gives the answers to every
	// request Answer cannot serve, errors included. An Answer must equal
	// the one Handle would give. subject names the request as
	// API.Subject does (untrimmed; the server bounds it). Answer may not
	// keep body or dst.
	Answer func(s *Session, version int16, body, dst []byte) (answer []byte, subject string, ok bool)
	// Wait, if set with Answer, is asked on the reader goroutine, after
	// the Gate and before Answer, whether Answer must wait before it may
	// answer the request (for an answer from memory that must first be
	// confirmed current, such as a linearizable read). Nil: Answer is
	// offered the request at once. Otherwise the request takes an
	// in-flight slot and waits until the Waiter is done (or the connection
	// ends), parked with every other request waiting for the same Waiter
	// (compared with ==, so a Waiter must be comparable, such as a
	// pointer), and is then offered Answer if the wait succeeded; whatever
	// Answer declines, or a failed wait, is served by Handle. It must not
	// block, and may not keep body.
	Wait func(s *Session, version int16, body []byte) Waiter
}

// Subject is how an API names what a request is about (such as the
// producer a request reads or writes), for the request's log line and
// RequestDone.Subject. The server knows no message field: it logs Of's
// answer under Key, bounded as flusserr.Echo does. Of is asked just
// before Handle, once the body decoded (Request.Msg is then set unless
// RawBody), and may not keep the Request; "" names nothing.
type Subject struct {
	Key string
	Of  func(r *Request) string
}

// Waiter is a condition a request waits for (Quick.Wait). Done is closed
// once it settled; Err then is nil if it was met.
type Waiter interface {
	Done() <-chan struct{}
	Err() error
}

// AfterDoner is a Waiter that runs a function once it settled, on the
// goroutine that settles it (or at once if it has); readindex.Round is
// one. The server then answers the requests parked on it from there,
// instead of from a goroutine of its own that waits for Done: one
// goroutine and one wake-up fewer per round.
type AfterDoner interface {
	AfterDone(fn func())
}

// arrivalKey is the context key under which a handler finds when its
// request was read.
type arrivalKey struct{}

// Arrival returns when the request a Handle call serves was read from the
// connection.
func Arrival(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(arrivalKey{}).(*time.Time)
	if !ok {
		return time.Time{}, false
	}
	return *t, true
}

// handlerCtx is the context of one Handle call: the connection's context
// and when the request arrived (Arrival), in one allocation. The Request
// is not in it: a handler that has decoded a large body into something
// smaller lets go of the Request, and so of the body, while the context
// lives on.
type handlerCtx struct {
	context.Context
	arrival time.Time
}

func (c *handlerCtx) Value(key any) any {
	if key == (arrivalKey{}) {
		return &c.arrival
	}
	return c.Context.Value(key)
}

// String is "NAME(key)", or "api key <key>" when the API has no name.
func (a API) String() string {
	if a.Name == "" {
		return fmt.Sprintf("api key %d", a.Key)
	}
	return fmt.Sprintf("%s(%d)", a.Name, a.Key)
}

// Mux is the registry of served APIs. It is built once and read-only after
// construction, so one Mux may back several servers.
type Mux struct {
	byKey  map[messages.Key]*API // each its own copy, never changed: requests point at it
	sorted []API
	// elsewhere holds keys this server does not serve because another
	// server type does, with what to tell a client that sends one here
	// (WithElsewhere).
	elsewhere map[messages.Key]string
}

// NewMux builds a registry from apis. It panics on a duplicate key, a
// missing NewRequest or Handle, or MinVersion > MaxVersion: those are
// programming errors that should fail at start-up.
func NewMux(apis ...API) *Mux {
	m := &Mux{byKey: make(map[messages.Key]*API, len(apis))}
	for _, a := range apis {
		if _, dup := m.byKey[a.Key]; dup {
			panic(fmt.Sprintf("wire: duplicate API key %d", a.Key))
		}
		if a.NewRequest == nil || a.Handle == nil {
			panic(fmt.Sprintf("wire: %v needs NewRequest and Handle", a))
		}
		if a.Quick.Wait != nil && a.Quick.Answer == nil {
			panic(fmt.Sprintf("wire: %v has a Quick.Wait without a Quick.Answer", a))
		}
		if a.Subject.Of != nil && a.Subject.Key == "" {
			panic(fmt.Sprintf("wire: %v has a Subject without a Key", a))
		}
		if a.MinVersion > a.MaxVersion || a.MinVersion < 0 {
			panic(fmt.Sprintf("wire: %v has invalid version range [%d,%d]", a, a.MinVersion, a.MaxVersion))
		}
		m.byKey[a.Key] = &a
		m.sorted = append(m.sorted, a)
	}
	sort.Slice(m.sorted, func(i, j int) bool { return m.sorted[i].Key < m.sorted[j].Key })
	return m
}

// WithoutQuick returns a registry of the same APIs with their Quick paths
// removed, for a server whose Gate may block (see ServerConfig.Gate).
func (m *Mux) WithoutQuick() *Mux {
	apis := m.Versions()
	for i := range apis {
		apis[i].Quick = Quick{}
	}
	out := NewMux(apis...)
	out.elsewhere = m.elsewhere
	return out
}

// Wrapped returns a registry of the same APIs, Quick paths removed (as
// WithoutQuick), in which every request is served by wrap(api): a layer
// that runs around each API's Handle, such as fault injection that needs the
// decoded request or the handler's outcome. wrap is called once per API,
// here.
func (m *Mux) Wrapped(wrap func(api API) Handler) *Mux {
	apis := m.Versions()
	for i := range apis {
		apis[i].Quick = Quick{}
		apis[i].Handle = wrap(apis[i])
	}
	out := NewMux(apis...)
	out.elsewhere = m.elsewhere
	return out
}

// WithElsewhere returns a registry of the same APIs that answers each of
// keys with UNSUPPORTED_VERSION and a message naming the key followed by
// where, such as "it is served by the coordinator", instead of the bare
// "not served" answer: for a server that stands for one server type and
// receives a key another type serves. The keys are not listed by Versions,
// so API_VERSIONS does not advertise them. It panics on a key the registry
// serves, a programming error.
func (m *Mux) WithElsewhere(keys []messages.Key, where string) *Mux {
	out := NewMux(m.Versions()...)
	out.elsewhere = make(map[messages.Key]string, len(m.elsewhere)+len(keys))
	for k, v := range m.elsewhere {
		out.elsewhere[k] = v
	}
	for _, k := range keys {
		if _, served := out.byKey[k]; served {
			panic(fmt.Sprintf("wire: %v is served here and cannot be elsewhere", *out.byKey[k]))
		}
		out.elsewhere[k] = where
	}
	return out
}

// Elsewhere returns the answer for a key WithElsewhere named: the message
// of its UNSUPPORTED_VERSION error.
func (m *Mux) Elsewhere(key messages.Key, version int16) (message string, ok bool) {
	if m == nil {
		return "", false
	}
	where, ok := m.elsewhere[key]
	if !ok {
		return "", false
	}
	return fmt.Sprintf("The server does not support %s(%d) version %d: %s.", key.Name(), key, version, where), true
}

// Lookup returns the API registered for key.
func (m *Mux) Lookup(key messages.Key) (API, bool) {
	if m == nil {
		return API{}, false
	}
	if a, ok := m.byKey[key]; ok {
		return *a, true
	}
	return API{}, false
}

// find is Lookup without the copy: the server's per-request path points at
// the registry's own API (a copy it took the address of would be an
// allocation per request).
func (m *Mux) find(key messages.Key) (*API, bool) {
	if m == nil {
		return nil, false
	}
	a, ok := m.byKey[key]
	return a, ok
}

// Versions returns every registered API sorted by key, for building an
// API_VERSIONS answer. The slice is a copy.
func (m *Mux) Versions() []API {
	if m == nil {
		return nil
	}
	return append([]API(nil), m.sorted...)
}

// Session holds the facts about one client connection. The fixed fields are
// set before the first request and never change; the identity fields are
// set by the security layer and guarded by a mutex because requests on one
// connection run concurrently.
type Session struct {
	ConnID       uint64
	RemoteAddr   net.Addr
	LocalAddr    net.Addr
	ListenerName string

	// Attrs holds per-connection values of other layers, keyed by a type
	// they own.
	Attrs sync.Map

	mu        sync.Mutex
	principal string
	// clientName and clientVersion are what the last API_VERSIONS request
	// said, bounded (SetClientSoftware).
	clientName, clientVersion string
	// authenticated is written under mu, together with principal, and
	// read without it: the Gate asks it on every request.
	authenticated atomic.Bool

	// closeWhenIdle is set by the server that owns the connection.
	closeWhenIdle func()
	// closeNow is set by the server that owns the connection.
	closeNow func()
}

// Close cancels the connection's requests in flight and closes it at once.
// Security layers use it, for example to end a connection that did not
// authenticate in time. It is safe to call more than once and does nothing
// on a Session that no Server owns.
func (s *Session) Close() {
	if s.closeNow != nil {
		s.closeNow()
	}
}

// CloseWhenIdle stops reading requests from the connection: the requests
// already read are still answered, then the connection closes. It is for
// layers that learn the connection is no longer usable, such as a proxy
// whose upstream connection failed. It is safe to call more than once and
// does nothing on a Session that no Server owns.
func (s *Session) CloseWhenIdle() {
	if s.closeWhenIdle != nil {
		s.closeWhenIdle()
	}
}

// Principal returns the connection's principal, or "" if none is set.
func (s *Session) Principal() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.principal
}

// SetPrincipal sets the connection's principal.
func (s *Session) SetPrincipal(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.principal = p
}

// Authenticated reports whether authentication has completed.
func (s *Session) Authenticated() bool {
	return s.authenticated.Load()
}

// SetAuthenticated records whether authentication has completed.
func (s *Session) SetAuthenticated(ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authenticated.Store(ok)
}

// Identity returns the principal and authentication state together.
func (s *Session) Identity() (principal string, authenticated bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.principal, s.authenticated.Load()
}

// SetIdentity sets the principal and authentication state together.
func (s *Session) SetIdentity(principal string, authenticated bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.principal = principal
	s.authenticated.Store(authenticated)
}

// GateFunc runs before every request, after the header is read and before
// the api key is looked up. A non-nil error is answered instead of running
// the request, with the same error mapping as a handler error.
type GateFunc func(ctx context.Context, s *Session, h RequestHeader) error

// ConnectFunc runs once per connection, after it is accepted and before its
// first request is read. ctx is cancelled when the connection closes. It
// must not block: start a goroutine or a timer for work that waits.
type ConnectFunc func(ctx context.Context, s *Session)

// Forwarder passes on the requests whose api key the Mux does not hold
// (proxy mode): the one way a request is forwarded. Call serves each such
// request on a goroutine of its own; Try, if set, is offered it first on
// the connection's reader goroutine, so that requests pass on without a
// goroutine each.
type Forwarder struct {
	// Call passes one request on and returns the whole answer. The
	// returned Response's Type must be ResponseSuccess or ResponseError
	// and its Body is sent unchanged under the request's own id
	// (Response.RequestID is ignored). A returned error is answered like a
	// handler error. Nil: requests Try declines are answered unsupported.
	Call func(ctx context.Context, s *Session, h RequestHeader, body []byte) (Response, error)
	// Try is offered each request whose api key the Mux does not hold,
	// after the Gate admitted it, on the reader goroutine; it must not
	// block. It returns true when it takes the request: it then answers
	// it exactly once through reply, from any goroutine, and may keep
	// body. It returns false to decline: the request then goes to Call
	// on a goroutine of its own, without running the Gate again. reply is
	// the same for every request of one connection. Try may hold taken
	// requests back to send several at once, until Flush.
	Try func(s *Session, h RequestHeader, body []byte, reply *Replier) bool
	// Flush, if set, is called on the reader goroutine whenever the
	// reader is about to wait, for the network or for an in-flight slot:
	// whatever Try held back must go out now. It must not block.
	Flush func(s *Session)
}
