package proxy_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/internal/fakecoord"
	"github.com/fluss-sidecar/fluss-sidecar/internal/syncbuf"
	"github.com/fluss-sidecar/fluss-sidecar/messages"
	"github.com/fluss-sidecar/fluss-sidecar/proxy"
	"github.com/fluss-sidecar/fluss-sidecar/wire"
	"github.com/fluss-sidecar/fluss-sidecar/zk"
)

// jsonLog is a logger whose JSON lines a test reads back (and sees in its
// own log).
type jsonLog struct {
	hclog.Logger
	buf *syncbuf.Buffer
}

func newJSONLog(t *testing.T) jsonLog {
	t.Helper()
	buf := &syncbuf.Buffer{}
	w := &logWriter{tb: t}
	t.Cleanup(w.stop)
	return jsonLog{
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Debug, JSONFormat: true, Output: io.MultiWriter(buf, w)}),
		buf:    buf,
	}
}

// lines returns the log lines at level whose message contains part.
func (l jsonLog) lines(t *testing.T, level, part string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if s == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatalf("log line %q: %v", s, err)
		}
		if m["@level"] == level && strings.Contains(fmt.Sprint(m["@message"]), part) {
			out = append(out, m)
		}
	}
	return out
}

// bypassWarning is the start of the WARN a bypass is logged with.
const bypassWarning = "as coordinator, not this sidecar"

// metadataVia asks for GET_METADATA on c and returns the coordinator it
// names.
func metadataVia(t *testing.T, c *rawConn, id int32) string {
	t.Helper()
	c.SendMsg(messages.KeyGetMetadata, 0, id, &messages.MetadataRequest{})
	var md messages.MetadataResponse
	decode(t, c.Read(), &md)
	cs := md.GetCoordinatorServer()
	return net.JoinHostPort(cs.GetHost(), strconv.Itoa(int(cs.GetPort())))
}

// bypassSetup is a proxy with no local APIs in front of a fake
// coordinator, advertising its own listener's address.
type bypassSetup struct {
	fake *fakecoord.Coordinator
	p    *proxy.Proxy
	addr string // the proxy's address, bound and advertised
	log  jsonLog
}

func newBypassSetup(t *testing.T, fcfg fakecoord.Config, mod func(*proxy.Config, string)) *bypassSetup {
	t.Helper()
	fake := startFake(t, fcfg)
	ln := listener(t)
	addr := ln.Addr().String()
	log := newJSONLog(t)
	cfg := proxy.Config{Upstream: proxy.StaticUpstream(fake.Addr()), Local: wire.NewMux(), Advertised: addr, Logger: log}
	if mod != nil {
		mod(&cfg, addr)
	}
	p := serveProxy(t, ln, cfg, wire.ServerConfig{})
	return &bypassSetup{fake: fake, p: p, addr: addr, log: log}
}

func (s *bypassSetup) dial(t *testing.T) *rawConn {
	t.Helper()
	c := dialRaw(t, s.addr)
	c.Handshake()
	return c
}

func (s *bypassSetup) wantBypass(t *testing.T, coord string, bypass bool) {
	t.Helper()
	if gotCoord, got := s.p.MetadataBypass(); gotCoord != coord || got != bypass {
		t.Fatalf("MetadataBypass() = %q, %v; want %q, %v", gotCoord, got, coord, bypass)
	}
}

