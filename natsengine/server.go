package natsengine

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerOptions configures an embedded NATS server.
type ServerOptions struct {
	// Config is the nats.server section.
	Config ServerConfig
	// StoreDir is the JetStream store directory (ServerConfig.StoreDirFor).
	StoreDir string
	// Token, when set, is required of every client.
	Token string
	// SyncAlways makes JetStream fsync every write before acknowledging
	// it (aacp.fsync=always); otherwise it syncs every SyncInterval
	// (JetStream's default: 2 minutes).
	SyncAlways bool
	// ClusterAdvertise, when set, is the route address this server gives
	// the other nodes instead of its cluster listen address (tests route a
	// cluster through proxies with it).
	ClusterAdvertise string
	// ReadyTimeout bounds the wait for the server (and, in a cluster, its
	// JetStream meta leader is not awaited: streams are created later).
	ReadyTimeout time.Duration
}

// Server is a running embedded NATS server with JetStream.
type Server struct {
	s      *server.Server
	useTLS bool
}

// StartServer starts an embedded NATS server with JetStream per opts and
// waits until it accepts clients. It fails with a clear error when the
// addresses are malformed or taken, the TLS files do not load, or the
// store directory cannot be used.
func StartServer(opts ServerOptions) (*Server, error) {
	c := opts.Config
	if c.Listen == "" {
		return nil, errors.New("nats.server.listen is empty; want host:port (port 0 picks a free one)")
	}
	host, port, err := splitHostPort("nats.server.listen", c.Listen)
	if err != nil {
		return nil, err
	}
	so := &server.Options{
		ServerName: c.Name, Host: host, Port: port,
		JetStream: true, StoreDir: opts.StoreDir, SyncAlways: opts.SyncAlways,
		Authorization: opts.Token, NoSigs: true, NoLog: true,
		MaxPayload: 8 << 20,
	}
	if so.ServerName == "" {
		so.ServerName = "mcprt-" + strings.NewReplacer(":", "-", ".", "-", "[", "", "]", "").Replace(c.Listen)
	}
	if c.TLSCert != "" || c.TLSKey != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: c.TLSCert, KeyFile: c.TLSKey})
		if err != nil {
			return nil, fmt.Errorf("nats.server.tlsCert/tlsKey: %w", err)
		}
		so.TLS, so.TLSConfig, so.TLSTimeout = true, tc, 2
	}
	if c.ClusterName != "" || c.ClusterListen != "" || len(c.Routes) > 0 {
		if c.ClusterName == "" || c.ClusterListen == "" {
			return nil, errors.New("a cluster needs both nats.server.clusterName and nats.server.clusterListen (and nats.server.routes to the other nodes)")
		}
		ch, cp, err := splitHostPort("nats.server.clusterListen", c.ClusterListen)
		if err != nil {
			return nil, err
		}
		so.Cluster = server.ClusterOpts{Name: c.ClusterName, Host: ch, Port: cp, Advertise: opts.ClusterAdvertise}
		for _, r := range c.Routes {
			u, err := url.Parse(r)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("nats.server.routes: %q is not a route URL; want nats-route://host:port", r)
			}
			so.Routes = append(so.Routes, u)
		}
	}
	s, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	go s.Start()
	wait := opts.ReadyTimeout
	if wait <= 0 {
		wait = 10 * time.Second
	}
	if !s.ReadyForConnections(wait) {
		s.Shutdown()
		return nil, fmt.Errorf("embedded NATS server did not accept connections on %s within %v (address in use, or store %s unusable?)", c.Listen, wait, opts.StoreDir)
	}
	return &Server{s: s, useTLS: so.TLS}, nil
}

func splitHostPort(key, hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %q is not host:port: %w", key, hp, err)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return "", 0, fmt.Errorf("%s: port %q is not a number from 0 to 65535", key, p)
	}
	if n == 0 {
		n = server.RANDOM_PORT
	}
	return h, n, nil
}

// ClientURL is the URL clients connect to (nats:// or tls://).
func (s *Server) ClientURL() string {
	u := s.s.ClientURL()
	if s.useTLS && strings.HasPrefix(u, "nats://") {
		u = "tls://" + strings.TrimPrefix(u, "nats://")
	}
	return u
}

// ClusterAddr is the address the server accepts routes on, "" when it is
// not clustered.
func (s *Server) ClusterAddr() string {
	if a := s.s.ClusterAddr(); a != nil {
		return a.String()
	}
	return ""
}

// Name is the server's name.
func (s *Server) Name() string { return s.s.Name() }

// Shutdown stops the server and waits until it has stopped.
func (s *Server) Shutdown() {
	s.s.Shutdown()
	s.s.WaitForShutdown()
}

// JetStreamClusterReady reports whether the server knows a JetStream meta
// leader (always true for a single server with JetStream on).
func (s *Server) JetStreamClusterReady() bool {
	return s.s.JetStreamIsCurrent() || !s.s.JetStreamIsClustered()
}
