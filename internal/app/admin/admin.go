// Package admin is etld's HTTP admin server: /healthz (the process
// answers), /readyz (every pipeline running or finished), /metrics
// (Prometheus), /pipelines (JSON status) with each pipeline's history,
// plan, file and change sample under /pipelines/{name}/, and the web
// console at /ui/. /ui and /pipelines need the admin token when Auth
// says so; /healthz, /readyz and /metrics never do (probes and
// Prometheus reach them as before), and /readyz gives the pipelines'
// errors only to who may read /pipelines. /debug/pprof/ is served only
// when Options.Pprof is set, behind the same token as /pipelines. Every
// path refuses a Host header that names another site (hostCheck).
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options are what the server shows.
type Options struct {
	// Address is the address the server listens on (Listen sets it):
	// the Host header of a request must name its host, a loopback name
	// or an IP address, unless it is a wildcard (see hostCheck). Empty:
	// loopback names and IP addresses only.
	Address string
	// Ready reports readiness and, when not ready, why: with details,
	// each pipeline's error too, else its state only.
	Ready func(details bool) (bool, []string)
	// Pipelines returns the value /pipelines encodes as JSON.
	Pipelines func() any
	Gatherer  prometheus.Gatherer
	Logger    *slog.Logger
	// Console, if set, answers /pipelines/{name}/history, plan, file and
	// sample.
	Console Console
	// UI, if set, serves the console's files at /ui/ (the path with the
	// prefix /ui stripped).
	UI   http.Handler
	Auth Auth
	// Pprof serves Go's profiles at /debug/pprof/ (admin.pprof). Off by
	// default: a profile shows the process's code and, for some
	// profiles, costs CPU while it is taken.
	Pprof bool
}

// Console is what the web console reads beyond /pipelines; each method
// reports false for a name no pipeline has (the daemon's Supervisor).
type Console interface {
	History(name string) (any, bool)
	Plan(name string) (any, bool)
	File(name string) (any, bool)
	Sample(name string) (any, bool)
	// SetSample turns a pipeline's sampled live view on or off.
	SetSample(name string, on bool) error
}

// Server is a listening admin server.
type Server struct {
	ln  net.Listener
	srv *http.Server
	log *slog.Logger
}

// Listen binds address and returns the server, not yet serving. Binding
// first lets the caller log the real address (":0" picks a port) and fail
// before anything starts when the port is taken.
func Listen(address string, opt Options) (*Server, error) {
	ln, err := net.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("admin server: %w", err)
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("component", "admin")
	s := &Server{ln: ln, log: log}
	if opt.Address == "" {
		opt.Address = address
	}
	s.srv = &http.Server{
		Handler:           Handler(opt),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until Shutdown; it returns nil after Shutdown.
func (s *Server) Serve() error {
	err := s.srv.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("admin server: %w", err)
}

// Shutdown stops serving, letting requests in flight finish until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.srv.Shutdown(ctx)
}

// relativeRedirect sends Location as given: http.Redirect would make it
// absolute from the request's path, which behind a proxy that strips a
// path prefix lacks the prefix.
func relativeRedirect(w http.ResponseWriter, location string, code int) {
	w.Header().Set("Location", location)
	w.WriteHeader(code)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}

// Handler routes the admin endpoints.
func Handler(opt Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		// The errors may quote records: only who may read /pipelines,
		// which shows them too, gets them; probes need the states only.
		ready, reasons := opt.Ready(opt.Auth.ok(r))
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready:\n%s\n", strings.Join(reasons, "\n"))
			return
		}
		fmt.Fprintln(w, "ready")
	})
	api := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, opt.Auth.protect(false, h))
	}
	api("GET /pipelines", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, opt.Pipelines())
	})
	if c := opt.Console; c != nil {
		get := func(what func(string) (any, bool)) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				v, ok := what(r.PathValue("name"))
				if !ok {
					http.Error(w, fmt.Sprintf("no pipeline %q, or nothing to show for it", r.PathValue("name")), http.StatusNotFound)
					return
				}
				writeJSON(w, v)
			}
		}
		api("GET /pipelines/{name}/history", get(c.History))
		api("GET /pipelines/{name}/plan", get(c.Plan))
		api("GET /pipelines/{name}/file", get(c.File))
		api("GET /pipelines/{name}/sample", get(c.Sample))
		api("POST /pipelines/{name}/sample", csrf(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Enabled *bool `json:"enabled"`
			}
			if err := json.NewDecoder(io.LimitReader(r.Body, 1<<10)).Decode(&req); err != nil || req.Enabled == nil {
				http.Error(w, `want {"enabled": true} or {"enabled": false}`, http.StatusBadRequest)
				return
			}
			if err := c.SetSample(r.PathValue("name"), *req.Enabled); err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
			v, _ := c.Sample(r.PathValue("name"))
			writeJSON(w, v)
		}))
	}
	if opt.UI != nil {
		// Relative redirect: /prefix/ui goes to /prefix/ui/ behind a proxy.
		mux.HandleFunc("GET /ui", func(w http.ResponseWriter, r *http.Request) {
			relativeRedirect(w, "ui/", http.StatusMovedPermanently)
		})
		mux.HandleFunc("POST /ui/login", opt.Auth.login)
		mux.Handle("GET /ui/", opt.Auth.protect(true, http.StripPrefix("/ui", opt.UI)))
	}
	if opt.Pprof {
		// Registered on this mux, not http.DefaultServeMux (which the
		// package's init also fills and nothing here serves). No
		// cmdline: the command line may carry --admin-token. No POST
		// symbol: Go's profiles carry their symbols, and a POST here
		// would need the console's CSRF header.
		api("GET /debug/pprof/", pprof.Index)
		api("GET /debug/pprof/profile", pprof.Profile)
		api("GET /debug/pprof/symbol", pprof.Symbol)
		api("GET /debug/pprof/trace", pprof.Trace)
	}
	if opt.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(opt.Gatherer, promhttp.HandlerOpts{}))
	}
	return hostCheck(opt.Address, mux)
}
