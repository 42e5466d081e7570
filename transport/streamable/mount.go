package streamable

import (
	"net/http"
	"strings"

	"github.com/mcprt/mcprt/core"
)

// mount is an extra handler served under a path prefix.
type mount struct {
	prefix  string
	handler http.Handler
}

// Mount serves handler for the paths under prefix (which ends in "/";
// the prefix without its slash is served too) beside the MCP endpoint:
// the overseer's console at /ui/, say. Requests to it pass the same Host
// and Origin checks as the endpoint (403 otherwise); authentication is
// the handler's, which may check a token with TokenValid. Call Mount
// before Serve.
func (h *Handler) Mount(prefix string, handler http.Handler) {
	h.mounts = append(h.mounts, mount{prefix: prefix, handler: handler})
}

// mounted returns the mount serving path.
func (h *Handler) mounted(path string) (mount, bool) {
	for _, m := range h.mounts {
		if strings.HasPrefix(path, m.prefix) || path == strings.TrimSuffix(m.prefix, "/") {
			return m, true
		}
	}
	return mount{}, false
}

// serveMount applies the Host and Origin checks, then the mount's handler.
func (h *Handler) serveMount(w http.ResponseWriter, r *http.Request, m mount) {
	if !h.hostAllowed(r.Host) {
		h.fail(w, nil, http.StatusForbidden, core.CodeUnauthorized, "the Host header "+clipText(r.Host)+
			" is not allowed (DNS rebinding protection); use localhost, or add the host to transport.http.allowedHosts")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin) {
		h.fail(w, nil, http.StatusForbidden, core.CodeUnauthorized, "the Origin "+clipText(origin)+
			" is not allowed (DNS rebinding protection); add it to transport.http.allowedOrigins")
		return
	}
	m.handler.ServeHTTP(w, r)
}
