// Command mcprt is the mcprt MCP server over stdio: it reads
// newline-delimited JSON-RPC from standard input, writes only protocol
// messages to standard output, and logs JSON lines to standard error.
//
// Usage:
//
//	mcprt [--config FILE]
//	mcprt --http [--config FILE]
//	mcprt --version
//	mcprt --help
//	mcprt aacp [--data-dir DIR] [--json] agents|channel|inbox|dead-letters|requeue ...
//	mcprt trace [--data-dir DIR] show TRACE_ID | list
//	mcprt hook [claude|gemini|codex] (reads the client's hook input on stdin)
//	mcprt hook install-precommit|uninstall-precommit
//	mcprt guard check [--staged] [--session ID] [PATHS...]
//	mcprt ui [--addr 127.0.0.1:8081] [--data-dir DIR] [--config FILE]
//	mcprt nats [--config FILE]
//
// Exit codes: 0 clean exit (stdin EOF, shutdown, first SIGINT/SIGTERM),
// 1 fatal error, 2 bad command-line usage, 75 startup timeout, 78 invalid
// configuration, 130/143 a second SIGINT/SIGTERM during shutdown.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mcprt/mcprt/aacp"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/fixtures"
	"github.com/mcprt/mcprt/mcp"
	"github.com/mcprt/mcprt/tools/builtin"
	"github.com/mcprt/mcprt/tools/domain"
	"github.com/mcprt/mcprt/transport/streamable"
)

// version is the build's version, set with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// defaultGCPercent is the GC target when GOGC is not set.
const defaultGCPercent = 50

// Exit codes.
const (
	exitOK             = 0
	exitFatal          = 1
	exitUsage          = 2
	exitStartupTimeout = 75
	exitConfig         = 78
	exitSIGINT         = 130
	exitSIGTERM        = 143
)

func main() {
	signal.Ignore(syscall.SIGPIPE) // a closed stdout becomes a write error, not a kill
	if os.Getenv("GOGC") == "" {
		// The live heap is tiny and the garbage short-lived: a lower GC
		// target keeps the resident set small for a little GC work.
		debug.SetGCPercent(defaultGCPercent)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Environ()))
}

const usage = `mcprt — an MCP server and coordination hub for AI coding sessions, over stdio or
Streamable HTTP.

Usage:
  mcprt [--config FILE]   serve MCP on stdin/stdout (logs go to stderr)
  mcprt --http [--config FILE]
                          serve MCP over Streamable HTTP at transport.http.addr
                          (default 127.0.0.1:8080, endpoint /mcp)
  mcprt --version         print the version and exit
  mcprt --help            print this help and exit

Subcommands (each has --help):
  mcprt aacp COMMAND      inspect and repair the agent messaging journal
  mcprt trace show|list   print recorded traces (delegation trees, durations)
  mcprt hook [CLIENT]     for AI client hooks (Claude Code, Gemini CLI, Codex):
                          print the agent's unread messages as context
  mcprt hook install-precommit|uninstall-precommit
                          the git pre-commit hook that runs mcprt guard check
  mcprt guard check PATHS check paths against guard policies and reservations
  mcprt ui [--addr A]     the overseer's console alone over a data directory;
                          mcprt --http serves it at /ui/
  mcprt nats              run a NATS JetStream hub for several machines

Configuration comes from the environment (MCPRT_*), then the JSON file named
by --config or MCPRT_CONFIG, then defaults; docs/configuration.md lists every
key. Every MCPRT_* variable must name a key: keep tokens and other variables
of your own outside the MCPRT_ prefix.

Exit codes: 0 clean exit, 1 fatal error, 2 bad usage, 75 startup timeout,
78 invalid configuration, 130/143 second SIGINT/SIGTERM.
`

