package console

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcprt/mcprt/aacp/broker"
	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/core"
	"github.com/mcprt/mcprt/domain/guard"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/store"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Messaging is the agent messaging the console reads presence from and
// sends through: the durable broker over the data directory.
// tools/messaging.Service implements it.
type Messaging interface {
	Presence
	// Broker returns the broker, opening it when create is true (with
	// create false: nil and no error when no agent was ever registered).
	Broker(create bool) (*broker.Broker, error)
}

// JournalSource is a messaging journal kept elsewhere than in the data
// directory's files (aacp.backend=nats): the console reads it instead of
// DataDir's journal.
type JournalSource interface {
	// Open returns a store over the journal, read without claiming any
	// agent; the console closes it when done with it.
	Open(ctx context.Context) (journal.Store, error)
	// Version changes whenever a message, an answer, an agent or a dead
	// letter is stored.
	Version(ctx context.Context) (uint64, error)
}

// Options configure a Console.
type Options struct {
	// Config is the console section.
	Config Config
	// DataDir is the messaging journal's directory (aacp.dataDir).
	DataDir string
	// StoreDir is the SQLite store's directory; PoliciesDir the guard
	// policies' (a missing one holds the built-in policies only).
	StoreDir    string
	PoliciesDir string
	// BusyTimeout is the store's busy timeout (0: the store's default).
	BusyTimeout time.Duration
	// Messaging is the broker the person's messages go through.
	Messaging Messaging
	// Journal, when set, is where the messaging journal is read from
	// (aacp.backend=nats); nil means DataDir's files.
	Journal JournalSource
	// Token is the bearer token a browser signs in with; "" means no
	// sign-in is asked (the browser still gets a session and CSRF token).
	Token string
	// AllowedHosts and AllowedOrigins add to the localhost names, which
	// are always allowed (as transport.http.allowedHosts/allowedOrigins).
	AllowedHosts   []string
	AllowedOrigins []string
	// Prefix is the URL path the console is served under, ending in "/"
	// (default "/ui/").
	Prefix string
	// The views of data that other parts provide; nil shows the view as
	// not available in this build.
	Reservations Reservations
	Tasks        Tasks
	Search       MessageSearch
	Health       Health
	// Clock stamps the person's actions; IDs names them. Nil: the
	// system clock, UUID v4.
	Clock  core.Clock
	IDs    core.IDGenerator
	Logger *slog.Logger
}

// Console is the overseer's console: an http.Handler serving its pages
// under Options.Prefix. Make it with New, Close it when done.
type Console struct {
	opts     Options
	cfg      Config
	log      *slog.Logger
	clock    core.Clock
	ids      core.IDGenerator
	db       *store.DB
	guard    *guard.Service
	journal  *journalView
	sessions *sessions
	pages    map[string]*template.Template
	assets   fs.FS
	live     *hub

	traceCache traceCache

	humanMu    sync.Mutex
	humanReady bool // guarded by humanMu: the person's agent is registered with the broker
	humanTried bool // guarded by humanMu: welcomeHuman ran
}

// New builds a Console. It opens nothing yet: the store is opened by the
// first page that reads it, and the journal is read per page.
func New(opts Options) (*Console, error) {
	if opts.Prefix == "" {
		opts.Prefix = "/ui/"
	}
	if !strings.HasPrefix(opts.Prefix, "/") || !strings.HasSuffix(opts.Prefix, "/") {
		return nil, fmt.Errorf("console: prefix %q must start and end with /", opts.Prefix)
	}
	if opts.DataDir == "" || opts.StoreDir == "" {
		return nil, errors.New("console: DataDir and StoreDir are required")
	}
	if opts.Clock == nil {
		opts.Clock = core.SystemClock{}
	}
	if opts.IDs == nil {
		opts.IDs = &core.UUIDGenerator{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := opts.Config
	def := DefaultConfig()
	if cfg.HumanAgentID == "" {
		cfg.HumanAgentID = def.HumanAgentID
	}
	if cfg.HumanAgentType == "" {
		cfg.HumanAgentType = def.HumanAgentType
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = def.PageSize
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = def.PollInterval
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = def.SessionTTL
	}
	db, err := store.New(store.Options{Dir: opts.StoreDir, BusyTimeout: opts.BusyTimeout, Clock: opts.Clock})
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	g, err := guard.NewService(opts.PoliciesDir, session.NewService(db.Sessions(), opts.Clock, opts.IDs))
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("console: load the guard policies in %s: %w", opts.PoliciesDir, err)
	}
	pages, err := parsePages()
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("console: assets: %w", err)
	}
	c := &Console{opts: opts, cfg: cfg, log: opts.Logger, clock: opts.Clock, ids: opts.IDs, db: db, guard: g,
		journal:  &journalView{dir: opts.DataDir, src: opts.Journal, now: opts.Clock.Now, limit: maxInboxMessages},
		sessions: &sessions{ttl: cfg.SessionTTL, byID: map[string]*browserSession{}},
		pages:    pages, assets: assets}
	c.live = newHub(c)
	return c, nil
}

// maxInboxMessages bounds the messages kept per inbox in the console's
// view of the journal (the newest).
const maxInboxMessages = 2000

