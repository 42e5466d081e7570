package config

// loadBase loads the base sections alone (DefaultBase(version), then the
// file at path unless "", then environ) through newBaseLoader: what the
// tests of the base sections and of the loader's rules use. The binary's
// one load is Load. On error the Base is the zero value.
func loadBase(path string, environ []string, version string) (Base, error) {
	cfg := DefaultBase(version)
	if err := newBaseLoader(&cfg).Load(path, environ); err != nil {
		return Base{}, err
	}
	return cfg, nil
}

// baseKeys returns every key of mcprt's own sections in a stable order
// (the order of the Base fields). The default of server.version is
// shown as "(build version)".
func baseKeys() []Key {
	cfg := DefaultBase("")
	keys := newBaseLoader(&cfg).Keys()
	for i := range keys {
		if keys[i].Path == "server.version" {
			keys[i].Default = "(build version)"
		}
	}
	return keys
}
