package mcp

import "bytes"

// maxCachedResult is the largest result JSON (in bytes) whose wrapped
// answer a tool keeps for the calls after (registeredTool.lastWrap).
const maxCachedResult = 128

// wrappedResult is a small result's JSON and the CallToolResult wrap
// built around it. Both are never written again once stored: the answer
// bytes are shared by every call that returns the same JSON, and every
// reader of an answer (the engine's encoder, a task's stored result) only
// reads it.
type wrappedResult struct {
	js         []byte
	structured bool
	out        []byte
}

// cachedWrap returns the wrap kept for a result whose JSON is js (and
// whose structuredContent is sent, or not, as structured) when it is the
// one kept and within limit, else nil.
func (rt *registeredTool) cachedWrap(js []byte, structured bool, limit int) []byte {
	w := rt.lastWrap.Load()
	if w == nil || w.structured != structured || len(w.out) > limit || !bytes.Equal(w.js, js) {
		return nil
	}
	return w.out
}

// keepWrap keeps out, the wrap of the result js, for the calls after,
// when js is small and no wrap is kept yet. Only the first is kept, so a
// tool whose results vary allocates for it once, not per call; a tool
// that always returns the same small value (a no-op, an acknowledgement)
// answers with bytes built once.
func (rt *registeredTool) keepWrap(js []byte, structured bool, out []byte) {
	if len(js) > maxCachedResult || rt.lastWrap.Load() != nil {
		return
	}
	rt.lastWrap.CompareAndSwap(nil, &wrappedResult{js: bytes.Clone(js), structured: structured, out: out})
}
