// Package controlapi serves an embedded server's controls over HTTP, for
// test suites in other languages: rules (fail, stall, delay, drop, apply
// then fail or drop), waits for their hits, the release of stalled
// requests, the request log, the TTL clock, and the store. It is a thin
// layer over the embedded.Server methods of the same names: the Go
// controls and this API are one mechanism. openapi.yaml documents it and
// GET /v1/openapi.yaml serves that file.
//
// It has no authentication: bind it to loopback.
package controlapi

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fluss-sidecar/fluss-sidecar/config"
	"github.com/fluss-sidecar/fluss-sidecar/embedded"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI is the API's OpenAPI document (YAML).
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// Handler answers the control API's requests for srv. Every request's
// work is bounded: bodies by MaxBodyBytes, waits by MaxWait and ctx (the
// end of the server's life, see Serve), rules by embedded's bounds.
type Handler struct {
	srv *embedded.Server
	ctx context.Context
	mux *http.ServeMux
}

// NewHandler returns the API's handler for srv; ctx ends its waits.
func NewHandler(ctx context.Context, srv *embedded.Server) *Handler {
	h := &Handler{srv: srv, ctx: ctx, mux: http.NewServeMux()}
	h.mux.HandleFunc("GET /v1/server", h.server)
	h.mux.HandleFunc("GET /v1/openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(openAPI)
	})
	h.mux.HandleFunc("GET /v1/rules", h.listRules)
	h.mux.HandleFunc("POST /v1/rules", h.addRule)
	h.mux.HandleFunc("DELETE /v1/rules", h.removeRules)
	h.mux.HandleFunc("GET /v1/rules/{id}", h.getRule)
	h.mux.HandleFunc("DELETE /v1/rules/{id}", h.removeRule)
	h.mux.HandleFunc("POST /v1/rules/{id}/wait", h.wait)
	h.mux.HandleFunc("POST /v1/release", h.release)
	h.mux.HandleFunc("GET /v1/log", h.log)
	h.mux.HandleFunc("DELETE /v1/log", h.clearLog)
	h.mux.HandleFunc("GET /v1/clock", h.clock)
	h.mux.HandleFunc("POST /v1/clock/advance", h.advance)
	h.mux.HandleFunc("GET /v1/store", h.store)
	h.mux.HandleFunc("DELETE /v1/store", h.resetStore)
	h.mux.HandleFunc("POST /v1/reset", h.reset)
	return h
}

// ServeHTTP answers one request; unknown paths get 404 and known paths
// with another method 405, both as JSON.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, pattern := h.mux.Handler(r)
	if pattern == "" {
		// Let the mux tell 404 from 405, in JSON.
		rec := &statusOnly{}
		h.mux.ServeHTTP(rec, r)
		status := rec.status
		if status == 0 {
			status = http.StatusNotFound
		}
		if status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.header.Get("Allow"))
			writeErr(w, status, "method not allowed on "+r.URL.Path, "")
			return
		}
		writeErr(w, http.StatusNotFound, "no such path: "+r.URL.Path, "")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// statusOnly records the status and headers the mux would answer.
type statusOnly struct {
	header http.Header
	status int
}

func (s *statusOnly) Header() http.Header {
	if s.header == nil {
		s.header = http.Header{}
	}
	return s.header
}
func (s *statusOnly) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusOnly) WriteHeader(code int)        { s.status = code }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

func writeErr(w http.ResponseWriter, status int, msg, field string) {
	writeJSON(w, status, ErrorJSON{Error: msg, Field: field})
}

// fail answers err: a FieldError is 400 (413 for a body too large) naming
// its field.
func fail(w http.ResponseWriter, err error) {
	var fe *FieldError
	switch {
	case errors.As(err, &fe):
		status := http.StatusBadRequest
		if fe.status != 0 {
			status = fe.status
		}
		writeErr(w, status, fe.Error(), fe.Field)
	case errors.Is(err, embedded.ErrNoRule):
		writeErr(w, http.StatusNotFound, err.Error(), "id")
	case errors.Is(err, embedded.ErrTooManyRules):
		writeErr(w, http.StatusConflict, err.Error(), "")
	default:
		writeErr(w, http.StatusInternalServerError, err.Error(), "")
	}
}

// body reads at most MaxBodyBytes+1 bytes of the request's body.
func body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge()
	}
	if err != nil {
		return nil, bad("body", "unreadable: %v", err)
	}
	return data, nil
}

func ruleID(r *http.Request) (uint64, error) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 63)
	if err != nil || id == 0 {
		return 0, bad("id", "%q is not a rule id", r.PathValue("id"))
	}
	return id, nil
}

func listeners(ls []config.Listener) []ListenerJSON {
	out := []ListenerJSON{}
	for _, l := range ls {
		out = append(out, ListenerJSON{Name: l.Name, Address: l.Address()})
	}
	return out
}

func (h *Handler) server(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, ServerJSON{
		Bootstrap: h.srv.Addr(), Listeners: listeners(h.srv.Listeners()), Tablet: listeners(h.srv.TabletListeners()),
	})
}

func (h *Handler) listRules(w http.ResponseWriter, _ *http.Request) {
	out := []RuleJSON{}
	for _, r := range h.srv.Rules() {
		out = append(out, EncodeRule(r))
	}
	writeJSON(w, http.StatusOK, map[string]any{"rules": out})
}

