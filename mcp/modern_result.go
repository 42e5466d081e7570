package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/mcprt/mcprt/internal/jsontext"
	"github.com/mcprt/mcprt/jsonrpc"
)

// Result types of the stateless revision.
const (
	ResultComplete      = "complete"
	ResultInputRequired = "input_required"
)

// cacheable are the methods whose results carry the caching hints ttlMs
// and cacheScope, and which TTL applies.
var cacheable = map[string]bool{
	MethodServerDiscover:         true,
	MethodToolsList:              true,
	MethodPromptsList:            true,
	MethodResourcesList:          true,
	MethodResourcesTemplatesList: true,
	MethodResourcesRead:          false, // the read TTL
}

// completeResult returns the transform of a stateless request's results:
// every result gets resultType ("complete" unless the handler set one)
// and the server's name in _meta; the results of cacheable methods get
// ttlMs and cacheScope.
func (s *Server) completeResult(method string) func(any) any {
	list, cached := cacheable[method]
	ttl := -1
	if cached {
		ttl = int(s.opts.Stateless.ReadTTL.Milliseconds())
		if list {
			ttl = int(s.opts.Stateless.ListTTL.Milliseconds())
		}
	}
	return func(result any) any {
		raw, err := resultBytes(result)
		if err != nil {
			return result // the engine reports it
		}
		return s.completeResultBytes(raw, ttl)
	}
}

// resultBytes returns a result as JSON text.
func resultBytes(result any) ([]byte, error) {
	switch v := result.(type) {
	case jsonrpc.CompactJSON:
		return v, nil
	case json.RawMessage:
		return v, nil
	}
	return json.Marshal(result)
}

// completeResultBytes rebuilds the result object raw with the stateless
// revision's members. ttl < 0 means no caching hints.
func (s *Server) completeResultBytes(raw []byte, ttl int) json.RawMessage {
	var resultType, meta, ttlMs, scope []byte
	var buf bytes.Buffer
	buf.Grow(len(raw) + 160)
	buf.WriteByte('{')
	first := true
	member := func(key string, value []byte) {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		buf.WriteString(jsontext.Quote(key))
		buf.WriteByte(':')
		buf.Write(value)
	}
	if !jsontext.EachMember(raw, func(key, value []byte) bool {
		switch {
		case jsontext.KeyIs(key, "resultType"):
			resultType = value
		case jsontext.KeyIs(key, "_meta"):
			meta = value
		case ttl >= 0 && jsontext.KeyIs(key, "ttlMs"): // a task's ttlMs is no caching hint
			ttlMs = value
		case ttl >= 0 && jsontext.KeyIs(key, "cacheScope"):
			scope = value
		default:
			if !first {
				buf.WriteByte(',')
			}
			first = false
			buf.Write(key)
			buf.WriteByte(':')
			buf.Write(value)
		}
		return true
	}) {
		return raw // not an object: the engine sends it as it is
	}
	if resultType == nil {
		resultType = []byte(`"` + ResultComplete + `"`)
	}
	member("resultType", resultType)
	member("_meta", s.resultMeta(meta))
	if ttl >= 0 {
		if ttlMs == nil {
			ttlMs = strconv.AppendInt(nil, int64(ttl), 10)
		}
		if scope == nil {
			scope = []byte(jsontext.Quote(s.opts.Stateless.CacheScope))
		}
		member("ttlMs", ttlMs)
		member("cacheScope", scope)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// resultMeta is a result's _meta with the server's name and version added
// (a handler's own keys are kept).
func (s *Server) resultMeta(meta []byte) []byte {
	info, _ := json.Marshal(s.Info())
	out := []byte(`{"` + MetaServerInfo + `":`)
	out = append(out, info...)
	jsontext.EachMember(meta, func(key, value []byte) bool {
		if !jsontext.KeyIs(key, MetaServerInfo) {
			out = append(out, ',')
			out = append(out, key...)
			out = append(out, ':')
			out = append(out, value...)
		}
		return true
	})
	return append(out, '}')
}
