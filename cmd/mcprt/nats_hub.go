package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcprt/mcprt/aacp/natsjournal"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/natsengine"
)

const natsUsage = `mcprt nats — run a NATS JetStream hub (or cluster node) for mcprt processes
on several machines (see docs/nats.md).

Usage:
  mcprt nats [--config FILE]

It embeds a NATS server with JetStream at nats.server.listen (default
127.0.0.1:4222), stores in nats.server.storeDir (default {aacp.dataDir}/nats),
requires nats.token when set, serves TLS with nats.server.tlsCert/tlsKey,
joins nats.server.routes as nats.server.clusterName, creates the messaging
streams and buckets with nats.replicas, and runs until SIGINT or SIGTERM.
Under aacp.fsync=always (the default) JetStream syncs every write.

Exit codes: 0 stopped by a signal, 1 the streams could not be created,
2 bad usage, 78 invalid configuration (or the address is taken).
`

// runNATS runs `mcprt nats`: a hub.
func runNATS(args []string, stdout, stderr io.Writer, environ []string) int {
	fs := flag.NewFlagSet("mcprt nats", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, natsUsage)
			return exitOK
		}
		fmt.Fprintf(stderr, "mcprt nats: %v\nRun 'mcprt nats --help' for usage.\n", err)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcprt nats: unexpected argument %q\nRun 'mcprt nats --help' for usage.\n", fs.Arg(0))
		return exitUsage
	}
	path := *configPath
	if path == "" {
		path = lookupEnv(environ, "MCPRT_CONFIG")
	}
	all, err := config.Load(path, environ, version)
	cfg, ns := all.Base, natsSettings{Backend: all.Backend, NATS: all.NATS}
	logger := core.NewLogger(stderr, core.LogOptions{})
	if err != nil {
		logConfigError(logger, err)
		return exitConfig
	}
	if ns.NATS.Server.Listen == "" {
		ns.NATS.Server.Listen = "127.0.0.1:4222"
	}
	ns.Backend.Backend = natsengine.BackendNATS
	ns.NATS.URL = "" // the hub connects to itself
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hub, code, err := startNATS(ctx, cfg, ns, logger)
	if err != nil {
		logger.Error("mcprt nats: cannot start the hub", "error", err.Error())
		return code
	}
	defer hub.Close()
	logger.Info("mcprt nats ready", "url", hub.srv.ClientURL(), "cluster", hub.srv.ClusterAddr(),
		"streams", natsjournal.ChannelStream+" "+natsjournal.LedgerStream+" "+natsjournal.DeadStream, "replicas", ns.NATS.Replicas)
	sig := <-signals
	logger.Info("mcprt nats: stopping", "signal", sig.String())
	return exitOK
}
