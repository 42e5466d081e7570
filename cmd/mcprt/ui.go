package main

// The overseer's console: `mcprt ui` serves it alone over a data
// directory; mountConsole puts it at /ui/ beside the MCP endpoint of
// `mcprt --http`.

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/console"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/transport/streamable"
)

const uiUsage = `mcprt ui — the overseer's console, alone, over a data directory.

Usage:
  mcprt ui [--addr 127.0.0.1:8081] [--data-dir DIR] [--config FILE]

It serves the console at http://ADDR/ui/ for a person whose sessions run
over stdio: it reads the messaging journal and the store in the data
directory, and sends the person's messages through the same journal.
Sign in with the token in the variable transport.http.authTokenEnvVar
names, or, when none is configured, with the token printed at start.

Flags:
  --addr ADDR      host:port to listen on (default: console.addr, 127.0.0.1:8081)
  --data-dir DIR   the data directory (default: aacp.dataDir, else .mcprt)
  --config FILE    the configuration file (default: MCPRT_CONFIG)

Exit codes: 0 stopped by a signal, 1 failed, 2 bad usage, 78 invalid configuration.
`

// runUI is `mcprt ui`: the console alone over a data directory.
func runUI(args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("mcprt ui", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "", "")
	dataDir := fs.String("data-dir", "", "")
	configPath := fs.String("config", "", "")
	help := fs.Bool("help", false, "")
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "mcprt ui: %v\n", err)
		if code == exitUsage {
			fmt.Fprint(stderr, "Run 'mcprt ui --help' for usage.\n")
		}
		return code
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, uiUsage)
			return exitOK
		}
		return fail(exitUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, uiUsage)
		return exitOK
	}
	if fs.NArg() > 0 {
		return fail(exitUsage, fmt.Errorf("unexpected argument %q; mcprt ui takes only flags", fs.Arg(0)))
	}
	path := *configPath
	if path == "" {
		path = lookupEnv(environ, "MCPRT_CONFIG")
	}
	all, err := config.Load(path, environ, version)
	cfg, domainCfg, web, uiCfg := all.Base, all.Domain, all.HTTP, all.Console
	if err != nil {
		logConfigError(core.NewLogger(stderr, core.LogOptions{}), err)
		return exitConfig
	}
	if *dataDir != "" {
		cfg.AACP.DataDir = *dataDir
	}
	if *addr != "" {
		uiCfg.Addr = *addr
	}
	if _, _, err := net.SplitHostPort(uiCfg.Addr); err != nil {
		return fail(exitUsage, fmt.Errorf("--addr %q is not host:port (e.g. 127.0.0.1:8081)", uiCfg.Addr))
	}
	if all.Backend.Backend == natsengine.BackendNATS || all.Backend.StateBackend == natsengine.BackendNATS {
		// The sessions' data is on NATS: this data directory holds only
		// this process's copy of the shared state (and its traces).
		if err := os.MkdirAll(cfg.AACP.DataDir, 0o700); err != nil {
			return fail(exitFatal, fmt.Errorf("cannot create the data directory %q for this console's copy of the shared state: %w", cfg.AACP.DataDir, err))
		}
	} else if st, err := os.Stat(cfg.AACP.DataDir); err != nil || !st.IsDir() {
		return fail(exitFatal, fmt.Errorf("no data directory %q; pass --data-dir (the sessions' MCPRT_AACP_DATA_DIR)", cfg.AACP.DataDir))
	}
	level, _ := core.ParseLevel(cfg.Logging.Level)
	logger := core.NewLogger(stderr, core.LogOptions{Level: level, RedactKeys: cfg.Logging.RedactKeys})
	token, printed := "", false
	if web.AuthTokenEnvVar != "" {
		if token = lookupEnv(environ, web.AuthTokenEnvVar); token == "" {
			return fail(exitConfig, fmt.Errorf("transport.http.authTokenEnvVar names %s, which is empty or unset; set it to the token", web.AuthTokenEnvVar))
		}
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:])
		token, printed = hex.EncodeToString(b[:]), true
	}
	// The stores as the server builds them (backends.go): the journal,
	// presence, reservations and tasks where the sessions keep them — the
	// data directory, or NATS, whose shared state is applied to this
	// data directory's store while the console runs. The person's agent
	// is the messaging service's own: it is registered on the first
	// message sent, not before.
	acfg := cfg.AACP
	acfg.AgentID, acfg.AgentType = uiCfg.HumanAgentID, uiCfg.HumanAgentType
	all.Base.AACP.DataDir = cfg.AACP.DataDir
	ctx := context.Background()
	back, err := openBackends(ctx, backendOptions{Config: all, AACP: acfg, Domain: true, Logger: logger})
	if err != nil {
		return reportBackendError(err, logger, logger)
	}
	defer back.Close(ctx)
	messaging := back.msgs
	busy := domainCfg.Store.BusyTimeout
	sources, err := newConsoleSources(domainCfg.StoreDir(cfg.AACP.DataDir), busy, nil, messaging, uiCfg.HumanAgentID)
	if err != nil {
		return fail(exitFatal, err)
	}
	defer sources.Close()
	sources.shareWith(back.dom, nil, messaging, uiCfg.HumanAgentID) // nats_state.go
	opts := console.Options{Config: uiCfg, DataDir: cfg.AACP.DataDir, StoreDir: domainCfg.StoreDir(cfg.AACP.DataDir),
		PoliciesDir: domainCfg.PoliciesDir(cfg.AACP.DataDir), BusyTimeout: busy,
		Messaging: messaging, Journal: back.journal(), Token: token, AllowedHosts: web.AllowedHosts, AllowedOrigins: web.AllowedOrigins,
		Health: backendHealth{back: back}, Logger: logger}
	sources.options(&opts)
	ui, err := console.New(opts)
	if err != nil {
		return fail(exitFatal, err)
	}
	defer ui.Close()
	ln, err := net.Listen("tcp", uiCfg.Addr)
	if err != nil {
		return fail(exitFatal, fmt.Errorf("cannot listen on %s (--addr, console.addr): %w", uiCfg.Addr, err))
	}
	hs := &http.Server{Handler: ui, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	url := "http://" + ln.Addr().String() + ui.Prefix()
	if printed {
		fmt.Fprintf(stderr, "mcprt ui: open %s and sign in with the token %s\n", url, token)
	} else {
		fmt.Fprintf(stderr, "mcprt ui: open %s and sign in with the token in $%s\n", url, web.AuthTokenEnvVar)
	}
	logger.Info("mcprt ui ready", "url", url, "dataDir", cfg.AACP.DataDir, "version", version)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fail(exitFatal, fmt.Errorf("serving the console: %w", err))
	case sig := <-signals:
		logger.Info("mcprt ui stopping", "signal", sig.String())
	}
	ui.Drain() // the live event streams end, so that the shutdown need not wait for them
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(ctx)
	_ = hs.Close()
	return exitOK
}

