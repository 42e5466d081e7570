package streamable

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/internal/idle"
	"github.com/mcprt/mcprt/jsonrpc"
	"github.com/mcprt/mcprt/mcp"
)

// TransportName is the transport name of HTTP sessions (mcp.Session's
// Transport), which tools such as the admin policy decide by.
const TransportName = "http"

// HTTP header names of the transport.
const (
	headerSession     = "Mcp-Session-Id"
	headerProtocol    = "Mcp-Protocol-Version"
	headerLastEventID = "Last-Event-Id"
	// headerTools (or the query parameter paramTools) on the request that
	// opens a session chooses the session's tools: profile names, tool
	// names and prefixes ending in *, separated by commas.
	headerTools = "Mcp-Tools"
	paramTools  = "tools"
)

// Options configures a Handler beyond its Config; the zero value means
// defaults.
type Options struct {
	// Logger receives the transport's logs (default: discarded).
	Logger *slog.Logger
	// Clock runs the idle-session expiry (default: the system clock).
	Clock core.Clock
	// LookupEnv reads the variables that hold the tokens (default:
	// os.LookupEnv).
	LookupEnv func(name string) (string, bool)
	// AdminTokenEnvVar, when set, names the variable that holds the admin
	// token (mcprt's tools.adminPolicy.tokenEnvVar under
	// tools.adminPolicy.mode token): sessions opened with it are
	// AdminAuthorized. Empty means no session is.
	AdminTokenEnvVar string
}

// Handler is the Streamable HTTP endpoint of an mcp.Server: an
// http.Handler that serves each MCP session as a jsonrpc.Stream of its
// own. Create it with NewHandler, mount it (ListenAndServe does), and Close
// it when done. It is safe for concurrent use.
type Handler struct {
	srv          *mcp.Server
	cfg          Config
	log          *slog.Logger
	clock        core.Clock
	maxBody      int // transport.maxMessageBytes
	budget       int // transport.maxOutputBytes: the bytes one stream keeps
	writeTimeout time.Duration
	readTimeout  time.Duration
	authSum      [sha256.Size]byte // hash of the access token, when hasAuth
	adminSum     [sha256.Size]byte // hash of the admin token, when hasAdmin
	hasAuth      bool
	hasAdmin     bool
	anyOrigin    bool
	origins      map[string]bool // normalized allowed origins
	anyHost      bool
	hosts        map[string]bool // allowed hosts, lower case, with or without port
	ctx          context.Context // the sessions' lifetime
	cancel       context.CancelFunc
	serving      idle.Group    // sessions whose shutdown has not finished
	headerParams headerParams  // the x-mcp-header annotations of the tools, read once per schema
	drainStarted chan struct{} // closed by the first Drain
	drainOnce    sync.Once
	// statelessSlots bounds the stateless requests running at once.
	statelessSlots *core.Slots
	// listens bounds the open subscriptions/listen requests (listens.go).
	listens *listenBounds

	mounts []mount // extra handlers beside the endpoint (Mount); set before Serve
	// decoders are the envelope decoders of the POSTs (*jsonrpc.Decoder):
	// a POST decodes its message once and hands it to its session decoded.
	decoders sync.Pool

	mu       sync.RWMutex
	sessions map[string]*session // by Mcp-Session-Id; guarded by mu
	// draining: new requests are refused. Set under mu (so a check under
	// mu orders against Drain's snapshot of the sessions), read anywhere.
	draining atomic.Bool
}