func (h *Handler) addRule(w http.ResponseWriter, r *http.Request) {
	data, err := body(w, r)
	if err != nil {
		fail(w, err)
		return
	}
	rule, err := DecodeRule(data)
	if err != nil {
		fail(w, err)
		return
	}
	info, err := h.srv.AddRule(rule)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, EncodeRule(info))
}

func (h *Handler) removeRules(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]int{"removed": h.srv.RemoveRules()})
}

func (h *Handler) getRule(w http.ResponseWriter, r *http.Request) {
	id, err := ruleID(r)
	if err != nil {
		fail(w, err)
		return
	}
	info, err := h.srv.RuleByID(id)
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, EncodeRule(info))
}

func (h *Handler) removeRule(w http.ResponseWriter, r *http.Request) {
	id, err := ruleID(r)
	if err != nil {
		fail(w, err)
		return
	}
	if err := h.srv.RemoveRule(id); err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"removed": 1})
}

// wait answers once the rule has the hits asked for (reached: true), or
// when the timeout passes first (reached: false, still 200: the wait
// itself worked). A rule removed meanwhile is 404.
func (h *Handler) wait(w http.ResponseWriter, r *http.Request) {
	id, err := ruleID(r)
	if err != nil {
		fail(w, err)
		return
	}
	data, err := body(w, r)
	if err != nil {
		fail(w, err)
		return
	}
	hits, timeout, err := DecodeWait(data)
	if err != nil {
		fail(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	stop := context.AfterFunc(h.ctx, cancel)
	defer stop()
	info, err := h.srv.WaitHits(ctx, id, hits)
	if err != nil && info.ID == 0 {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"reached": err == nil, "rule": EncodeRule(info)})
}

func (h *Handler) release(w http.ResponseWriter, r *http.Request) {
	data, err := body(w, r)
	if err != nil {
		fail(w, err)
		return
	}
	id, err := DecodeRelease(data)
	if err != nil {
		fail(w, err)
		return
	}
	if id != 0 {
		if _, err := h.srv.RuleByID(id); err != nil {
			fail(w, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]int{"released": h.srv.Release(id)})
}

func (h *Handler) log(w http.ResponseWriter, r *http.Request) {
	q, err := DecodeLogQuery(r.URL.Query())
	if err != nil {
		fail(w, err)
		return
	}
	entries := []LogEntryJSON{}
	stats := h.srv.LogStats()
	next := q.Since
	for _, e := range h.srv.Log(q.Since, 0) {
		if len(entries) >= q.Limit {
			break
		}
		next = e.Seq + 1
		if (q.APIKey != nil && e.APIKey != *q.APIKey) || (q.ProducerID != "" && e.ProducerID != q.ProducerID) ||
			(q.ConnID != 0 && e.ConnID != q.ConnID) {
			continue
		}
		entries = append(entries, encodeEntry(e))
	}
	if len(entries) < q.Limit {
		next = max(next, stats.NextSeq)
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries, "next_since": next, "forgotten": stats.Forgotten})
}

func (h *Handler) clearLog(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]int{"removed": h.srv.ClearLog()})
}

func (h *Handler) clock(w http.ResponseWriter, _ *http.Request) {
	c := h.srv.Clock()
	writeJSON(w, http.StatusOK, ClockJSON{NowMs: c.Now().UnixMilli(), OffsetMs: c.Offset().Milliseconds()})
}

func (h *Handler) advance(w http.ResponseWriter, r *http.Request) {
	data, err := body(w, r)
	if err != nil {
		fail(w, err)
		return
	}
	by, expire, err := DecodeAdvance(data)
	if err != nil {
		fail(w, err)
		return
	}
	now, err := h.srv.Clock().Advance(by)
	if err != nil {
		fail(w, bad("by", "%v", err))
		return
	}
	out := ClockJSON{NowMs: now.UnixMilli(), OffsetMs: h.srv.Clock().Offset().Milliseconds()}
	if expire {
		n, err := h.srv.ExpireNow(r.Context())
		if err != nil {
			fail(w, err)
			return
		}
		out.Expired = &n
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *Handler) store(w http.ResponseWriter, r *http.Request) {
	l, err := h.srv.ListStore(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, encodeStore(l))
}

func (h *Handler) resetStore(w http.ResponseWriter, r *http.Request) {
	n, err := h.srv.ResetStore(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"deleted": n})
}

func (h *Handler) reset(w http.ResponseWriter, r *http.Request) {
	if err := h.srv.Reset(r.Context()); err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"reset": true})
}

// Server is the control API listening on one address.
type Server struct {
	ln     net.Listener
	http   *http.Server
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Listen binds addr and serves the API for srv until Close. It logs to
// log's "controlapi" sub-logger (nil: nothing).
func Listen(addr string, srv *embedded.Server, log hclog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Serve(ln, srv, log), nil
}

// Serve serves the API on ln until Close.
func Serve(ln net.Listener, srv *embedded.Server, log hclog.Logger) *Server {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{ln: ln, cancel: cancel, done: make(chan struct{})}
	s.http = &http.Server{
		Handler:           NewHandler(ctx, srv),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      MaxWait + 30*time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          log.Named("controlapi").StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug}),
	}
	go func() {
		defer close(s.done)
		s.http.Serve(ln)
	}()
	return s
}

// Addr is the bound host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the API's base URL, http://host:port.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Close ends waits in progress, stops accepting and closes every
// connection. It is safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		s.cancel()
		err = s.http.Close()
		<-s.done
	})
	return err
}
