package main

// The one place the configuration becomes the stores a process reads and
// writes: the server (mcprt, mcprt --http), the operator commands (mcprt
// aacp) and the standalone console (mcprt ui) all build them with
// openBackends, so that each reads agents, presence, messages,
// reservations and tasks where the server keeps them — the data
// directory's files, or NATS (aacp.backend, aacp.stateBackend).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/config"
	"github.com/mcprt/mcprt/console"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/tools/domain"
	"github.com/mcprt/mcprt/tools/messaging"
)

// backendOptions say what openBackends builds.
type backendOptions struct {
	// Config is the loaded configuration.
	Config config.Config
	// AACP is the messaging section this process acts with (the server's
	// aacp section; mcprt ui's with the person's agent id).
	AACP messaging.Config
	// Embed lets the process embed the NATS server nats.server.listen
	// asks for; the operator commands never embed one.
	Embed bool
	// Domain opens the domain (the store, and the shared state under
	// aacp.stateBackend=nats, applied to it); mcprt aacp needs none.
	Domain bool
	// Clock and Logger go to every part; nil means the system clock and
	// no logging.
	Clock  core.Clock
	Logger *slog.Logger
}

// backends are a process's stores: the NATS side (nil when nothing is on
// NATS), the messaging service (its journal and the agents' presence) and
// the domain (nil unless asked for).
type backends struct {
	aacp messaging.Config
	ns   natsSettings
	nats *natsBackend
	msgs *messaging.Service
	dom  *domain.Domain
}

// backendError is why openBackends failed: the exit code, and whether it
// is a configuration error (logged as one).
type backendError struct {
	code   int
	config bool
	msg    string
	err    error
}

func (e *backendError) Error() string { return e.msg + ": " + e.err.Error() }
func (e *backendError) Unwrap() error { return e.err }

// openBackends builds the stores o.Config selects: NATS connected (and a
// server embedded when o.Embed and nats.server.listen say so), the
// messaging service on the journal and presence of the selected backend,
// and, when o.Domain, the domain on the local store, applying the shared
// state when it is on NATS. Close the result when done.
func openBackends(ctx context.Context, o backendOptions) (*backends, error) {
	cfg := o.Config.Base
	cfg.AACP = o.AACP
	ns := natsSettings{Backend: o.Config.Backend, NATS: o.Config.NATS}
	if !o.Embed {
		ns.NATS.Server.Listen = ""
	}
	if o.Clock == nil {
		o.Clock = core.SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	nb, code, err := startNATS(ctx, cfg, ns, o.Logger)
	if err != nil {
		return nil, &backendError{code: code, msg: "cannot start the NATS messaging backend", err: err}
	}
	b := &backends{aacp: cfg.AACP, ns: ns, nats: nb}
	if o.Domain {
		shared := nb.sharedState(ns)
		if shared != nil {
			shared.DedupWindow = stateDedupWindow(ns.NATS, cfg, o.Config.Domain)
		}
		b.dom, err = domain.New(domain.Options{Config: o.Config.Domain, Base: cfg, Logger: o.Logger, Clock: o.Clock, Shared: shared})
		if errors.Is(err, domain.ErrSharedState) {
			b.Close(ctx)
			return nil, &backendError{code: exitFatal, msg: "cannot start the shared state on NATS", err: err}
		}
		if err != nil {
			b.Close(ctx)
			return nil, &backendError{code: exitConfig, config: true, msg: "invalid configuration", err: err}
		}
	}
	b.msgs, err = messaging.New(messaging.Options{Config: cfg.AACP, Logger: o.Logger, Clock: o.Clock, Open: nb.opener(), Presence: nb.presenceStore()})
	if err != nil {
		b.Close(ctx)
		return nil, &backendError{code: exitConfig, config: true, msg: "invalid configuration", err: err}
	}
	return b, nil
}

// openJournal opens the messaging journal for a reader that hosts no
// agent (mcprt aacp): the one on NATS, or the data directory's files.
// Close it when done; the NATS connection stays open until Close.
func (b *backends) openJournal() (journal.Store, error) {
	if st := b.nats.shared(); st != nil {
		return st, nil
	}
	st, err := journal.OpenFile(journal.FileOptions{Dir: b.aacp.DataDir, Fsync: journal.FsyncPolicy(b.aacp.Fsync)})
	if err != nil {
		return nil, fmt.Errorf("open the messaging journal in %s: %w", b.aacp.DataDir, err)
	}
	return st, nil
}

// journal is where the console reads the messaging journal: nil (the
// data directory's files) unless it is on NATS.
func (b *backends) journal() console.JournalSource { return b.nats.journalSource(b.ns) }

// Close closes the messaging service, the domain and the NATS side, in
// that order; ctx bounds the domain's last trace writes.
func (b *backends) Close(ctx context.Context) error {
	if b == nil {
		return nil
	}
	var errs []error
	if b.msgs != nil {
		if err := b.msgs.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close agent messaging: %w", err))
		}
	}
	if b.dom != nil {
		if err := b.dom.Close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("close the store: %w", err))
		}
	}
	b.nats.Close()
	return errors.Join(errs...)
}

// reportBackendError logs why openBackends failed and returns the exit
// code.
func reportBackendError(err error, logger, bootLog *slog.Logger) int {
	var be *backendError
	if !errors.As(err, &be) {
		logger.Error(err.Error())
		return exitFatal
	}
	if be.config {
		logConfigError(bootLog, be.err)
	} else {
		logger.Error(be.msg, "error", be.err.Error())
	}
	return be.code
}