// NewHandler returns the endpoint of srv configured by cfg. The tokens are
// read now: cfg.AuthTokenEnvVar names the access token, and srv's
// tools.adminPolicy.tokenEnvVar the admin token; a variable that is named
// but empty or unset is an error (a server meant to be protected must not
// start open).
func NewHandler(srv *mcp.Server, cfg Config, opts Options) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("streamable: invalid configuration: %w", err)
	}
	if cfg.MaxSessions < 1 || cfg.SessionIdleTimeout < 1 || cfg.ReplayBufferEvents < 1 ||
		cfg.ReadTimeout < 1 || cfg.WriteTimeout < 1 || cfg.IdleTimeout < 1 {
		return nil, fmt.Errorf("streamable: invalid configuration: every limit and timeout must be >= 1 " +
			"(start from DefaultConfig and change what you need)")
	}
	if !slices.Contains([]string{ResponseAuto, ResponseJSON, ResponseSSE}, cfg.ResponseMode) {
		return nil, fmt.Errorf("streamable: invalid configuration: responseMode %q; use auto, json or sse", cfg.ResponseMode)
	}
	limits := srv.Limits()
	h := &Handler{
		srv: srv, cfg: cfg, log: opts.Logger, clock: opts.Clock,
		maxBody:      limits.MaxMessageBytes,
		budget:       limits.MaxOutputBytes,
		writeTimeout: cfg.WriteTimeout,
		readTimeout:  cfg.ReadTimeout,
		origins:      map[string]bool{},
		hosts:        map[string]bool{},
		sessions:     map[string]*session{},
		drainStarted: make(chan struct{}),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.clock == nil {
		h.clock = core.SystemClock{}
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	var err error
	if h.authSum, h.hasAuth, err = tokenHash(lookup, cfg.AuthTokenEnvVar, "transport.http.authTokenEnvVar"); err != nil {
		return nil, err
	}
	if opts.AdminTokenEnvVar != "" {
		if h.adminSum, h.hasAdmin, err = tokenHash(lookup, opts.AdminTokenEnvVar, "tools.adminPolicy.tokenEnvVar"); err != nil {
			return nil, err
		}
	}
	for _, o := range cfg.AllowedOrigins {
		if o == "*" {
			h.anyOrigin = true
		} else if n, ok := normalizeOrigin(o); ok {
			h.origins[n] = true
		}
	}
	for _, hst := range cfg.AllowedHosts {
		if hst == "*" {
			h.anyHost = true
		} else {
			h.hosts[strings.ToLower(hst)] = true
		}
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.statelessSlots = core.NewSlots(cfg.MaxSessions)
	h.listens = newListenBounds(cfg.MaxListens, cfg.MaxListensPerClient)
	return h, nil
}

// tokenHash reads the token in the variable name (none when name is "").
func tokenHash(lookup func(string) (string, bool), name, key string) ([sha256.Size]byte, bool, error) {
	if name == "" {
		return [sha256.Size]byte{}, false, nil
	}
	tok, ok := lookup(name)
	if !ok || tok == "" {
		return [sha256.Size]byte{}, false, fmt.Errorf("streamable: %s names %s, which is unset or empty; "+
			"set it to the token, or set %s to \"\" to go without", key, name, key)
	}
	if t := strings.TrimSpace(tok); t != tok {
		// HTTP strips the spaces around a header value, so such a token
		// could never match: refuse it rather than lock every client out.
		return [sha256.Size]byte{}, false, fmt.Errorf("streamable: %s names %s, whose value has spaces or other white space "+
			"at its start or end, which no Authorization header can carry; remove them from the variable", key, name)
	}
	return sha256.Sum256([]byte(tok)), true, nil
}

// Sessions returns the number of open sessions.
func (h *Handler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// AdminAuthorized reports whether sess is an HTTP session of this handler
// that was opened with the admin token (tools.adminPolicy.tokenEnvVar).
// Every request of such a session must carry that token (else 403), so a
// policy may admit admin tools on it. It is false for any other session.
func (h *Handler) AdminAuthorized(sess *mcp.Session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.sessions {
		if s.sess == sess {
			return s.admin()
		}
	}
	return false
}

// CloseStream ends the event stream that carries the request whose handler
// context ctx is, in session sess, while the request runs on: the client
// reconnects with GET and Last-Event-ID (a server may do this to avoid
// holding connections open; the conformance suite's test_reconnection tool
// does it). It reports whether there was such a stream.
func (h *Handler) CloseStream(ctx context.Context, sess *mcp.Session) bool {
	id, ok := jsonrpc.RequestID(ctx)
	if !ok {
		return false
	}
	h.mu.Lock()
	var target *session
	for _, s := range h.sessions {
		if s.sess == sess {
			target = s
		}
	}
	h.mu.Unlock()
	return target != nil && target.closeStream(id)
}

// ServeHTTP serves the MCP endpoint: POST sends a message, GET opens the
// session's event stream, DELETE ends the session. Every request first
// passes the Host and Origin checks (403) and the bearer-token check
// (401).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	closeUnlessRead(w, r)
	if !h.hostAllowed(r.Host) {
		h.fail(w, nil, http.StatusForbidden, core.CodeUnauthorized, "the Host header "+clipText(r.Host)+
			" is not allowed (DNS rebinding protection); use localhost, or add the host to transport.http.allowedHosts")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !h.originAllowed(origin) {
			h.fail(w, nil, http.StatusForbidden, core.CodeUnauthorized, "the Origin "+clipText(origin)+
				" is not allowed (DNS rebinding protection); add it to transport.http.allowedOrigins")
			return
		}
		hdr := w.Header()
		hdr.Set("Access-Control-Allow-Origin", origin)
		hdr.Add("Vary", "Origin")
		hdr.Set("Access-Control-Expose-Headers", headerSession+", WWW-Authenticate")
	}
	if r.Method == http.MethodOptions { // CORS preflight: no credentials are sent with it
		hdr := w.Header()
		hdr.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
		hdr.Set("Access-Control-Allow-Headers", preflightHeaders(r.Header.Get("Access-Control-Request-Headers")))
		hdr.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	cred, ok := h.authenticate(w, r)
	if !ok {
		return
	}
	if v := r.Header.Get(headerProtocol); v != "" && r.Header.Get(headerSession) != "" && !slices.Contains(mcp.SupportedVersions(), v) {
		h.fail(w, nil, http.StatusBadRequest, core.CodeInvalidArgument, "unsupported MCP-Protocol-Version "+clipText(v)+
			"; use one of "+strings.Join(mcp.SupportedVersions(), ", ")+" (the version initialize negotiated)")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r, cred)
	case http.MethodGet:
		h.get(w, r, cred)
	case http.MethodDelete:
		h.delete(w, r, cred)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		h.fail(w, nil, http.StatusMethodNotAllowed, core.CodeInvalidArgument, "method "+clipText(r.Method)+
			" is not served here; use POST to send messages, GET to open the event stream, DELETE to end the session")
	}
}

// authenticate checks the bearer token and returns the request's
// credential class. Tokens are compared as SHA-256 hashes in constant
// time. It writes 401 and reports false when a token is required and the
// request lacks a valid one.
func (h *Handler) authenticate(w http.ResponseWriter, r *http.Request) (int, bool) {
	authz := r.Header.Get("Authorization")
	cred := credNone
	hasBearer := len(authz) > len("Bearer ") && strings.EqualFold(authz[:len("Bearer ")], "Bearer ")
	if hasBearer && (h.hasAuth || h.hasAdmin) {
		sum := sha256.Sum256([]byte(strings.TrimSpace(authz[len("Bearer "):])))
		admin := h.hasAdmin && subtle.ConstantTimeCompare(sum[:], h.adminSum[:]) == 1
		access := h.hasAuth && subtle.ConstantTimeCompare(sum[:], h.authSum[:]) == 1
		switch {
		case admin:
			cred = credAdmin
		case access:
			cred = credToken
		}
	}
	if h.hasAuth && cred == credNone {
		challenge := `Bearer realm="mcprt"`
		msg := "this server requires a bearer token: send Authorization: Bearer <token>"
		if hasBearer {
			challenge += `, error="invalid_token"`
			msg = "the bearer token is not valid for this server; send the token from the variable the server's transport.http.authTokenEnvVar names"
		}
		w.Header().Set("WWW-Authenticate", challenge)
		h.fail(w, nil, http.StatusUnauthorized, core.CodeUnauthorized, msg)
		return 0, false
	}
	return cred, true
}

// hostAllowed applies the Host allow-list: localhost and loopback
// addresses, then transport.http.allowedHosts.
func (h *Handler) hostAllowed(host string) bool {
	if h.anyHost {
		return true
	}
	if host == "" {
		return false
	}
	name := host
	if n, _, err := net.SplitHostPort(host); err == nil {
		name = n
	}
	name = strings.ToLower(strings.TrimSuffix(strings.Trim(name, "[]"), "."))
	return isLoopbackName(name) || h.hosts[strings.ToLower(host)] || h.hosts[name]
}

// originAllowed applies the Origin allow-list: localhost origins, then
// transport.http.allowedOrigins.
func (h *Handler) originAllowed(origin string) bool {
	if h.anyOrigin {
		return true
	}
	n, ok := normalizeOrigin(origin)
	if !ok {
		return false
	}
	if h.origins[n] {
		return true
	}
	host := n[strings.Index(n, "://")+3:]
	if hn, _, err := net.SplitHostPort(host); err == nil {
		host = hn
	}
	return isLoopbackName(strings.Trim(host, "[]"))
}

// isLoopbackName reports whether a host name (no port, no brackets) is
// localhost or a loopback address.
func isLoopbackName(name string) bool {
	if name == "localhost" {
		return true
	}
	// netip parses without allocating; a zone is refused, as net.ParseIP
	// refuses it.
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}

// lookup finds the session a request names. It writes 400 (no id), 404
// (unknown or ended) or 403 (a weaker credential than the session was
// opened with) and returns nil when there is none to serve.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, cred int) *session {
	id := r.Header.Get(headerSession)
	if id == "" {
		h.fail(w, nil, http.StatusBadRequest, core.CodeInvalidArgument, "missing Mcp-Session-Id header: send initialize "+
			"first (without the header), then send the id its response carries with every request")
		return nil
	}
	h.mu.RLock() // every POST looks up its session: readers do not wait for each other
	s := h.sessions[id]
	h.mu.RUnlock()
	if s == nil {
		h.fail(w, nil, http.StatusNotFound, core.CodeNotFound, "no session has this Mcp-Session-Id (it ended, "+
			"expired, or never existed); send initialize again without the header to start a new one")
		return nil
	}
	if cred < s.cred {
		h.fail(w, s, http.StatusForbidden, core.CodeUnauthorized, "this session was opened with the admin token; "+
			"send the same token with every request of the session")
		return nil
	}
	return s
}

// newSession opens a session for an initialize request, or reports why
// it cannot (the server is full or shutting down).
func (h *Handler) newSession(cred int, tools *mcp.ToolSet) (*session, int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining.Load() {
		return nil, http.StatusServiceUnavailable, "the server is shutting down; try again later"
	}
	if len(h.sessions) >= h.cfg.MaxSessions {
		return nil, http.StatusServiceUnavailable, "too many sessions: the server holds " +
			strconv.Itoa(h.cfg.MaxSessions) + " (transport.http.maxSessions); end unused sessions with DELETE, or retry later"
	}
	s := newSession(h, rand.Text(), cred)
	s.sess = h.srv.Connect(s, &mcp.SessionOptions{Transport: TransportName, Tools: tools})
	h.sessions[s.id] = s
	h.serving.Add(1)
	go func() {
		defer h.serving.Done()
		if err := s.sess.Serve(h.ctx); err != nil {
			h.log.Warn("an HTTP session ended with an error", "connectionCorrelationId", s.sess.CorrelationID(), "error", err.Error())
		}
		h.srv.Shutdown(context.Background(), s.sess) // bounded by the server's ShutdownTimeout
		close(s.finished)
	}()
	return s, 0, ""
}

// sessionTools reads the tools a request that opens a session chooses
// (the Mcp-Tools header, else the tools query parameter): nil when it
// chooses none (the server's tools.profile applies). A bad choice gets
// 400 and ok false.
func (h *Handler) sessionTools(w http.ResponseWriter, r *http.Request) (tools *mcp.ToolSet, ok bool) {
	spec := r.Header.Get(headerTools)
	if spec == "" {
		spec = r.URL.Query().Get(paramTools)
	}
	if spec == "" {
		return nil, true
	}
	tools, err := h.srv.SessionToolSet(spec)
	if err != nil {
		h.fail(w, nil, http.StatusBadRequest, core.CodeInvalidArgument, "the session's tools ("+headerTools+
			" header or ?"+paramTools+"=): "+err.Error())
		return nil, false
	}
	return tools, true
}

// forget removes a closed session from the table: its id now gets 404.
func (h *Handler) forget(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
}

// isDraining reports whether the handler refuses new work.
func (h *Handler) isDraining() bool {
	return h.draining.Load()
}

// Drain starts a graceful shutdown: new sessions and new messages are
// refused with 503 and GET streams end, while requests in progress are
// still answered. Close finishes the shutdown.
func (h *Handler) Drain() {
	h.mu.Lock()
	h.draining.Store(true)
	var all []*session
	for _, s := range h.sessions {
		all = append(all, s)
	}
	h.mu.Unlock()
	h.drainOnce.Do(func() { close(h.drainStarted) })
	for _, s := range all {
		s.mu.Lock()
		standalone := slices.Clone(s.standalone)
		s.mu.Unlock()
		for _, st := range standalone {
			st.end(endShutdown)
			st.cut()
		}
	}
}

// Close ends every session, as the server's Shutdown does (their requests
// are cancelled and their handlers waited for, up to
// server.shutdownTimeoutMs), and waits for them or for ctx. New requests
// get 503 from then on.
func (h *Handler) Close(ctx context.Context) error {
	h.Drain()
	h.mu.Lock()
	var all []*session
	for _, s := range h.sessions {
		all = append(all, s)
	}
	h.mu.Unlock()
	for _, s := range all {
		s.closeFor(endShutdown)
	}
	defer h.cancel()
	return h.serving.Wait(ctx) // no goroutine is left behind when ctx ends first
}

// codeUnavailable is the JSON-RPC code of a 503 answer: the server is
// full or shutting down, and the same request may succeed later.
const codeUnavailable int64 = -32000

// errorBody is a JSON-RPC error response that belongs to no request.
type errorBody struct {
	JSONRPC string      `json:"jsonrpc"`
	ID      *jsonrpc.ID `json:"id"`
	Error   errorObject `json:"error"`
}

type errorObject struct {
	Code    int64     `json:"code"`
	Message string    `json:"message"`
	Data    errorData `json:"data"`
}

type errorData struct {
	Code          core.Code `json:"code"`
	HTTPStatus    int       `json:"httpStatus"`
	CorrelationID string    `json:"correlationId,omitempty"`
}

// fail writes an HTTP error whose body is a JSON-RPC error response with id
// null; its data carries a code, the HTTP status and, when the request
// names a session, the session's correlation id.
func (h *Handler) fail(w http.ResponseWriter, s *session, status int, code core.Code, msg string) {
	h.failID(w, s, status, code, nil, jsonrpc.CodeInvalidRequest, msg)
}

// failID is fail with the id of the request the error answers and a
// JSON-RPC code.
func (h *Handler) failID(w http.ResponseWriter, s *session, status int, code core.Code, id *jsonrpc.ID, rpcCode int64, msg string) {
	body := errorBody{JSONRPC: "2.0", ID: id, Error: errorObject{Code: rpcCode, Message: msg,
		Data: errorData{Code: code, HTTPStatus: status}}}
	if status == http.StatusServiceUnavailable {
		body.Error.Code = codeUnavailable
	}
	if s != nil {
		body.Error.Data.CorrelationID = s.sess.CorrelationID()
	}
	b, _ := json.Marshal(body) // plain data always encodes
	if w.Header().Get("Connection") == "close" {
		// The body was not read whole (closeUnlessRead): make every
		// further read fail at once, so that net/http does not wait to
		// discard a body that may never come.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// closeUnlessRead marks the answer to a request that has a body with
// Connection: close until readBody has read that body whole. So every
// refusal (401, 403, 404, 406, 415, 413, a body that timed out) ends the
// connection at once: net/http would otherwise wait, with no deadline,
// to discard a body the client promised and never sent.
func closeUnlessRead(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		if hdr := w.Header(); hdr.Get("Connection") != "close" { // Serve's endpoint marked it already
			hdr.Set("Connection", "close")
		}
	}
}

// corsHeaders are the request headers a browser client may send: the
// transport's own, the stateless revision's Mcp-Method and Mcp-Name, and
// Mcp-Tools (a session's tool profile).
const corsHeaders = "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, " +
	"Mcp-Method, Mcp-Name, Mcp-Tools"

// preflightHeaders answers a CORS preflight's Access-Control-Request-Headers:
// corsHeaders, plus each requested Mcp-Param-* header (a tool's
// x-mcp-header arguments are named by the tool, so they cannot be listed
// ahead of time). Other requested headers are not allowed.
func preflightHeaders(requested string) string {
	out := corsHeaders
	for _, name := range strings.Split(requested, ",") {
		name = strings.TrimSpace(name)
		if len(name) > len("mcp-param-") && len(name) <= 128 && strings.EqualFold(name[:len("mcp-param-")], "mcp-param-") &&
			!strings.ContainsAny(name, " \t\r\n:;") {
			out += ", " + name
		}
	}
	return out
}