// TestMetadataBypassWarns: a coordinator whose GET_METADATA answer names
// another address than the sidecar (as a Fluss coordinator does for a
// request arriving on a listener advertised as itself) is reported by
// MetadataBypass and one WARN naming both addresses, the upstream and the
// consequence; more answers naming it add no WARN, a new address adds one,
// and the sidecar's own address clears the report. Each upstream connection
// checks its first answer only.
func TestMetadataBypassWarns(t *testing.T) {
	const other, other2 = "10.99.0.7:9125", "10.99.0.8:9125"
	s := newBypassSetup(t, fakecoord.Config{Advertised: other}, nil)
	s.wantBypass(t, "", false) // Warm asked for API_VERSIONS only

	// A forwarded request first, so that the upstream connection is open
	// and GET_METADATA could take the fast path.
	c1 := s.dial(t)
	c1.Send(messages.KeyListDatabases, 0, 100, nil)
	if r := c1.Read(); r.Type != wire.ResponseSuccess {
		t.Fatal(r.Err())
	}
	if got := metadataVia(t, c1, 1); got != other {
		t.Fatalf("GET_METADATA names %s, want the coordinator's answer %s unchanged", got, other)
	}
	s.wantBypass(t, other, true)
	warns := s.log.lines(t, "warn", bypassWarning)
	if len(warns) != 1 {
		t.Fatalf("%d bypass WARNs, want 1: %v", len(warns), warns)
	}
	w := warns[0]
	wantMsg := "clients that refresh metadata will send producer-offsets requests to " + other + ", not to this sidecar; see docs/proxy.md"
	if msg := fmt.Sprint(w["@message"]); !strings.Contains(msg, wantMsg) {
		t.Errorf("WARN %q lacks %q", msg, wantMsg)
	}
	for k, want := range map[string]string{
		"coordinator": other, "sidecar": s.addr, "upstream": s.fake.Addr(),
		"upstream_listener": "the one bound at " + s.fake.Addr() + " (sidecar.upstream.address)",
	} {
		if got := fmt.Sprint(w[k]); got != want {
			t.Errorf("WARN %s=%q, want %q", k, got, want)
		}
	}

	// Not per request, not per connection.
	metadataVia(t, c1, 2)
	metadataVia(t, s.dial(t), 1)
	if n := len(s.log.lines(t, "warn", bypassWarning)); n != 1 {
		t.Fatalf("%d bypass WARNs after more answers naming %s, want 1", n, other)
	}

	// c1's upstream connection has been checked: its answers are not
	// read again, so the change is seen by the next connection.
	if err := s.fake.Advertise(other2); err != nil {
		t.Fatal(err)
	}
	if got := metadataVia(t, c1, 3); got != other2 {
		t.Fatalf("GET_METADATA names %s, want %s", got, other2)
	}
	s.wantBypass(t, other, true)
	metadataVia(t, s.dial(t), 1)
	s.wantBypass(t, other2, true)
	warns = s.log.lines(t, "warn", bypassWarning)
	if len(warns) != 2 || warns[1]["coordinator"] != other2 {
		t.Fatalf("bypass WARNs after the change to %s: %v", other2, warns)
	}

	// The coordinator names the sidecar: the report clears, once.
	if err := s.fake.Advertise(s.addr); err != nil {
		t.Fatal(err)
	}
	metadataVia(t, s.dial(t), 1)
	s.wantBypass(t, s.addr, false)
	if n := len(s.log.lines(t, "warn", bypassWarning)); n != 2 {
		t.Fatalf("%d bypass WARNs, want still 2", n)
	}
	if infos := s.log.lines(t, "info", "names this sidecar as coordinator again"); len(infos) != 1 {
		t.Fatalf("INFO lines on the sidecar named again: %v", infos)
	}
}

// TestMetadataNamingSidecarIsQuiet: a coordinator that names the sidecar,
// by its advertised address or by another name for the same listener, is
// not reported.
func TestMetadataNamingSidecarIsQuiet(t *testing.T) {
	for _, name := range []string{"advertised", "localhost"} {
		t.Run(name, func(t *testing.T) {
			s := newBypassSetup(t, fakecoord.Config{}, nil)
			named := s.addr
			if name == "localhost" {
				_, port, _ := net.SplitHostPort(s.addr)
				named = net.JoinHostPort("localhost", port)
			}
			if err := s.fake.Advertise(named); err != nil {
				t.Fatal(err)
			}
			if got := metadataVia(t, s.dial(t), 1); got != named {
				t.Fatalf("GET_METADATA names %s, want %s", got, named)
			}
			s.wantBypass(t, named, false)
			if warns := s.log.lines(t, "warn", bypassWarning); len(warns) != 0 {
				t.Fatalf("bypass WARNs for a coordinator naming the sidecar: %v", warns)
			}
		})
	}
}

