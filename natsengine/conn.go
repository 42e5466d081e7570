package natsengine

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnreachable is wrapped by the error of Connect when no NATS server
// with JetStream answered within the connect timeout.
var ErrUnreachable = errors.New("the NATS server is unreachable")

// ConnOptions configures Connect.
type ConnOptions struct {
	// Config is the nats section (URL, credentials, timeouts).
	Config Config
	// URL overrides Config.URL (the embedded server's URL).
	URL string
	// Name is the connection's name, shown by the server's monitoring.
	Name string
	// Logger receives disconnections and reconnections; nil discards.
	Logger *slog.Logger
}

// Conn is a connection to NATS with its JetStream context. It reconnects
// by itself, forever, and counts its reconnections for health.
type Conn struct {
	NC *nats.Conn
	JS jetstream.JetStream

	cfg        Config
	reconnects atomic.Int64
	log        *slog.Logger
}

// Connect connects to opts.URL (or Config.URL) and checks that JetStream
// answers, within Config.ConnectTimeout. An unreachable server, refused
// credentials or a server without JetStream is an error that says which.
func Connect(ctx context.Context, opts ConnOptions) (*Conn, error) {
	cfg := opts.Config
	url := opts.URL
	if url == "" {
		url = cfg.URL
	}
	if url == "" {
		return nil, errors.New("nats.url is empty and no NATS server is embedded; set nats.url (nats://host:4222) or nats.server.listen")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Conn{cfg: cfg, log: log}
	timeout := cfg.ConnectTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	no := []nats.Option{
		nats.Name(opts.Name), nats.Timeout(timeout),
		nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond), nats.RetryOnFailedConnect(false),
		nats.ReconnectBufSize(8 << 20),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats: disconnected; reconnecting", "error", err.Error())
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			c.reconnects.Add(1)
			log.Info("nats: reconnected", "url", nc.ConnectedUrlRedacted())
		}),
	}
	if cfg.Token != "" {
		no = append(no, nats.Token(cfg.Token))
	}
	if cfg.Credentials != "" {
		no = append(no, nats.UserCredentials(cfg.Credentials))
	}
	if cfg.NkeySeed != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NkeySeed)
		if err != nil {
			return nil, fmt.Errorf("nats.nkeySeed %s: %w", cfg.NkeySeed, err)
		}
		no = append(no, o)
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("nats.caFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("nats.caFile %s holds no PEM certificate", cfg.CAFile)
		}
		no = append(no, nats.Secure(&tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}))
	}
	nc, err := connectUntil(ctx, url, timeout, no)
	if err != nil {
		return nil, err
	}
	// An unanswered asynchronous publish fails after 3 s, so that its
	// writer can send it again (a leader change, a reconnection).
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncTimeout(3*time.Second))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("nats: jetstream: %w", err)
	}
	c.NC, c.JS = nc, js
	// JetStream answers once the account info request does (in a cluster:
	// once a meta leader exists).
	deadline := time.Now().Add(timeout)
	for first := true; ; first = false {
		actx, cancel := context.WithTimeout(ctx, min(time.Second, time.Until(deadline)+time.Millisecond))
		_, err = js.AccountInfo(actx)
		cancel()
		if err == nil {
			return c, nil
		}
		if first {
			log.Info("nats: connected; waiting for JetStream to answer (a cluster elects its leader first)", "url", redact(url), "error", err.Error())
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			nc.Close()
			return nil, fmt.Errorf("nats at %s: JetStream did not answer within %v (is JetStream enabled, and does the cluster have a quorum?): %w: %w", redact(url), timeout, ErrUnreachable, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// connectUntil retries the first connection until timeout: a hub that is
// starting at the same moment is not a failure.
func connectUntil(ctx context.Context, url string, timeout time.Duration, no []nats.Option) (*nats.Conn, error) {
	deadline := time.Now().Add(timeout)
	for {
		nc, err := nats.Connect(url, no...)
		if err == nil {
			return nc, nil
		}
		if errors.Is(err, nats.ErrAuthorization) || strings.Contains(err.Error(), "Authorization") || strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509") {
			return nil, fmt.Errorf("nats at %s refused this client (check nats.token, nats.credentials, nats.nkeySeed, nats.caFile): %w", redact(url), err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("nats at %s: no connection within %v (is the hub running? check nats.url): %w: %w", redact(url), timeout, ErrUnreachable, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// redact drops user information from URLs.
func redact(url string) string {
	parts := strings.Split(url, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if s := strings.Index(p, "://"); s >= 0 && s < at {
				parts[i] = p[:s+3] + "***" + p[at:]
			}
		}
	}
	return strings.Join(parts, ",")
}

// Reconnects is how many times the connection was re-established.
func (c *Conn) Reconnects() int64 { return c.reconnects.Load() }

// Close drains nothing: it closes the connection at once.
func (c *Conn) Close() {
	if c != nil && c.NC != nil {
		c.NC.Close()
	}
}

// Replicas is the configured replica count.
func (c *Conn) Replicas() int { return max(c.cfg.Replicas, 1) }

// Config is the nats section the connection was made with.
func (c *Conn) Config() Config { return c.cfg }