// Drain ends every live event stream and refuses new ones, so that a
// server shutting down is not held open by browsers following the
// console. Pages are still served until Close.
func (c *Console) Drain() { c.live.close() }

// Close stops the live feed and closes the store.
func (c *Console) Close() error {
	c.live.close()
	c.journal.close()
	return c.db.Close()
}

// Prefix is the URL path the console is served under.
func (c *Console) Prefix() string { return c.opts.Prefix }

// ServeHTTP serves the console: the Host and Origin checks, then the
// assets (no sign-in needed), the sign-in page, and every other page for
// a signed-in browser only.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w)
	if !c.hostAllowed(r.Host) {
		http.Error(w, "the Host header is not allowed (DNS rebinding protection); use localhost, or add the host to transport.http.allowedHosts", http.StatusForbidden)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !c.originAllowed(o, r) {
		http.Error(w, "the Origin is not allowed; open the console from its own address, or add the origin to transport.http.allowedOrigins", http.StatusForbidden)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, c.opts.Prefix)
	if !ok {
		if r.URL.Path+"/" == c.opts.Prefix {
			http.Redirect(w, r, c.opts.Prefix, http.StatusSeeOther)
			return
		}
		http.NotFound(w, r)
		return
	}
	if name, ok := strings.CutPrefix(rest, "assets/"); ok {
		c.serveAsset(w, r, name)
		return
	}
	if rest == "signin" {
		c.signin(w, r)
		return
	}
	sess, sid := c.session(r)
	if sess == nil {
		if c.opts.Token != "" {
			if r.Method == http.MethodGet && rest != "events" {
				http.Redirect(w, r, c.opts.Prefix+"signin", http.StatusSeeOther)
				return
			}
			http.Error(w, "not signed in: open "+c.opts.Prefix+"signin and paste the server's token", http.StatusUnauthorized)
			return
		}
		sid = c.sessions.create(c.clock.Now())
		c.setCookie(w, sid)
		sess, _ = c.sessions.lookup(sid, c.clock.Now())
	}
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form could not be read: "+err.Error(), http.StatusBadRequest)
			return
		}
		if !tokenMatches(r.PostFormValue("csrf"), sess.csrf) {
			http.Error(w, "the form's CSRF token is missing or stale: reload the page and submit it again", http.StatusForbidden)
			return
		}
	}
	req := &request{c: c, w: w, r: r, sess: sess, sid: sid, rest: rest}
	c.route(req)
}

// session returns the signed-in session of r, if any.
func (c *Console) session(r *http.Request) (*browserSession, string) {
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return nil, ""
	}
	b, ok := c.sessions.lookup(ck.Value, c.clock.Now())
	if !ok {
		return nil, ""
	}
	return b, ck.Value
}

func (c *Console) setCookie(w http.ResponseWriter, sid string) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: sid, Path: c.opts.Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, MaxAge: int(c.cfg.SessionTTL / time.Second)})
}

// signin shows the sign-in form (GET) and checks the pasted token (POST).
func (c *Console) signin(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		c.render(w, http.StatusOK, "signin", pageData{Prefix: c.opts.Prefix, Title: "Sign in"})
	case http.MethodPost:
		if err := r.ParseForm(); err != nil {
			http.Error(w, "the form could not be read: "+err.Error(), http.StatusBadRequest)
			return
		}
		if c.opts.Token != "" && !tokenMatches(r.PostFormValue("token"), c.opts.Token) {
			c.render(w, http.StatusUnauthorized, "signin", pageData{Prefix: c.opts.Prefix, Title: "Sign in",
				Error: "That token is not this server's: paste the value of the variable transport.http.authTokenEnvVar names."})
			return
		}
		c.setCookie(w, c.sessions.create(c.clock.Now()))
		http.Redirect(w, r, c.opts.Prefix, http.StatusSeeOther)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "use GET to see the sign-in form and POST to sign in", http.StatusMethodNotAllowed)
	}
}

// serveAsset serves one embedded asset; nothing else is ever read.
func (c *Console) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "assets are read with GET", http.StatusMethodNotAllowed)
		return
	}
	if !fs.ValidPath(name) || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(c.assets, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	switch {
	case strings.HasSuffix(name, ".css"):
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case strings.HasSuffix(name, ".js"):
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case strings.HasSuffix(name, ".svg"):
		w.Header().Set("Content-Type", "image/svg+xml")
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Header().Set("Cache-Control", "max-age=300")
	_, _ = w.Write(b)
}

// ensureHuman registers the person's agent with the broker the first
// time it sends, and returns the broker.
func (c *Console) ensureHuman(ctx context.Context) (*broker.Broker, error) {
	if c.opts.Messaging == nil {
		return nil, errors.New("agent messaging is not available in this process")
	}
	b, err := c.opts.Messaging.Broker(true)
	if err != nil {
		return nil, err
	}
	c.humanMu.Lock()
	defer c.humanMu.Unlock()
	if c.humanReady {
		return b, nil
	}
	if _, err := b.RegisterAgent(ctx, c.cfg.HumanAgentID, broker.RegisterInput{Type: agentType(c.cfg.HumanAgentType)}); err != nil {
		return nil, fmt.Errorf("register the person's agent %q (console.humanAgentId) to send as it — another console may host it: %w",
			c.cfg.HumanAgentID, err)
	}
	c.humanReady = true
	return b, nil
}