// TestMetadataRewriteNotChecked: with the rewrite on, every answer names
// the sidecar by construction, so nothing is checked or reported, though
// the coordinator names another address.
func TestMetadataRewriteNotChecked(t *testing.T) {
	s := newBypassSetup(t, fakecoord.Config{Advertised: "10.99.0.7:9125"}, func(cfg *proxy.Config, addr string) {
		host, port, _ := net.SplitHostPort(addr)
		p, _ := strconv.Atoi(port)
		cfg.RewriteMetadata = &proxy.RewriteRule{Host: host, Port: int32(p)}
	})
	c := s.dial(t)
	for id := range int32(3) {
		if got := metadataVia(t, c, id); got != s.addr {
			t.Fatalf("GET_METADATA names %s, want the rewritten %s", got, s.addr)
		}
	}
	s.wantBypass(t, "", false)
	if warns := s.log.lines(t, "warn", bypassWarning); len(warns) != 0 {
		t.Fatalf("bypass WARNs with the rewrite on: %v", warns)
	}
}

// TestMetadataBypassThroughZKListener is deployment (a) with the upstream
// found in ZooKeeper on a listener PROXY advertised as the coordinator's
// own address, as measured against a real coordinator
// (compat_test.TestProxyRealClusterRouting, "a-zk"): the coordinator names
// the listener the request arrived on, so the WARN fires and names PROXY.
func TestMetadataBypassThroughZKListener(t *testing.T) {
	ctx := t.Context()
	zc := connectZK(t)
	fake := startFake(t, fakecoord.Config{}) // names its own address: PROXY's
	ln := listener(t)
	znode := fmt.Sprintf(`{"version":2,"id":"1","listeners":"FLUSS://127.0.0.1:1,CLIENT://%s,PROXY://%s"}`, ln.Addr(), fake.Addr())
	if _, err := zc.Create(ctx, proxy.ActiveCoordinatorPath, []byte(znode), zk.Ephemeral); err != nil {
		t.Fatal(err)
	}
	disc := runDiscovery(t, proxy.ZKDiscoveryConfig{ZK: zc, ListenerName: "PROXY"})

	log := newJSONLog(t)
	p := serveProxy(t, ln, proxy.Config{Upstream: disc, Local: wire.NewMux(), Advertised: ln.Addr().String(), Logger: log}, wire.ServerConfig{})
	c := dialRaw(t, ln.Addr().String())
	c.Handshake()
	if got := metadataVia(t, c, 1); got != fake.Addr() {
		t.Fatalf("GET_METADATA names %s, want the coordinator's PROXY endpoint %s", got, fake.Addr())
	}
	if coord, bypass := p.MetadataBypass(); coord != fake.Addr() || !bypass {
		t.Fatalf("MetadataBypass() = %q, %v; want %q, true", coord, bypass, fake.Addr())
	}
	warns := log.lines(t, "warn", bypassWarning)
	if len(warns) != 1 || warns[0]["upstream_listener"] != "PROXY (sidecar.upstream.listener-name)" {
		t.Fatalf("bypass WARNs %v, want one naming the upstream listener PROXY", warns)
	}
}

// TestMetadataNotCheckedWithoutSelfAddrs: a proxy told no address of its
// own cannot tell whether an answer names it, and reports nothing.
func TestMetadataNotCheckedWithoutSelfAddrs(t *testing.T) {
	s := newBypassSetup(t, fakecoord.Config{Advertised: "10.99.0.7:9125"}, func(cfg *proxy.Config, _ string) {
		cfg.SelfAddrs, cfg.Advertised = []string{}, ""
	})
	metadataVia(t, s.dial(t), 1)
	s.wantBypass(t, "", false)
	if warns := s.log.lines(t, "warn", bypassWarning); len(warns) != 0 {
		t.Fatalf("bypass WARNs without self addresses: %v", warns)
	}
}
