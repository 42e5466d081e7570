package config

import (
	"slices"
	"strings"

	"github.com/mcprt/mcprt/mcp"
)

// ServerOptions returns opts with the base sections mapped onto it: the
// server's name, version, instructions and mode, the tools sessions see
// (tools.enabled, else tools.profile) and the named profiles a session
// may choose (ToolProfiles), the limits, the stateless hints
// and the redaction keys. The fields that are not configuration (logger,
// clock, ids, transport, audit sink, telemetry, ...) stay as the caller
// set them in opts. An invalid tools.enabled or tools.profile is a
// *Error naming the key.
func ServerOptions(base Base, opts mcp.Options) (mcp.Options, error) {
	tools, err := toolSet(base.Tools)
	if err != nil {
		return mcp.Options{}, err
	}
	configured := mcp.Options{
		Name:         base.Server.Name,
		Version:      base.Server.Version,
		Instructions: base.Server.Instructions,
		Mode:         base.Server.Mode,
		Tools:        tools,
		Limits: mcp.Limits{
			MaxMessageBytes:         base.Transport.MaxMessageBytes,
			MaxOutputBytes:          base.Transport.MaxOutputBytes,
			MaxInFlight:             base.Transport.MaxInFlight,
			MaxBatchResponseBytes:   base.Transport.MaxBatchResponseBytes,
			MaxConcurrentExecutions: base.Resources.MaxConcurrentExecutions,
			MaxPayloadBytes:         base.Tools.MaxPayloadBytes,
			MaxResultBytes:          base.Tools.MaxResultBytes,
			PageSize:                base.Tools.PageSize,
			ToolTimeout:             base.Tools.DefaultTimeout,
			ClientRequestTimeout:    base.Tools.ClientRequestTimeout,
			ShutdownTimeout:         base.Server.ShutdownTimeout,
		},
		Stateless: mcp.StatelessOptions{
			RequestStateTTL: base.Stateless.RequestStateTTL,
			ListTTL:         base.Stateless.ListTTL,
			ReadTTL:         base.Stateless.ReadTTL,
			CacheScope:      base.Stateless.CacheScope,
		},
		RedactKeys: base.Logging.RedactKeys,
		Profiles:   ToolProfiles(),
	}
	opts.Name, opts.Version, opts.Instructions, opts.Mode = configured.Name, configured.Version, configured.Instructions, configured.Mode
	opts.Tools, opts.Limits, opts.Stateless, opts.RedactKeys = configured.Tools, configured.Limits, configured.Stateless, configured.RedactKeys
	opts.Profiles = configured.Profiles
	return opts, nil
}

// toolSet is the mcp.ToolSet of the tools section: tools.enabled when
// it is not empty, else tools.profile; nil for every tool.
func toolSet(cfg ToolsConfig) (*mcp.ToolSet, error) {
	entries := cfg.Enabled
	key := "tools.enabled"
	if len(entries) == 0 {
		if cfg.Profile == "" || cfg.Profile == ToolProfileFull {
			return nil, nil
		}
		entries, key = []string{cfg.Profile}, "tools.profile"
	}
	t, err := mcp.ParseToolSet(entries, ToolProfiles())
	if err != nil {
		return nil, &Error{Key: key, Env: EnvName(key), Value: strings.Join(entries, ","),
			Allowed: "profile names (" + profileNames() + "), tool names, or name prefixes ending in *", Source: "file or env",
			Reason: err.Error()}
	}
	return t, nil
}

// profileNames lists the tool profiles, for errors.
func profileNames() string {
	names := []string{ToolProfileFull}
	for n := range ToolProfiles() {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
