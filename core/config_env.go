package core

import (
	"slices"
	"strings"
)

// envPrefix starts every variable that belongs to mcprt.
const envPrefix = "MCPRT_"

// applyEnv applies the MCPRT_* variables of environ to cfg, in sorted
// variable order, rejecting unknown ones.
func applyEnv(cfg *Config, sources map[string]string, specs []keySpec, environ []string) error {
	vars := make(map[string]string)
	var names []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, envPrefix) {
			continue
		}
		if _, dup := vars[name]; dup { // the first one counts, as in os.Getenv
			continue
		}
		vars[name] = value
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)

	byEnv := make(map[string]*keySpec, len(specs))
	known := make([]string, 0, len(specs)+1)
	var tokenSpec *keySpec
	for i := range specs {
		env := EnvName(specs[i].path)
		byEnv[env] = &specs[i]
		known = append(known, env)
		if specs[i].path == "tools.adminPolicy.tokenEnvVar" {
			tokenSpec = &specs[i]
		}
	}
	known = append(known, envConfig)

	// The variable that holds the admin token may carry the MCPRT_ prefix;
	// it is the token's, not a configuration key.
	tokenVar := cfg.Tools.AdminPolicy.TokenEnvVar
	if v, ok := vars[EnvName(tokenSpec.path)]; ok {
		tokenVar = v
	}

	for _, name := range names {
		value := vars[name]
		s, ok := byEnv[name]
		switch {
		case ok:
		case name == envConfig || name == tokenVar:
			continue
		default:
			return &ConfigError{
				Env:     name,
				Value:   redactIfSecret(name, shorten(value)),
				Allowed: "a known " + envPrefix + "* variable (see README)" + suggest(name, known, strings.ToUpper),
				Source:  sourceEnv,
				Reason:  "unknown variable",
			}
		}
		v, reason := s.decodeEnv(value)
		if reason == "" {
			reason = s.check(v)
		}
		if reason != "" {
			return s.newError(sourceEnv, value, reason)
		}
		s.set(cfg, v)
		sources[s.path] = sourceEnv
	}
	return nil
}

// suggest returns "; did you mean X?" for the candidate closest to name
// (after normalize) when it is within a small edit distance, else "".
// Ties go to the earlier candidate.
func suggest(name string, candidates []string, normalize func(string) string) string {
	const maxLen = 128 // beyond this a typo is unlikely and the cost grows
	if len(name) > maxLen {
		return ""
	}
	n := normalize(name)
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(n, normalize(c))
		if d <= max(2, len(c)/3) && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// editDistance is the Levenshtein distance of a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// redactIfSecret returns "[REDACTED]" instead of value when name (an
// unknown key or variable, whose value would otherwise reach the log) looks
// like it holds a secret: it contains one of the default redactKeys,
// ignoring case and underscores.
func redactIfSecret(name, value string) string {
	n := strings.ToLower(strings.ReplaceAll(name, "_", ""))
	for _, k := range DefaultConfig("").Logging.RedactKeys {
		if strings.Contains(n, strings.ToLower(k)) {
			return "[REDACTED]"
		}
	}
	return value
}
