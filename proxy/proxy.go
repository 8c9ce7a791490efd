package proxy

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/proto"

	"github.com/fluss-sidecar/fluss-sidecar/apierr"
	"github.com/fluss-sidecar/fluss-sidecar/flusserr"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
)

// DefaultConnectTimeout bounds dialling the upstream plus its API_VERSIONS
// and AUTHENTICATE round trips.
const DefaultConnectTimeout = 10 * time.Second

// Defaults of the fail-over settings (see Config.MaxResends).
const (
	DefaultMaxResends    = 5
	DefaultResendTimeout = 30 * time.Second
	DefaultResendBackoff = 250 * time.Millisecond
	// NoResends as Config.MaxResends turns resending off: every answer
	// NOT_COORDINATOR_LEADER goes to the client as it came.
	NoResends = -1
)

// Config configures a Proxy.
type Config struct {
	// Upstream says where the coordinator is: StaticUpstream or a
	// *ZKDiscovery. Required.
	Upstream UpstreamSource
	// Local holds the APIs the sidecar answers itself (producer offsets and,
	// on a SASL listener, AUTHENTICATE). Its API_VERSIONS (1000) and
	// GET_METADATA (1012) are not used: the proxy answers API_VERSIONS with
	// the merged list and forwards GET_METADATA.
	Local *wire.Mux
	// SelfAddrs are this sidecar's own host:port addresses (bind and
	// advertised). An upstream that resolves to one of them is refused.
	SelfAddrs []string
	// Advertised is the sidecar's client address as clients know it
	// (advertised.listeners), host:port; it counts as one of SelfAddrs.
	// Unless RewriteMetadata is set, the first GET_METADATA answer of each
	// upstream connection is checked: a coordinator address that is none
	// of the sidecar's own is logged (one WARN per address) and reported
	// by MetadataBypass.
	Advertised string
	// RewriteMetadata, if set, replaces the coordinator address in forwarded
	// GET_METADATA answers. Nil forwards them unchanged (recommended).
	RewriteMetadata *RewriteRule
	// UpstreamCredentials, if set, makes every upstream connection
	// authenticate with SASL PLAIN as the session's user before it forwards
	// anything; ok=false fails forwarded requests with
	// AUTHENTICATE_EXCEPTION. Nil forwards without authenticating
	// (PLAINTEXT).
	UpstreamCredentials func(*wire.Session) (user, password string, ok bool)
	// Dial opens upstream connections. Default: a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Lookup resolves host names for the self check. Default:
	// net.DefaultResolver.LookupHost.
	Lookup LookupFunc
	// ConnectTimeout bounds opening one upstream connection. Default
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// MaxResponseSize bounds upstream response frames, length field
	// included. Default math.MaxInt32, like the Java client.
	MaxResponseSize int32
	// MaxResends bounds how often one forwarded request answered
	// NOT_COORDINATOR_LEADER (65) is sent again, to the active coordinator
	// read anew (see failover.go). 0 means DefaultMaxResends; NoResends
	// turns resending off.
	MaxResends int
	// ResendTimeout bounds the time from a request's first answer 65 to
	// its last resend; after it, or after MaxResends, the client gets the
	// last 65 as it came. Default DefaultResendTimeout.
	ResendTimeout time.Duration
	// ResendBackoff is the first wait before the active coordinator is
	// read again while it names no coordinator, or still the one that
	// answered 65; it doubles up to 2 s. With a StaticUpstream it is the
	// wait before a request goes back to the same coordinator. Default
	// DefaultResendBackoff.
	ResendBackoff time.Duration
	// Logger is the parent logger; the proxy logs to its "proxy"
	// sub-logger.
	Logger hclog.Logger
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.Upstream == nil {
		errs = append(errs, errors.New("an upstream source is required"))
	}
	if c.RewriteMetadata != nil {
		if err := c.RewriteMetadata.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.ConnectTimeout < 0 {
		errs = append(errs, fmt.Errorf("ConnectTimeout %v is negative", c.ConnectTimeout))
	}
	if c.MaxResponseSize < 0 {
		errs = append(errs, fmt.Errorf("MaxResponseSize %d is negative", c.MaxResponseSize))
	}
	if c.MaxResends < NoResends {
		errs = append(errs, fmt.Errorf("MaxResends %d is below NoResends (%d)", c.MaxResends, NoResends))
	}
	if c.ResendTimeout < 0 {
		errs = append(errs, fmt.Errorf("ResendTimeout %v is negative", c.ResendTimeout))
	}
	if c.ResendBackoff < 0 {
		errs = append(errs, fmt.Errorf("ResendBackoff %v is negative", c.ResendBackoff))
	}
	for _, a := range c.selfAddrs() {
		if _, _, err := net.SplitHostPort(a); err != nil {
			errs = append(errs, fmt.Errorf("self address %q: %w", a, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("proxy: invalid Config: %w", err)
	}
	return nil
}

// selfAddrs are SelfAddrs and Advertised.
func (c Config) selfAddrs() []string {
	if c.Advertised == "" {
		return c.SelfAddrs
	}
	return append(append([]string(nil), c.SelfAddrs...), c.Advertised)
}

// Proxy serves a client connection by answering the Local APIs itself and
// streaming every other request to the upstream coordinator over one
// upstream connection per client connection.
type Proxy struct {
	cfg   Config
	log   hclog.Logger
	mux   *wire.Mux
	local map[messages.Key]wire.API // keys answered here, API_VERSIONS included
	self  selfCheck
	// versions is the upstream's API_VERSIONS answer seen last, by any
	// connection or by Warm; nil until one is known.
	versions atomic.Pointer[messages.ApiVersionsResponse]
	bypass   bypassWatch
	// maxResends is Config.MaxResends resolved: 0 when resending is off.
	maxResends int
	stats      failoverCounters
}

// New builds a proxy.
func New(cfg Config) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Dial == nil {
		var d net.Dialer
		cfg.Dial = d.DialContext
	}
	if cfg.Lookup == nil {
		cfg.Lookup = net.DefaultResolver.LookupHost
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.MaxResponseSize == 0 {
		cfg.MaxResponseSize = math.MaxInt32
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.ResendTimeout == 0 {
		cfg.ResendTimeout = DefaultResendTimeout
	}
	if cfg.ResendBackoff == 0 {
		cfg.ResendBackoff = DefaultResendBackoff
	}
	maxResends := cfg.MaxResends
	switch maxResends {
	case 0:
		maxResends = DefaultMaxResends
	case NoResends:
		maxResends = 0
	}
	p := &Proxy{
		maxResends: maxResends,
		cfg:        cfg,
		log:        cfg.Logger.Named("proxy"),
		local:      make(map[messages.Key]wire.API),
		self:       selfCheck{self: cfg.selfAddrs(), lookup: cfg.Lookup, localIPs: defaultLocalIPs},
	}
	apis := []wire.API{p.apiVersions()}
	for _, a := range cfg.Local.Versions() {
		if a.Key == messages.KeyAPIVersions || a.Key == messages.KeyGetMetadata {
			continue
		}
		apis = append(apis, a)
	}
	p.mux = wire.NewMux(apis...)
	for _, a := range p.mux.Versions() {
		p.local[a.Key] = a
	}
	return p, nil
}

// Mux returns the locally answered APIs: Local without GET_METADATA, and
// the proxy's own API_VERSIONS.
func (p *Proxy) Mux() *wire.Mux { return p.mux }

// Forwarder forwards every request the Mux does not hold. Its fast path
// (Try): once a connection's upstream is open, requests are passed on from
// the reader goroutine, batched while more are buffered, and answered from
// the upstream reader, with no goroutine per request. Until then Try
// declines and Call does the work, opening the upstream connection.
func (p *Proxy) Forwarder() wire.Forwarder {
	f := fastPath{p}
	return wire.Forwarder{Call: p.forward, Try: f.try, Flush: f.flush}
}

type fastPath struct{ p *Proxy }

func (f fastPath) try(s *wire.Session, h wire.RequestHeader, body []byte, reply *wire.Replier) bool {
	v, ok := s.Attrs.Load(linkKey{})
	if !ok {
		return false
	}
	return v.(*link).tryForward(h, body, reply)
}

func (f fastPath) flush(s *wire.Session) {
	if v, ok := s.Attrs.Load(linkKey{}); ok {
		v.(*link).flushQueued()
	}
}

// ServerConfig returns base with the proxy's Mux and Forwarder set; Gate,
// limits, logger and listener name stay as given. The Gate must not block
// (see wire.ServerConfig.Forward).
func (p *Proxy) ServerConfig(base wire.ServerConfig) wire.ServerConfig {
	base.Mux = p.mux
	base.Forward = p.Forwarder()
	return base
}

// networkError is what a client sees when its upstream connection is gone:
// NETWORK_EXCEPTION, which Fluss clients treat as retriable.
func networkError(format string, args ...any) *flusserr.Error {
	return (&apierr.Error{Class: apierr.ErrUpstreamGone, Detail: fmt.Sprintf(format, args...)}).Fluss()
}

// refused is what a client sees when the proxy cannot authenticate to the
// coordinator on its behalf: AUTHENTICATE_EXCEPTION with text.
func refused(text string) *flusserr.Error {
	return (&apierr.Error{Class: apierr.ErrNotAuthenticated, Detail: text}).Fluss()
}

// forward streams one request to the upstream and returns its answer.
func (p *Proxy) forward(ctx context.Context, s *wire.Session, h wire.RequestHeader, body []byte) (wire.Response, error) {
	l := p.linkOf(ctx, s)
	up, err := l.ready(ctx)
	if err != nil {
		return wire.Response{}, err
	}
	if err := l.authenticate(ctx, up); err != nil {
		return wire.Response{}, err
	}
	up, r, err := l.call(ctx, up, h, body)
	if err != nil {
		return wire.Response{}, err
	}
	if h.APIKey == messages.KeyGetMetadata && r.Type == wire.ResponseSuccess && p.cfg.RewriteMetadata == nil &&
		!l.metadataChecked.Load() && l.metadataChecked.CompareAndSwap(false, true) {
		p.checkMetadata(ctx, s.ConnID, up, r.Body)
	}
	if h.APIKey == messages.KeyGetMetadata && r.Type == wire.ResponseSuccess && p.cfg.RewriteMetadata != nil {
		rule := p.cfg.RewriteMetadata
		out, err := RewriteMetadata(r.Body, rule.Host, rule.Port)
		if err != nil {
			p.log.Warn("cannot rewrite the upstream's metadata", "conn", s.ConnID, "request_id", h.RequestID, "error", err)
			return wire.Response{}, (&apierr.Error{Class: apierr.ErrProxyFailed,
				Detail: fmt.Sprintf("The proxy could not rewrite the coordinator's GET_METADATA answer: %v", err)}).Fluss()
		}
		r.Body = out
	}
	return r, nil
}

// apiVersions answers API_VERSIONS at once, without the upstream: the
// upstream's last known list merged with the locally served keys (whose
// ranges win) and its server_type, or the local list alone with
// server_type COORDINATOR while no upstream list is known (see Warm). So a
// client can always reach the
// APIs the sidecar answers itself, the coordinator up or not, and on a SASL
// listener no upstream connection is opened before the client has logged
// in: the first forwarded request opens it.
func (p *Proxy) apiVersions() wire.API {
	return wire.API{
		Key: messages.KeyAPIVersions, Name: messages.KeyAPIVersions.Name(), MinVersion: 0, MaxVersion: 0,
		NewRequest: func() proto.Message { return &messages.ApiVersionsRequest{} },
		Handle: func(ctx context.Context, s *wire.Session, r *wire.Request) (proto.Message, error) {
			// Kept for the audit lines of the registry's requests.
			req := r.Msg.(*messages.ApiVersionsRequest)
			s.SetClientSoftware(req.GetClientSoftwareName(), req.GetClientSoftwareVersion())
			up := p.versions.Load()
			if up == nil {
				up = &messages.ApiVersionsResponse{}
			}
			out := MergeAPIVersions(up, p.mux.Versions())
			if out.ServerType == nil {
				// Not known yet (or an upstream that sends none): this
				// port stands for the coordinator, and clients such as
				// fluss-go refuse an answer without a type.
				out.ServerType = messages.ServerTypeCoordinator.Int32()
			}
			return out, nil
		},
	}
}

// Warm opens one connection to the upstream to learn its API_VERSIONS
// answer, so that API_VERSIONS answers merge it, and closes it.
func (p *Proxy) Warm(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.ConnectTimeout)
	defer cancel()
	up, err := p.connect(ctx, 0, nil)
	if err != nil {
		return err
	}
	up.client.Close()
	return nil
}

// KeepWarm runs Warm until it succeeds or ctx ends, waiting longer after
// each failure (up to 30 s), and logs whether the upstream is reachable:
// a coordinator that is down at start is reported at start, not at the
// first forwarded request.
func (p *Proxy) KeepWarm(ctx context.Context) {
	delay := time.Second
	for attempt := 1; ; attempt++ {
		err := p.Warm(ctx)
		if err == nil {
			if attempt > 1 {
				p.log.Info("the upstream coordinator is reachable", "attempt", attempt)
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		if attempt == 1 {
			p.log.Warn("the upstream coordinator is not reachable; forwarded requests fail with NETWORK_EXCEPTION until it is, the sidecar's own APIs are served",
				"error", err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// MergeAPIVersions returns upstream's answer with the ranges of local in
// place of the upstream's for the keys both have, plus local keys the
// upstream lacks, sorted by key. server_type and unknown fields of upstream
// are kept. upstream is not modified.
func MergeAPIVersions(upstream *messages.ApiVersionsResponse, local []wire.API) *messages.ApiVersionsResponse {
	out := proto.Clone(upstream).(*messages.ApiVersionsResponse)
	byKey := make(map[int32]*messages.PbApiVersion, len(out.ApiVersions)+len(local))
	var keys []int32
	for _, v := range out.ApiVersions {
		if _, dup := byKey[v.GetApiKey()]; !dup {
			keys = append(keys, v.GetApiKey())
		}
		byKey[v.GetApiKey()] = v
	}
	for _, a := range local {
		k := int32(a.Key)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = &messages.PbApiVersion{
			ApiKey: proto.Int32(k), MinVersion: proto.Int32(int32(a.MinVersion)), MaxVersion: proto.Int32(int32(a.MaxVersion)),
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	out.ApiVersions = out.ApiVersions[:0]
	for _, k := range keys {
		out.ApiVersions = append(out.ApiVersions, byKey[k])
	}
	return out
}
