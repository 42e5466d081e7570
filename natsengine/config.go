package natsengine

import (
	"path/filepath"
	"time"
)

// ConfigPath is the configuration section of this package.
const ConfigPath = "nats"

// Config is the "nats" section of the configuration: how mcprt reaches
// NATS JetStream when aacp.backend is nats, and the NATS server a
// process may embed.
type Config struct {
	URL         string `json:"url" help:"NATS server URL(s) to connect to, comma-separated (nats://host:4222, tls://host:4222); empty means the server this process embeds (nats.server.listen)."`
	Token       string `json:"token" config:"secret" help:"Token the client presents, and that the embedded server requires when set."`
	Credentials string `json:"credentials" help:"Path of a NATS .creds file (JWT and nkey seed) the client presents; empty for none."`
	NkeySeed    string `json:"nkeySeed" help:"Path of a file holding an nkey seed (SU...) the client signs with; empty for none."`
	CAFile      string `json:"caFile" help:"PEM file of the certificate authority the client trusts for tls:// URLs; empty means the system roots."`
	Replicas    int    `json:"replicas" config:"min=1,max=5" help:"Replicas of every stream and key-value bucket mcprt creates (3 in a three-node cluster)."`
	// ConnectTimeout bounds the first connection and stream set-up.
	ConnectTimeout time.Duration `json:"connectTimeoutMs" config:"min=100,max=600000" help:"How long startup waits for the NATS server and its JetStream before failing, in milliseconds."`
	ClaimTTL       time.Duration `json:"claimTtlMs" config:"min=1000,max=3600000" help:"Lifetime of an agent claim without renewal, in milliseconds: a crashed host's agents can be taken over this long after it died (the holder renews every third of it)."`
	DedupWindow    time.Duration `json:"dedupWindowMs" config:"min=1000,max=86400000" help:"JetStream duplicate window of the channel stream, in milliseconds: a publish repeated within it (same message id) is stored once."`

	Server ServerConfig `json:"server"`
}

// ServerConfig is the "nats.server" section: the NATS server embedded by
// `mcprt nats` (always) and by `mcprt`/`mcprt --http` when Listen is set.
type ServerConfig struct {
	Listen   string `json:"listen" help:"host:port the embedded NATS server listens on for clients (mcprt nats defaults to 127.0.0.1:4222); empty: mcprt and mcprt --http embed no server."`
	Name     string `json:"name" help:"Server name, unique in a cluster; empty derives one from the listen address."`
	StoreDir string `json:"storeDir" help:"JetStream store directory of the embedded server; empty means {aacp.dataDir}/nats."`
	TLSCert  string `json:"tlsCert" help:"PEM certificate the embedded server presents to clients (with nats.server.tlsKey); empty: no TLS."`
	TLSKey   string `json:"tlsKey" help:"PEM private key of nats.server.tlsCert."`
	// Cluster settings.
	ClusterName   string   `json:"clusterName" help:"Cluster name shared by every node; empty: a single server, no cluster."`
	ClusterListen string   `json:"clusterListen" help:"host:port the embedded server listens on for routes from the other cluster nodes."`
	Routes        []string `json:"routes" help:"Route URLs of the other cluster nodes (nats-route://host:6222)."`
}

// DefaultConfig returns the defaults: one replica, a 5 s connect
// timeout, 10 s claims, a 2 minute dedup window, no embedded server.
func DefaultConfig() Config {
	return Config{Replicas: 1, ConnectTimeout: 5 * time.Second, ClaimTTL: 10 * time.Second, DedupWindow: 2 * time.Minute}
}

// StoreDirFor is the embedded server's store directory: nats.server.storeDir,
// or {dataDir}/nats.
func (c ServerConfig) StoreDirFor(dataDir string) string {
	if c.StoreDir != "" {
		return c.StoreDir
	}
	return filepath.Join(dataDir, "nats")
}

// BackendPath is the section holding aacp.backend: it is added beside
// the core aacp section, so the key reads aacp.backend.
const BackendPath = "aacp"

// Backends of aacp.backend.
const (
	BackendFiles = "files"
	BackendNATS  = "nats"
)

// BackendConfig is the aacp.backend key: where agent messages are kept;
// and aacp.stateBackend: where the shared domain state is kept.
type BackendConfig struct {
	Backend string `json:"backend" config:"enum=files|nats" help:"Where agent messages are kept: files (the journal in aacp.dataDir, one machine) or nats (NATS JetStream, see the nats keys: several machines)."`
	// StateBackend selects package sharedstate.
	StateBackend string `json:"stateBackend" config:"enum=files|nats" help:"Where memory, sessions (with their guard policies), file reservations and the work queue are kept: files (the SQLite store in store.dir, shared by the processes of one machine) or nats (events on NATS JetStream applied to each process's store: several machines; see the nats keys)."`
}

// DefaultBackendConfig is the default: files for both.
func DefaultBackendConfig() BackendConfig {
	return BackendConfig{Backend: BackendFiles, StateBackend: BackendFiles}
}
