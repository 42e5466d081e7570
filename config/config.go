package config

import (
	"github.com/mcprt/mcprt/console"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/transport/streamable"
)

// Config is the whole configuration of the mcprt binary: every section,
// as one load fills it.
type Config struct {
	// Base holds the sections of the server, its transports' limits, the
	// tools, logging, security and messaging (server.*, transport.*,
	// tools.*, resources.*, logging.*, security.*, stateless.*, aacp.*).
	Base core.Config
	// Domain holds the sections of the domain tools (store.*, guard.*,
	// trace.*, workflow.*, agent.*, coord.*).
	Domain Domain
	// HTTP is the Streamable HTTP transport's section (transport.http.*).
	HTTP streamable.Config
	// Console is the overseer's console's section (console.*).
	Console console.Config
	// Backend is aacp.backend: which journal messaging uses.
	Backend natsengine.BackendConfig
	// NATS is the nats section: the NATS connection and the embedded
	// server.
	NATS natsengine.Config
}

// Default returns the defaults of every section; version is the build
// version (server.version's default).
func Default(version string) Config {
	return Config{Base: core.DefaultConfig(version), Domain: DefaultDomain(), HTTP: streamable.DefaultConfig(),
		Console: console.DefaultConfig(), Backend: natsengine.DefaultBackendConfig(), NATS: natsengine.DefaultConfig()}
}

// loader returns a Loader that fills every section of c.
func (c *Config) loader() (*core.Loader, error) {
	l := core.NewConfigLoader(&c.Base)
	for _, add := range []func(*core.Loader) error{
		c.Domain.AddTo,
		func(l *core.Loader) error { return streamable.AddConfig(l, &c.HTTP) },
		func(l *core.Loader) error { return console.AddConfig(l, &c.Console) },
		func(l *core.Loader) error { return natsengine.AddBackendConfig(l, &c.Backend) },
		func(l *core.Loader) error { return natsengine.AddConfig(l, &c.NATS) },
	} {
		if err := add(l); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Load is the binary's one configuration load: Default(version), then
// the JSON file at path (skipped when path is ""), then the MCPRT_*
// variables of environ, through one core.Loader that knows every
// section, so that an unknown key or variable, or an invalid value in any
// section, fails the load. The error is then a *core.ConfigError naming
// the key, and the Config is the zero value.
func Load(path string, environ []string, version string) (Config, error) {
	c := Default(version)
	l, err := c.loader()
	if err != nil {
		return Config{}, err
	}
	if err := l.Load(path, environ); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Keys lists every key of the binary's configuration with its variable,
// default, allowed values and meaning, section by section in the order
// Load adds them: what docs/configuration.md lists.
func Keys(version string) ([]core.ConfigKey, error) {
	c := Default(version)
	l, err := c.loader()
	if err != nil {
		return nil, err
	}
	return l.Keys(), nil
}
