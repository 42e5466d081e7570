package console

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcprt/mcprt/domain/guard"
	"github.com/mcprt/mcprt/domain/memory"
	"github.com/mcprt/mcprt/domain/session"
	"github.com/mcprt/mcprt/domain/trace"
)

// reservationsBody is the reservations page's data.
type reservationsBody struct {
	Available bool
	List      []Reservation
	Pager     pager
}

func (c *Console) reservations(ctx context.Context, q *request, notice, problem string) {
	b := reservationsBody{Available: c.opts.Reservations != nil}
	status := http.StatusOK
	if b.Available {
		all, err := c.opts.Reservations.Active(ctx, 1000)
		if err != nil {
			problem, status = "reading the reservations failed: "+err.Error(), http.StatusInternalServerError
		}
		pg, lo, hi := paginate(q.r, len(all), c.cfg.PageSize)
		b.List, b.Pager = all[lo:hi], pg
	}
	if problem != "" && status == http.StatusOK {
		status = http.StatusBadRequest
	}
	c.page(q, status, "reservations", "reservations", "reservations", pageData{Body: b, Notice: notice, Error: problem})
}

// forceRelease ends a reservation on the person's behalf, with a reason.
func (c *Console) forceRelease(ctx context.Context, q *request) {
	if c.opts.Reservations == nil {
		c.fail(q, http.StatusNotImplemented, "reservations are not available in this build")
		return
	}
	id, reason := strings.TrimSpace(q.r.PostFormValue("id")), strings.TrimSpace(q.r.PostFormValue("reason"))
	if id == "" || reason == "" {
		c.reservations(ctx, q, "", "force-release needs the reservation's id and a reason (it is recorded)")
		return
	}
	start := c.clock.Now()
	err := c.opts.Reservations.ForceRelease(ctx, id, reason)
	c.record(ctx, "console.force_release", start, map[string]any{"id": id, "reason": reason}, err)
	if err != nil {
		c.reservations(ctx, q, "", "force-release of "+id+" failed: "+err.Error())
		return
	}
	http.Redirect(q.w, q.r, c.opts.Prefix+"reservations", http.StatusSeeOther)
}

// tasksBody is the task board's data.
type tasksBody struct {
	Available bool
	Columns   []taskColumn
}

// taskColumn is one status of the board.
type taskColumn struct {
	Status string
	Tasks  []Task
}

func (c *Console) tasks(ctx context.Context, q *request) {
	b := tasksBody{Available: c.opts.Tasks != nil}
	var problem string
	if b.Available {
		all, err := c.opts.Tasks.List(ctx, 1000)
		if err != nil {
			problem = "reading the tasks failed: " + err.Error()
		}
		idx := map[string]int{}
		for _, t := range all {
			i, ok := idx[t.Status]
			if !ok {
				i = len(b.Columns)
				idx[t.Status] = i
				b.Columns = append(b.Columns, taskColumn{Status: t.Status})
			}
			if len(b.Columns[i].Tasks) < c.cfg.PageSize {
				b.Columns[i].Tasks = append(b.Columns[i].Tasks, t)
			}
		}
		// The work queue's order: what waits, what is held, what ended;
		// statuses the board does not know go last.
		slices.SortStableFunc(b.Columns, func(x, y taskColumn) int { return boardRank(x.Status) - boardRank(y.Status) })
	}
	c.page(q, http.StatusOK, "tasks", "tasks", "tasks", pageData{Body: b, Error: problem})
}

// boardOrder is the order of the task board's columns.
var boardOrder = []string{"open", "claimed", "in_progress", "blocked", "done", "failed"}

func boardRank(status string) int {
	if i := slices.Index(boardOrder, status); i >= 0 {
		return i
	}
	return len(boardOrder)
}

// memoryBody is the memory page's data.
type memoryBody struct {
	Namespaces []memory.NamespaceStats
	Namespace  string
	Query      string
	Entries    []memoryRow
	Pager      pager
}

// memoryRow is one entry shown.
type memoryRow struct {
	Namespace, Key, Value string
	StoredAt              time.Time
}

func (c *Console) memoryPage(ctx context.Context, q *request) {
	v := q.r.URL.Query()
	b := memoryBody{Namespace: v.Get("ns"), Query: strings.TrimSpace(v.Get("q"))}
	mem := c.db.Memory()
	st, err := mem.Stats(ctx, "")
	if err != nil {
		c.fail(q, http.StatusInternalServerError, "reading memory failed: "+err.Error())
		return
	}
	b.Namespaces = st.Namespaces
	if b.Query != "" {
		found, err := mem.Search(ctx, memory.SearchQuery{Query: b.Query, Namespace: b.Namespace, Limit: 200, FullText: true})
		if err != nil {
			c.fail(q, http.StatusBadRequest, "the search failed: "+err.Error()+"; search for words in the values")
			return
		}
		pg, lo, hi := paginate(q.r, len(found), c.cfg.PageSize)
		b.Pager = pg
		for _, e := range found[lo:hi] {
			b.Entries = append(b.Entries, memoryRow{e.Namespace, e.Key, displayJSON(string(e.Value), true), e.StoredAt})
		}
	} else {
		pg, _, _ := paginate(q.r, 1<<30, c.cfg.PageSize)
		page, err := mem.List(ctx, memory.ListQuery{Namespace: b.Namespace, Limit: c.cfg.PageSize, Offset: pg.Page * c.cfg.PageSize, Recent: true})
		if err != nil {
			c.fail(q, http.StatusInternalServerError, "listing memory failed: "+err.Error())
			return
		}
		pg.Total = page.Total
		b.Pager = pg
		for _, info := range page.Entries {
			e, ok, err := mem.Get(ctx, info.Namespace, info.Key)
			if err != nil || !ok {
				continue
			}
			b.Entries = append(b.Entries, memoryRow{e.Namespace, e.Key, displayJSON(string(e.Value), true), e.StoredAt})
		}
	}
	c.page(q, http.StatusOK, "memory", "memory", "memory", pageData{Body: b})
}

