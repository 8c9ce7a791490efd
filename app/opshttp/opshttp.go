// Package opshttp serves the sidecar's operations endpoint over HTTP:
// /metrics (Prometheus), /healthz (the process is alive), /readyz (ready to
// serve requests, and what an operator should fix meanwhile) and, when
// enabled, /debug/pprof/.
package opshttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Config configures Start.
type Config struct {
	// Host is the address to bind; "" binds every interface, as Fluss's
	// Prometheus reporter does.
	Host string
	// Ports are tried in order; the first free one is used (see
	// ParsePorts).
	Ports []int
	// Gatherer is what /metrics exposes. Required.
	Gatherer prometheus.Gatherer
	// Ready returns what the sidecar still lacks to serve requests; empty
	// means ready. Nil is always ready.
	Ready func() []string
	// Warnings returns what the sidecar serves despite, for an operator to
	// fix (a misconfiguration that sends clients elsewhere); /readyz lists
	// them without changing its status. Nil has none.
	Warnings func() []string
	// Pprof serves net/http/pprof under /debug/pprof/.
	Pprof bool
	// Logger is the parent logger; the server logs to "opshttp".
	Logger hclog.Logger
}

// Server is a running operations endpoint.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// readiness is /readyz's JSON body.
type readiness struct {
	Ready    bool     `json:"ready"`
	Missing  []string `json:"missing,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Start binds the first free port of cfg.Ports and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Gatherer == nil {
		return nil, errors.New("opshttp: a gatherer is required")
	}
	if len(cfg.Ports) == 0 {
		return nil, errors.New("opshttp: no port to bind")
	}
	log := cfg.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	log = log.Named("opshttp")
	ln, err := listen(cfg.Host, cfg.Ports)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		var missing []string
		if cfg.Ready != nil {
			missing = cfg.Ready()
		}
		var warnings []string
		if cfg.Warnings != nil {
			warnings = cfg.Warnings()
		}
		w.Header().Set("Content-Type", "application/json")
		body := readiness{Ready: len(missing) == 0, Missing: missing, Warnings: warnings}
		if !body.Ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		json.NewEncoder(w).Encode(body)
	})
	if cfg.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	s := &Server{
		srv: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          log.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true}),
		},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("operations endpoint stopped", "error", err)
		}
	}()
	log.Info("serving metrics and probes", "addr", ln.Addr().String(), "pprof", cfg.Pprof)
	return s, nil
}

// listen binds the first port of ports that is free.
func listen(host string, ports []int) (net.Listener, error) {
	var errs []error
	for _, p := range ports {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(p)))
		if err == nil {
			return ln, nil
		}
		if len(errs) < 3 {
			errs = append(errs, err)
		}
	}
	return nil, fmt.Errorf("opshttp: no free port among %d tried: %w", len(ports), errors.Join(errs...))
}

// Addr is the bound host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving, waiting for requests in progress up to ctx.
func (s *Server) Close(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	<-s.done
	return err
}
