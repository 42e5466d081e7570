package streamable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/mcp"
)

// maxHeaderBytes bounds a request's headers.
const maxHeaderBytes = 64 << 10

// ListenAndServe serves srv over Streamable HTTP at cfg.Addr and cfg.Path
// until ctx is done, then shuts down gracefully: NewHandler, then the
// Handler's ListenAndServe.
func ListenAndServe(ctx context.Context, srv *mcp.Server, cfg Config, opts Options, ready func(net.Addr)) error {
	h, err := NewHandler(srv, cfg, opts)
	if err != nil {
		return err
	}
	return h.ListenAndServe(ctx, ready)
}

// ListenAndServe listens on the configured address and serves until ctx
// is done (see Serve). ready, when not nil, is called once the listener is
// bound, with its address.
func (h *Handler) ListenAndServe(ctx context.Context, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", h.cfg.Addr)
	if err != nil {
		h.cancel()
		return fmt.Errorf("streamable: cannot listen on %s (transport.http.addr): %w", h.cfg.Addr, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	return h.Serve(ctx, ln)
}

// Serve serves the endpoint at the configured path on ln until ctx is
// done. Then it shuts down gracefully: new sessions and messages get 503
// and GET streams end; requests in progress are answered, for up to
// server.shutdownTimeoutMs; then every session closes as Server.Shutdown
// closes it (what still runs is cancelled, and waited for up to
// server.shutdownTimeoutMs), and the listener and every connection close.
// It returns nil after a shutdown for ctx, and the error otherwise.
func (h *Handler) Serve(ctx context.Context, ln net.Listener) error {
	limiter := newConnLimiter(h.cfg.MaxConnections, h.cfg.MaxConnectionsPerClient)
	ln = &limitListener{Listener: ln, l: limiter}
	endpoint := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := connOf(r.Context()); c != nil {
			limiter.serving(c, +1)
			defer limiter.serving(c, -1)
		}
		closeUnlessRead(w, r)
		if m, ok := h.mounted(r.URL.Path); ok {
			h.serveMount(w, r, m)
			return
		}
		if r.URL.Path != h.cfg.Path {
			h.fail(w, nil, http.StatusNotFound, core.CodeNotFound, "no MCP endpoint at "+clipText(r.URL.Path)+
				"; it is at "+clipText(h.cfg.Path)+" (transport.http.path)")
			return
		}
		h.ServeHTTP(w, r)
	})
	hs := &http.Server{
		Handler:           endpoint,
		ReadHeaderTimeout: h.readTimeout,
		// ReadTimeout bounds the headers and the body together: net/http
		// sets it with the request and clears it once the body is read
		// whole (before it watches the connection for the client going
		// away), so readBody needs no deadline of its own here.
		ReadTimeout:    h.readTimeout,
		IdleTimeout:    h.cfg.IdleTimeout,
		MaxHeaderBytes: maxHeaderBytes,
		ConnContext:    withConn,
		ErrorLog:       slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
		// No WriteTimeout: it would cut long event streams. Each write is
		// made under a deadline of its own.
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && !h.hasAuth {
		h.log.Warn("serving MCP over HTTP on a non-loopback address without a bearer token; anyone who can reach it "+
			"may use every tool: set transport.http.authTokenEnvVar", "addr", ln.Addr().String())
	}
	h.log.Info("serving MCP over HTTP", "addr", ln.Addr().String(), "path", h.cfg.Path,
		"auth", h.hasAuth, "maxSessions", h.cfg.MaxSessions, "maxConnections", h.cfg.MaxConnections,
		"maxConnectionsPerClient", h.cfg.MaxConnectionsPerClient)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	timeout := h.srv.Limits().ShutdownTimeout
	var serveErr error
	select {
	case err := <-errc:
		serveErr = fmt.Errorf("streamable: serving HTTP on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
		h.log.Info("HTTP shutdown: finishing requests in progress", "shutdownTimeoutMs", timeout.Milliseconds())
		h.Drain()
		drain, cancel := context.WithTimeout(context.Background(), timeout)
		if err := hs.Shutdown(drain); err != nil {
			h.log.Warn("HTTP shutdown: requests still in progress when server.shutdownTimeoutMs passed; closing their sessions",
				"error", err.Error())
		}
		cancel()
	}
	// Sessions shut down in parallel, each within the timeout; allow one
	// more second for the bookkeeping after it.
	closing, cancel := context.WithTimeout(context.Background(), timeout+time.Second)
	defer cancel()
	if err := h.Close(closing); err != nil {
		h.log.Warn("HTTP shutdown: sessions still closing", "error", err.Error())
	}
	_ = hs.Close()
	if serveErr == nil {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			serveErr = fmt.Errorf("streamable: serving HTTP on %s: %w", ln.Addr(), err)
		}
	}
	h.log.Info("HTTP transport stopped")
	return serveErr
}
