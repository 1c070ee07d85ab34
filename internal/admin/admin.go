// Package admin is etld's HTTP admin server: /healthz (the process
// answers), /readyz (every pipeline running or finished), /metrics
// (Prometheus) and /pipelines (JSON status).
package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options are what the server shows.
type Options struct {
	// Ready reports readiness and, when not ready, why.
	Ready func() (bool, []string)
	// Pipelines returns the value /pipelines encodes as JSON.
	Pipelines func() any
	Gatherer  prometheus.Gatherer
	Logger    *slog.Logger
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

// Handler routes the admin endpoints.
func Handler(opt Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		ready, reasons := opt.Ready()
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready:\n%s\n", strings.Join(reasons, "\n"))
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("GET /pipelines", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(opt.Pipelines()); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	if opt.Gatherer != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(opt.Gatherer, promhttp.HandlerOpts{}))
	}
	return mux
}
