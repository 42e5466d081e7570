package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/aacp/journal"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/trace"
)

// request is one request to a signed-in page.
type request struct {
	c    *Console
	w    http.ResponseWriter
	r    *http.Request
	sess *browserSession
	sid  string
	rest string // the path below the prefix
}

// pageTimeout bounds the reads of one page.
const pageTimeout = 10 * time.Second

// route dispatches a signed-in request to its page or action.
func (c *Console) route(q *request) {
	ctx, cancel := context.WithTimeout(q.r.Context(), pageTimeout)
	defer cancel()
	get := q.r.Method == http.MethodGet || q.r.Method == http.MethodHead
	post := q.r.Method == http.MethodPost
	head, tail, _ := strings.Cut(q.rest, "/")
	c.welcomeHuman(ctx)
	switch {
	case q.rest == "" && get:
		c.overview(ctx, q)
	case q.rest == "messages" && get:
		c.messages(ctx, q)
	case head == "messages" && tail != "" && get:
		c.messageDetail(ctx, q, tail)
	case q.rest == "requeue" && post:
		c.requeue(ctx, q)
	case q.rest == "compose" && get:
		c.composeForm(ctx, q, composeInput{Priority: "HIGH", Type: defaultComposeType}, "", "")
	case q.rest == "compose" && post:
		c.compose(ctx, q)
	case q.rest == "reservations" && get:
		c.reservations(ctx, q, "", "")
	case q.rest == "reservations/release" && post:
		c.forceRelease(ctx, q)
	case q.rest == "tasks" && get:
		c.tasks(ctx, q)
	case q.rest == "memory" && get:
		c.memoryPage(ctx, q)
	case q.rest == "sessions" && get:
		c.sessionsPage(ctx, q)
	case head == "sessions" && tail != "" && get:
		c.sessionDetail(ctx, q, tail)
	case q.rest == "guard" && get:
		c.guardPage(ctx, q)
	case q.rest == "traces" && get:
		c.tracesPage(ctx, q)
	case head == "traces" && tail != "" && get:
		c.traceDetail(ctx, q, tail)
	case q.rest == "events" && get:
		c.live.serve(q.w, q.r)
	case q.rest == "signout" && post:
		c.sessions.remove(q.sid)
		http.SetCookie(q.w, &http.Cookie{Name: cookieName, Value: "", Path: c.opts.Prefix, MaxAge: -1, HttpOnly: true,
			SameSite: http.SameSiteStrictMode})
		http.Redirect(q.w, q.r, c.opts.Prefix+"signin", http.StatusSeeOther)
	default:
		if slices.Contains([]string{"", "messages", "compose", "reservations", "tasks", "memory", "sessions", "guard", "traces", "events",
			"requeue", "reservations/release", "signout"}, q.rest) {
			q.w.Header().Set("Allow", "GET, POST")
			c.fail(q, http.StatusMethodNotAllowed, "this page does not take "+q.r.Method+"; pages are read with GET and actions sent with POST")
			return
		}
		c.fail(q, http.StatusNotFound, "there is no console page at "+c.opts.Prefix+q.rest+"; use the links in the menu")
	}
}

// page renders a page for a signed-in browser.
func (c *Console) page(q *request, status int, name, nav, live string, d pageData) {
	d.Prefix, d.Nav, d.CSRF, d.Live = c.opts.Prefix, nav, q.sess.csrf, live
	if d.Title == "" {
		d.Title = strings.ToUpper(nav[:1]) + nav[1:]
	}
	c.render(q.w, status, name, d)
}

// fail renders the error page.
func (c *Console) fail(q *request, status int, msg string) {
	c.page(q, status, "error", "error", "", pageData{Title: http.StatusText(status), Error: msg})
}

// agentRow is one agent on the overview.
type agentRow struct {
	ID           string
	Type         string
	Presence     string
	LastSeen     time.Time
	PID          int
	RegisteredAt time.Time
	Unread       int
	Overdue      int
	Reservations []Reservation
	Tasks        []Task
	Human        bool
	// Session is the newest active collaboration session the agent takes
	// part in ("" when none).
	Session, SessionTask string
}

// overviewBody is the overview's data.
type overviewBody struct {
	Agents          []agentRow
	Unread, Overdue int
	DeadLetters     int
	FailedRuns      int
	FailedTraces    []trace.Summary
	HasReservations bool
	HasTasks        bool
	JournalMissing  bool
	Problems        []string
}

// failedWindow is how far back the overview counts failed workflow runs.
const failedWindow = time.Hour