// run is the whole program; main only supplies the process's streams.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, environ []string) int {
	if len(args) > 0 && args[0] == "aacp" { // the operator commands, not the server
		return runAACP(args[1:], stdout, stderr, environ)
	}
	if len(args) > 0 {
		switch args[0] {
		case "hook": // client hooks and the git pre-commit hook (hook.go)
			return runHook(args[1:], stdin, stdout, stderr, environ)
		case "guard": // check paths against guard policies and reservations (guard.go)
			return runGuard(args[1:], stdout, stderr, environ)
		case "ui": // the overseer's console alone, over a data directory (ui.go)
			return runUI(args[1:], stdout, stderr, environ)
		case "nats": // a NATS JetStream hub or cluster node (nats_hub.go)
			return runNATS(args[1:], stdout, stderr, environ)
		}
	}
	if len(args) > 0 && args[0] == "trace" { // print recorded traces, not the server
		return traceCommand(args[1:], stdout, stderr, environ, version,
			func(err error) { logConfigError(core.NewLogger(stderr, core.LogOptions{}), err) })
	}
	start := time.Now()
	fs := flag.NewFlagSet("mcprt", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "path of a JSON configuration file")
	showVersion := fs.Bool("version", false, "print the version and exit")
	showHelp := fs.Bool("help", false, "print help and exit")
	httpMode := fs.Bool("http", false, "serve MCP over Streamable HTTP at transport.http.addr instead of stdio")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "mcprt: %v\nRun 'mcprt --help' for usage.\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcprt: unexpected argument %q; mcprt takes only flags\nRun 'mcprt --help' for usage.\n", fs.Arg(0))
		return exitUsage
	}
	switch {
	case *showHelp:
		fmt.Fprint(stdout, usage)
		return exitOK
	case *showVersion:
		fmt.Fprintf(stdout, "mcprt %s\n", version)
		return exitOK
	}

	// The startup deadline covers config loading too, so take its length
	// from the environment first (the file cannot be read before it runs).
	bootLog := core.NewLogger(stderr, core.LogOptions{})
	envAll, err := config.Load("", environ, version)
	envCfg := envAll.Base
	if err != nil { // the environment alone is invalid: no need to read the file
		logConfigError(bootLog, err)
		return exitConfig
	}
	startupTimeout := envCfg.Server.StartupTimeout
	// Signals are caught from here on: one that arrives during startup
	// shuts down cleanly once the session exists.
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	ready := make(chan struct{})
	startupTimer := time.AfterFunc(startupTimeout-time.Since(start), func() {
		select {
		case <-ready:
		default:
			bootLog.Error("startup did not finish in time; exiting",
				"startupTimeoutMs", startupTimeout.Milliseconds(), "key", "server.startupTimeoutMs")
			os.Exit(exitStartupTimeout)
		}
	})
	defer startupTimer.Stop()

	path := *configPath
	if path == "" {
		path = lookupEnv(environ, "MCPRT_CONFIG")
	}
	all, err := config.Load(path, environ, version)
	cfg, domainCfg, httpCfg, uiCfg := all.Base, all.Domain, all.HTTP, all.Console
	if err != nil {
		logConfigError(bootLog, err)
		return exitConfig
	}
	level, err := core.ParseLevel(cfg.Logging.Level)
	if err != nil { // config.Load validated it; keep the check honest
		bootLog.Error("invalid configuration: logging.level", "error", err.Error())
		return exitConfig
	}
	// Records are batched on their way to stderr and flushed at every exit.
	logOut := core.NewLogWriter(stderr, core.LogWriterOptions{MaxBuffered: cfg.Logging.MaxBufferBytes})
	defer logOut.Close()
	logger := core.NewLogger(logOut, core.LogOptions{Level: level, RedactKeys: cfg.Logging.RedactKeys})
	exit := func(code int) {
		_ = logOut.Close()
		os.Exit(code)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	telemetry := core.NewTelemetry(core.SystemClock{})
	// The domain and messaging read one clock; in mode TEST the fixture
	// clock_advance moves it, so black-box tests make time pass by hand.
	var clock core.Clock = core.SystemClock{}
	var testClock *core.OffsetClock
	if cfg.Server.Mode == mcp.ModeTest {
		testClock = &core.OffsetClock{}
		clock = testClock
	}
	go telemetry.Run(ctx)
	// The stores, from the configuration (backends.go, as mcprt aacp and
	// mcprt ui build them): aacp.backend=nats connects (and embeds a
	// server if asked) now, so that an unreachable engine fails the start;
	// memory, sessions, guard policies and traces share one SQLite store,
	// opened by its first use (or now, to apply the shared state); the
	// journal in aacp.dataDir is opened by the first aacp_* call.
	back, err := openBackends(ctx, backendOptions{Config: all, AACP: cfg.AACP, Embed: true, Domain: true, Clock: clock, Logger: logger})
	if err != nil {
		return reportBackendError(err, logger, bootLog)
	}
	natsBack, dom, msgs := back.nats, back.dom, back.msgs
	defer natsBack.Close()
	defer msgs.Close()
	if cfg.Server.Instructions == "" { // who the model is, when to check its inbox, how to answer
		cfg.Server.Instructions = domain.DefaultInstructions(cfg.AACP.AgentID)
	}
	// The one place the configuration becomes the server's options.
	srvOpts, err := config.ServerOptions(cfg, mcp.Options{Logger: logger, Transport: mcp.TransportStdio,
		Audit: msgs.AuditSink(dom.AuditSink()), Telemetry: telemetry, DroppedLogs: logOut.Dropped})
	var srv *mcp.Server
	if err == nil {
		srv, err = mcp.NewServer(srvOpts)
	}
	if err != nil {
		logger.Error("cannot build the server", "error", err.Error())
		return exitFatal
	}
	agents := aacp.NewCoordinator(aacp.Options{MaxPayloadBytes: cfg.Tools.MaxPayloadBytes, Logger: logger})
	// Over HTTP the transport knows which sessions carry the admin token.
	var web *streamable.Handler
	adminAuthorized := func(*mcp.Session) bool { return false }
	if *httpMode {
		webOpts := streamable.Options{Logger: logger}
		if cfg.Tools.AdminPolicy.Mode == config.AdminPolicyToken {
			webOpts.AdminTokenEnvVar = cfg.Tools.AdminPolicy.TokenEnvVar
		}
		if web, err = streamable.NewHandler(srv, httpCfg, webOpts); err != nil {
			logConfigError(bootLog, err)
			return exitConfig
		}
		adminAuthorized = web.AdminAuthorized
	}
	// agent_list is the domain's: it also lists profiles and messaging agents.
	if err := builtin.Register(srv, builtin.Options{Agents: agents, Version: cfg.Server.Version,
		Admin:       cfg.Tools.AdminRegistrationEnabled && cfg.Security.DynamicRegistrationEnabled,
		AdminPolicy: cfg.Tools.AdminPolicy.Mode, MaxStateBytes: cfg.Tools.MaxStateBytes, RedactKeys: cfg.Logging.RedactKeys,
		AdminAuthorized: adminAuthorized, MessagingHealth: withSharedState(messagingHealth(natsBack, cfg.AACP.DataDir), dom, natsBack)}); err != nil {
		logger.Error("cannot register the built-in tools", "error", err.Error())
		return exitFatal
	}
	if cfg.Server.Mode == mcp.ModeTest { // the fixtures of black-box tests and conformance suites
		if err := fixtures.Register(srv, fixtures.Options{Agents: agents, Clock: testClock,
			Conformance: slices.Contains(cfg.Server.Fixtures, config.FixtureConformance)}); err != nil {
			logger.Error("cannot register the TEST fixtures", "error", err.Error())
			return exitFatal
		}
	}
	if err := msgs.Register(srv); err != nil {
		logger.Error("cannot register the aacp tools", "error", err.Error())
		return exitFatal
	}
	dom.ConnectMessaging(msgs) // reservations and the work queue: caller, presence, notices
	if err := dom.ConnectAgents(agents, msgs); err != nil {
		logger.Error("cannot connect the agent tools", "error", err.Error())
		return exitFatal
	}
	if err := dom.Register(srv); err != nil {
		logger.Error("cannot register the memory, session, guard and trace tools", "error", err.Error())
		return exitFatal
	}
	if web != nil && uiCfg.Enabled { // the overseer's console at /ui/ (ui.go)
		ui, err := mountConsole(ctx, web, uiCfg, httpCfg, cfg, domainCfg, back, telemetry, environ, clock, logger)
		if err != nil {
			logger.Error("cannot start the console", "error", err.Error())
			return exitFatal
		}
		defer ui.Close()
	}
	var serve func() error
	if web != nil {
		serve = func() error {
			return web.ListenAndServe(ctx, func(addr net.Addr) {
				close(ready)
				logger.Info("mcprt ready", "version", cfg.Server.Version, "mode", cfg.Server.Mode, "transport", "http",
					"url", "http://"+addr.String()+httpCfg.Path, "startupMs", time.Since(start).Milliseconds())
			})
		}
	} else {
		stream := srv.Lines(stdin, stdout)
		close(ready)
		logger.Info("mcprt ready", "version", cfg.Server.Version, "mode", cfg.Server.Mode,
			"startupMs", time.Since(start).Milliseconds())
		serve = func() error { return srv.Run(ctx, stream) }
	}

	// The first SIGINT/SIGTERM ends the session gracefully (Run waits up
	// to server.shutdownTimeoutMs for handlers); a second one ends the
	// process at once.
	go func() {
		sig, ok := <-signals
		if !ok {
			return
		}
		logger.Info("shutting down on signal", "signal", sig.String())
		cancel()
		sig = <-signals
		logger.Warn("second signal during shutdown; exiting now", "signal", sig.String())
		if sig == syscall.SIGINT {
			exit(exitSIGINT)
		}
		exit(exitSIGTERM)
	}()
	code := served2code(logger, serve())
	agentWait, stopAgents := context.WithTimeout(context.Background(), time.Second)
	defer stopAgents()
	if err := agents.Close(agentWait); err != nil {
		logger.Warn("agents still busy at exit", "error", err.Error())
	}
	dom.Agents().Close() // its delegations' receiver, before the broker under it
	if err := msgs.Close(); err != nil {
		logger.Warn("closing agent messaging failed", "error", err.Error())
	}
	domainWait, stopDomain := context.WithTimeout(context.Background(), 5*time.Second)
	defer stopDomain()
	if err := dom.Close(domainWait); err != nil { // writes the queued trace events
		logger.Warn("closing the store failed; trace events still queued are lost", "error", err.Error())
	}
	logger.Info("mcprt stopped")
	return code
}

// served2code logs why the session ended and returns the exit code.
func served2code(logger *slog.Logger, err error) int {
	if err != nil {
		logger.Error("the session failed", "error", err.Error())
		return exitFatal
	}
	logger.Info("shutting down: the session ended (stdin closed, shutdown, or a signal)")
	return exitOK
}

// logConfigError writes the one ERROR line for an invalid configuration:
// msg names the key path; key, env, value and allowed are fields.
func logConfigError(log *slog.Logger, err error) {
	ce, ok := config.AsError(err)
	if !ok {
		log.Error("invalid configuration: "+err.Error(), "error", err.Error())
		return
	}
	log.Error("invalid configuration: "+strings.TrimPrefix(ce.Error(), "config: "),
		"key", ce.Key, "env", ce.Env, "value", ce.Value, "allowed", ce.Allowed, "reason", ce.Reason)
}

func lookupEnv(environ []string, name string) string {
	for _, kv := range environ {
		if len(kv) > len(name) && kv[:len(name)] == name && kv[len(name)] == '=' {
			return kv[len(name)+1:]
		}
	}
	return ""
}
