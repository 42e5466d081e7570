// Package natsengine runs and reaches NATS JetStream for mcprt: the
// configuration (aacp.backend and the nats section), an embedded NATS
// server with JetStream (StartServer: a hub, or one node of a cluster),
// and the client connection (Connect).
//
// StartServer starts a server on nats.server.listen with its JetStream
// store in nats.server.storeDir, requiring nats.token when set, serving
// TLS with nats.server.tlsCert/tlsKey, and joining a cluster when
// nats.server.clusterName, clusterListen and routes are set. With
// ServerOptions.SyncAlways (aacp.fsync=always) JetStream fsyncs every
// write before acknowledging it; otherwise it syncs every 2 minutes.
//
// Connect connects within nats.connectTimeoutMs and checks that JetStream
// answers; otherwise it fails with an error that says what to check (and
// wraps ErrUnreachable when nothing answered). Once connected, the
// connection reconnects by itself, forever, and counts reconnections for
// the health tool.
//
// Subpackages: lease (the linearizable lease primitive) and natstest
// (embedded servers and clusters for tests).
package natsengine