func (c *Console) overview(ctx context.Context, q *request) {
	var b overviewBody
	now := c.clock.Now()
	snap, err := c.journal.current(ctx)
	if err != nil {
		b.Problems = append(b.Problems, err.Error())
	}
	b.JournalMissing = !c.journal.exists()
	var res []Reservation
	if c.opts.Reservations != nil {
		b.HasReservations = true
		if res, err = c.opts.Reservations.Active(ctx, 500); err != nil {
			b.Problems = append(b.Problems, "reservations: "+err.Error())
		}
	}
	var tasks []Task
	if c.opts.Tasks != nil {
		b.HasTasks = true
		if tasks, err = c.opts.Tasks.List(ctx, 500); err != nil {
			b.Problems = append(b.Problems, "tasks: "+err.Error())
		}
	}
	sessions := c.activeSessions(ctx)
	if snap != nil {
		for _, a := range snap.agents {
			row := agentRow{ID: a.AgentID, Type: string(a.Type), PID: a.PID, RegisteredAt: a.RegisteredAt,
				Presence: presenceOf(a), Human: a.AgentID == c.cfg.HumanAgentID}
			if s, ok := sessions[a.AgentID]; ok {
				row.Session, row.SessionTask = s.ID, s.Task
			}
			if c.opts.Messaging != nil {
				if st, seen, err := c.opts.Messaging.Presence(ctx, a.AgentID); err == nil && st != "unknown" {
					row.Presence, row.LastSeen = st, seen
				}
			}
			for _, m := range snap.inboxes[a.AgentID] {
				if m.Open {
					row.Unread++
				}
				if m.Overdue {
					row.Overdue++
				}
			}
			for _, r := range res {
				if r.AgentID == a.AgentID {
					row.Reservations = append(row.Reservations, r)
				}
			}
			for _, t := range tasks {
				if t.Assignee == a.AgentID && t.Status != "done" && t.Status != "failed" {
					row.Tasks = append(row.Tasks, t)
				}
			}
			b.Unread += row.Unread
			b.Overdue += row.Overdue
			b.Agents = append(b.Agents, row)
		}
		b.DeadLetters = len(snap.activeDead())
	}
	sums, _, err := c.traces(ctx, trace.ListQuery{Status: trace.StatusFailure, Tool: "workflow_run", Limit: trace.MaxListLimit})
	if err != nil {
		b.Problems = append(b.Problems, "traces: "+err.Error())
	}
	for _, s := range sums {
		if now.Sub(s.End) <= failedWindow {
			b.FailedRuns++
			if len(b.FailedTraces) < 5 {
				b.FailedTraces = append(b.FailedTraces, s)
			}
		}
	}
	c.page(q, http.StatusOK, "overview", "overview", "messages,presence,reservations,tasks,trace", pageData{Title: "Overview", Body: b, Now: now})
}

// maxActiveSessions bounds the active sessions the overview looks into
// for each agent's current session.
const maxActiveSessions = 20

// activeSessions maps each agent to the newest active session it takes
// part in, among the newest maxActiveSessions.
func (c *Console) activeSessions(ctx context.Context) map[string]session.Session {
	out := map[string]session.Session{}
	list, _, err := c.db.Sessions().List(ctx, session.Filter{Status: session.StatusActive, Limit: maxActiveSessions})
	if err != nil {
		return out
	}
	for _, sum := range list { // newest first: the first session found for an agent wins
		s, err := c.db.Sessions().Get(ctx, sum.ID)
		if err != nil {
			continue
		}
		for _, p := range s.Participants {
			if _, ok := out[p.AgentID]; !ok {
				out[p.AgentID] = s
			}
		}
	}
	return out
}

// presenceOf is the registry's view of an agent's presence.
func presenceOf(a journal.AgentRecord) string {
	if a.Online {
		return "online"
	}
	return "offline"
}

// welcomeHuman registers the person's agent once a signed-in browser
// looks, so that agents can write to the person before they first send.
// A failure (another console hosts the agent) is logged once and shown
// on compose when the person sends.
func (c *Console) welcomeHuman(ctx context.Context) {
	c.humanMu.Lock()
	done := c.humanReady || c.humanTried
	c.humanTried = true
	c.humanMu.Unlock()
	if done || c.opts.Messaging == nil {
		return
	}
	if _, err := c.ensureHuman(ctx); err != nil {
		c.log.Warn("console: the person's agent could not be registered; agents cannot write to it yet", "agent", c.cfg.HumanAgentID, "error", err.Error())
	}
}
