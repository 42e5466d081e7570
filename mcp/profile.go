package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcprt/mcprt/core"
)

// ToolSet is the set of tools a session sees in tools/list and may call:
// a tool outside it is answered like one that does not exist (NOT_FOUND).
// It is chosen by entries, each a profile name (a key of the profiles
// given, or "full" for every tool), a tool name, or a name prefix ending
// in "*".
// A ToolSet is immutable; the nil *ToolSet allows every tool.
type ToolSet struct {
	label    string // how it was chosen, for errors: "core" or "memory_store,trace_*"
	all      bool
	names    map[string]bool
	prefixes []string
}

// ParseToolSet builds the ToolSet of entries (see ToolSet). An entry that
// is neither a profile name nor a tool name or prefix is an error; a name
// no registered tool has is allowed (it matches nothing). No entries is an
// error: a session with no tools is never what was meant.
//
// profiles names tool sets (Options.Profiles): each a list of tool names
// and name prefixes ending in "*"; nil names none besides "full".
func ParseToolSet(entries []string, profiles map[string][]string) (*ToolSet, error) {
	if len(entries) == 0 {
		return nil, fmt.Errorf("no tools chosen: name a profile (%s) or tools", profileNames(profiles))
	}
	t := &ToolSet{label: strings.Join(entries, ","), names: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == ToolProfileFull || e == "*" {
			t.all = true
			continue
		}
		patterns, isProfile := profiles[e]
		if !isProfile {
			if !ValidToolPattern(e) {
				return nil, fmt.Errorf("%q is not a profile (%s), a tool name or a name prefix ending in *", e, profileNames(profiles))
			}
			patterns = []string{e}
		}
		for _, p := range patterns {
			if prefix, ok := strings.CutSuffix(p, "*"); ok {
				t.prefixes = append(t.prefixes, prefix)
			} else {
				t.names[p] = true
			}
		}
	}
	return t, nil
}

// profileNames lists the profile names for messages.
func profileNames(profiles map[string][]string) string {
	names := []string{ToolProfileFull}
	for n := range profiles {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// ToolProfileFull is the profile name of every tool: a ToolSet chosen by
// it (or by "*") allows every tool, whatever Options.Profiles holds.
const ToolProfileFull = "full"

// ValidToolPattern reports whether p is a tool name, or a tool name prefix
// followed by "*" (a lone "*" matches every tool).
func ValidToolPattern(p string) bool {
	name := strings.TrimSuffix(p, "*")
	if len(name) > 128 || (name == "" && p != "*") {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// Allows reports whether the set has the tool called name.
func (t *ToolSet) Allows(name string) bool {
	if t == nil || t.all || t.names[name] {
		return true
	}
	for _, p := range t.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// String says how the set was chosen ("full" for the nil set).
func (t *ToolSet) String() string {
	if t == nil {
		return ToolProfileFull
	}
	return t.label
}

// SessionToolSet parses a session's own choice of tools, spec (entries
// separated by commas, as a transport receives it in a query parameter or
// header), for SessionOptions.Tools. Besides ParseToolSet's rules, an
// entry that matches no tool registered now is an error, so that a typo
// does not silently leave a session without a tool.
func (s *Server) SessionToolSet(spec string) (*ToolSet, error) {
	var entries []string
	for e := range strings.SplitSeq(spec, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	profiles := s.opts.Profiles
	t, err := ParseToolSet(entries, profiles)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if _, isProfile := profiles[e]; isProfile || e == ToolProfileFull || e == "*" {
			continue
		}
		one, _ := ParseToolSet([]string{e}, nil)
		if !slices.ContainsFunc(s.tools.all(), func(rt *registeredTool) bool { return one.Allows(rt.def.Name) }) {
			return nil, fmt.Errorf("%q names no tool of this server; tools/list of profile full shows them all", e)
		}
	}
	return t, nil
}

// notInSession is the NOT_FOUND error of a call to a registered tool that
// the session's tool set leaves out.
func (sess *Session) notInSession(name string) *core.Error {
	return core.NewError(core.CodeNotFound, fmt.Sprintf("tool %q is not among this session's tools (%s); call tools/list "+
		"to see them, or choose more with tools.profile / tools.enabled (over HTTP, the initialize's ?tools= or Mcp-Tools header)",
		name, sess.tools)).WithDetail("tools", sess.tools.String())
}