// sessionsBody is the sessions page's data.
type sessionsBody struct {
	List  []session.Summary
	Pager pager
}

func (c *Console) sessionsPage(ctx context.Context, q *request) {
	list, _, err := c.db.Sessions().List(ctx, session.Filter{Limit: 1000})
	if err != nil {
		c.fail(q, http.StatusInternalServerError, "listing sessions failed: "+err.Error())
		return
	}
	pg, lo, hi := paginate(q.r, len(list), c.cfg.PageSize)
	c.page(q, http.StatusOK, "sessions", "sessions", "session", pageData{Body: sessionsBody{List: list[lo:hi], Pager: pg}})
}

// sessionBody is one session's page data.
type sessionBody struct {
	Session session.Session
	Events  []trace.Event
}

func (c *Console) sessionDetail(ctx context.Context, q *request, id string) {
	s, err := c.db.Sessions().Get(ctx, id)
	if err != nil {
		c.fail(q, http.StatusNotFound, "no session "+id+"; see the sessions page")
		return
	}
	evs, _, _ := c.db.Traces().BySession(ctx, id, 100)
	c.page(q, http.StatusOK, "session", "sessions", "session,trace", pageData{Title: "Session " + id, Body: sessionBody{s, evs}})
}

// guardBody is the guard page's data.
type guardBody struct {
	Policies []guard.Policy
	Checks   []trace.Summary
}

func (c *Console) guardPage(ctx context.Context, q *request) {
	pols, _, err := c.guard.List(ctx, 200)
	if err != nil {
		c.fail(q, http.StatusInternalServerError, "listing guard policies failed: "+err.Error())
		return
	}
	checks, _, err := c.traces(ctx, trace.ListQuery{Tool: "guard_check", Limit: c.cfg.PageSize})
	if err != nil {
		c.fail(q, http.StatusInternalServerError, "reading guard checks failed: "+err.Error())
		return
	}
	c.page(q, http.StatusOK, "guard", "guard", "trace", pageData{Body: guardBody{pols, checks}})
}

// tracesBody is the traces page's data.
type tracesBody struct {
	List    []trace.Summary
	Total   int
	Status  string
	Tool    string
	Pager   pager
	Health  [][2]string
	Chart   *chart
	Problem string
}

func (c *Console) tracesPage(ctx context.Context, q *request) {
	v := q.r.URL.Query()
	b := tracesBody{Status: v.Get("status"), Tool: v.Get("tool")}
	if b.Status != "" && b.Status != trace.StatusSuccess && b.Status != trace.StatusFailure {
		c.fail(q, http.StatusBadRequest, "status "+b.Status+" is not success or failure")
		return
	}
	list, total, err := c.traces(ctx, trace.ListQuery{Status: b.Status, Tool: b.Tool, Limit: 1000})
	if err != nil {
		c.fail(q, http.StatusInternalServerError, "listing traces failed: "+err.Error())
		return
	}
	b.Total = total
	pg, lo, hi := paginate(q.r, len(list), c.cfg.PageSize)
	b.List, b.Pager = list[lo:hi], pg
	if c.opts.Health != nil {
		b.Health = c.opts.Health.Figures()
	}
	b.Chart = c.chart(ctx)
	c.page(q, http.StatusOK, "traces", "traces", "trace", pageData{Body: b})
}

// traceBody is one trace's page data: its steps as a waterfall.
type traceBody struct {
	ID        string
	Steps     []step
	Truncated bool
	Start     time.Time
	Total     time.Duration
	Failures  int
}

// step is one event of a trace placed on the waterfall.
type step struct {
	trace.Event
	Depth       int
	Left, Width float64 // percent of the trace's span
}

func (c *Console) traceDetail(ctx context.Context, q *request, id string) {
	evs, truncated, err := c.db.Traces().Events(ctx, id, trace.MaxTraceEvents)
	if err != nil {
		c.fail(q, http.StatusInternalServerError, "reading the trace failed: "+err.Error())
		return
	}
	if len(evs) == 0 {
		c.fail(q, http.StatusNotFound, "no trace "+id+" is stored (it may have been pruned); see the traces page")
		return
	}
	c.page(q, http.StatusOK, "trace", "traces", "trace", pageData{Title: "Trace " + id, Body: waterfall(id, evs, truncated)})
}

// waterfall lays the events out in start order, indented by their depth
// in the delegation tree, each bar placed on the trace's time span.
func waterfall(id string, evs []trace.Event, truncated bool) traceBody {
	slices.SortStableFunc(evs, func(a, b trace.Event) int { return a.Start.Compare(b.Start) })
	b := traceBody{ID: id, Truncated: truncated, Start: evs[0].Start}
	end := evs[0].End()
	for _, e := range evs {
		if e.End().After(end) {
			end = e.End()
		}
	}
	b.Total = end.Sub(b.Start)
	span := float64(max(b.Total, time.Microsecond))
	for _, e := range evs {
		s := step{Event: e, Depth: min(strings.Count(e.CorrelationID, trace.PathSeparator), 8)}
		s.Left = 100 * float64(e.Start.Sub(b.Start)) / span
		s.Width = max(100*float64(e.Duration)/span, 0.5)
		if s.Left+s.Width > 100 {
			s.Width = 100 - s.Left
		}
		if !e.Success {
			b.Failures++
		}
		b.Steps = append(b.Steps, s)
	}
	return b
}
