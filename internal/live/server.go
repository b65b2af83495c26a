package live

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server serves a registry over HTTP: /metrics in the format the scraper's Accept header
// asks for.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Listen binds addr (host:port, ":9464", "127.0.0.1:0") at once, so a bad or busy address
// fails before the run starts, and serves r until Close.
func Listen(addr string, r *Registry) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", r)
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/" {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "shardbench live metrics: /metrics (Prometheus text format or OpenMetrics)")
	})
	s := &Server{
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		// Serve returns when Close shuts it down; should the listener fail mid-run, the run
		// goes on without live metrics.
		_ = s.srv.Serve(ln)
	}()
	return s, nil
}

// Addr is the address the server listens on (the port chosen for ":0").
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops serving, letting a scrape in progress finish (up to 2 s).
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	<-s.done
	return err
}

// ServeHTTP renders the registry for one scrape.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	f := Negotiate(req.Header.Get("Accept"))
	if f == OpenMetrics {
		w.Header().Set("Content-Type", OpenMetricsContentType)
	} else {
		w.Header().Set("Content-Type", TextContentType)
	}
	_ = r.Write(w, f)
}
