package config

import (
	"reflect"
	"slices"
	"strings"
)

// envPrefix starts every variable that belongs to mcprt.
const envPrefix = "MCPRT_"

// applyEnv applies the MCPRT_* variables of environ to the section values
// work, in sorted variable order, rejecting unknown ones.
func (l *loader) applyEnv(work []reflect.Value, sources map[string]string, environ []string) error {
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

	// A variable named by an envvar key (the one holding the admin token,
	// say) may carry the MCPRT_ prefix; it is that key's, not a key. The
	// name is the key's value from the environment if set there, else from
	// the file or the default.
	exempt := map[string]bool{envConfig: true}
	for i := range l.specs {
		s := &l.specs[i]
		if !s.envVarName {
			continue
		}
		name, ok := vars[s.env]
		if !ok {
			name, _ = s.get(work[s.section]).(string)
		}
		exempt[name] = true
	}

	for _, name := range names {
		value := vars[name]
		i, ok := l.byEnv[name]
		switch {
		case ok:
		case exempt[name]:
			continue
		default:
			return &Error{
				Env:     name,
				Value:   redactIfSecret(name, shorten(value)),
				Allowed: unknownVarHelp(name, l.envNames()),
				Source:  sourceEnv,
				Reason:  "unknown variable",
			}
		}
		s := &l.specs[i]
		v, reason := s.decodeEnv(value)
		if reason == "" {
			reason = s.check(v)
		}
		if reason != "" {
			return s.newError(sourceEnv, value, reason)
		}
		s.set(work[s.section], v)
		sources[s.path] = sourceEnv
	}
	return nil
}

// unknownVarHelp says how to fix the unknown variable name: the closest
// known variable when there is one, and always that a variable of the
// user's own (a token, a secret) must be renamed out of the MCPRT_ prefix,
// since any mcprt started in that environment would refuse it.
func unknownVarHelp(name string, known []string) string {
	return "a known " + envPrefix + "* variable (docs/configuration.md lists every key's)" +
		suggest(name, known, strings.ToUpper) +
		"; a variable of your own, such as one holding a token or secret, must not start with " + envPrefix +
		": rename it (e.g. MY_TOKEN) or unset it"
}

// envNames lists every known variable: the keys' and MCPRT_CONFIG.
func (l *loader) envNames() []string {
	names := make([]string, 0, len(l.specs)+1)
	for i := range l.specs {
		names = append(names, l.specs[i].env)
	}
	return append(names, envConfig)
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
	for _, k := range DefaultBase("").Logging.RedactKeys {
		if strings.Contains(n, strings.ToLower(k)) {
			return "[REDACTED]"
		}
	}
	return value
}
