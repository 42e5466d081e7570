package config

import (
	"fmt"

	"github.com/mcprt/mcprt/console"
	"github.com/mcprt/mcprt/natsengine"
	"github.com/mcprt/mcprt/transport/streamable"
)

// Config is the whole configuration of the mcprt binary: every section,
// as one load fills it.
type Config struct {
	// Base holds the sections of the server, its transports' limits, the
	// tools, logging, security and messaging (server.*, transport.*,
	// tools.*, resources.*, logging.*, security.*, stateless.*, aacp.*).
	Base Base
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
	return Config{Base: DefaultBase(version), Domain: DefaultDomain(), HTTP: streamable.DefaultConfig(),
		Console: console.DefaultConfig(), Backend: natsengine.DefaultBackendConfig(), NATS: natsengine.DefaultConfig()}
}

// sections returns a loader that fills every section of c: the base
// sections at the top level, then each package's section at its path.
func (c *Config) sections() (*loader, error) {
	l := newBaseLoader(&c.Base)
	for _, s := range []struct {
		path string
		ptr  any
	}{
		{"store", &c.Domain.Store}, {"guard", &c.Domain.Guard}, {"trace", &c.Domain.Trace},
		{"workflow", &c.Domain.Workflow}, {"agent", &c.Domain.Agent}, {"coord", &c.Domain.Coord},
		{streamable.ConfigPath, &c.HTTP}, {console.ConfigPath, &c.Console},
		{natsengine.BackendPath, &c.Backend}, {natsengine.ConfigPath, &c.NATS},
	} {
		if err := l.Add(s.path, s.ptr); err != nil {
			return nil, fmt.Errorf("config: section %s: %w", s.path, err)
		}
	}
	return l, nil
}

// Load is the binary's one configuration load: Default(version), then
// the JSON file at path (skipped when path is ""), then the MCPRT_*
// variables of environ, through one loader that knows every
// section, so that an unknown key or variable, or an invalid value in any
// section, fails the load. The error is then a *Error naming
// the key, and the Config is the zero value.
func Load(path string, environ []string, version string) (Config, error) {
	c := Default(version)
	l, err := c.sections()
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
func Keys(version string) ([]Key, error) {
	c := Default(version)
	l, err := c.sections()
	if err != nil {
		return nil, err
	}
	return l.Keys(), nil
}