// mountConsole builds the console over the server's data and mounts it
// at /ui/ on web, behind its Host and Origin checks and the server's
// access token; when ctx ends (the server shuts down) its live event
// streams end.
func mountConsole(ctx context.Context, web *streamable.Handler, uiCfg console.Config, httpCfg streamable.Config, cfg config.Base,
	domainCfg config.Domain, back *backends, telemetry *core.Telemetry,
	environ []string, clock core.Clock, logger *slog.Logger) (*mountedConsole, error) {
	messaging, domain := back.msgs, back.dom
	token := ""
	if httpCfg.AuthTokenEnvVar != "" {
		token = lookupEnv(environ, httpCfg.AuthTokenEnvVar)
	}
	busy := domainCfg.Store.BusyTimeout
	sources, err := newConsoleSources(domainCfg.StoreDir(cfg.AACP.DataDir), busy, clock, messaging, cmp.Or(uiCfg.HumanAgentID, console.DefaultConfig().HumanAgentID))
	if err != nil {
		return nil, err
	}
	sources.shareWith(domain, clock, messaging, cmp.Or(uiCfg.HumanAgentID, console.DefaultConfig().HumanAgentID)) // nats_state.go
	opts := console.Options{Config: uiCfg, DataDir: cfg.AACP.DataDir, StoreDir: domainCfg.StoreDir(cfg.AACP.DataDir),
		PoliciesDir: domainCfg.PoliciesDir(cfg.AACP.DataDir), BusyTimeout: busy,
		Messaging: messaging, Journal: back.journal(), Token: token, AllowedHosts: httpCfg.AllowedHosts, AllowedOrigins: httpCfg.AllowedOrigins,
		Health: serverHealth{telemetry: telemetry, back: back, web: web}, Clock: clock, Logger: logger}
	sources.options(&opts)
	ui, err := console.New(opts)
	if err != nil {
		_ = sources.Close()
		return nil, err
	}
	web.Mount(ui.Prefix(), ui)
	context.AfterFunc(ctx, ui.Drain) // a shutdown ends the live event streams rather than wait for them
	return &mountedConsole{Console: ui, sources: sources}, nil
}

// mountedConsole is the console mounted beside the MCP endpoint, with
// its data sources.
type mountedConsole struct {
	*console.Console
	sources *consoleSources
}

// Close closes the console and its sources' store handle.
func (m *mountedConsole) Close() error {
	err := m.Console.Close()
	return errors.Join(err, m.sources.Close())
}

// serverHealth is the health figures of the serving process.
type serverHealth struct {
	telemetry *core.Telemetry
	back      *backends
	web       *streamable.Handler
}

// Figures implements console.Health.
func (h serverHealth) Figures() [][2]string {
	rt := h.telemetry.Snapshot()
	accepted, dropped, failed := h.back.dom.TraceCounts()
	return append([][2]string{
		{"version", version},
		{"MCP sessions", strconv.Itoa(h.web.Sessions())},
		{"live heap", strconv.FormatUint(rt.HeapLiveBytes>>20, 10) + " MiB"},
		{"scheduler latency p99", rt.SchedLatencyP99.String()},
		{"trace events queued / dropped / failed", fmt.Sprintf("%d / %d / %d", accepted, dropped, failed)},
	}, backendFigures(h.back)...)
}
