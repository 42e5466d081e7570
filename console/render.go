package console

import (
	"bytes"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcprt/mcprt/aacp/envelope"
)

// pageData is what every page template gets.
type pageData struct {
	Prefix string
	Title  string
	Nav    string // the nav entry to highlight
	CSRF   string
	Now    time.Time
	Live   string // the live-event kinds the page follows (comma-separated)
	Error  string
	Notice string
	// Body is the page's own data.
	Body any
}

// pager is one page of a list.
type pager struct {
	Page, Size, Total int
	// Base is the page's URL without its page parameter.
	Base url.URL
}

// HasPrev and HasNext tell whether there are pages around this one.
func (p pager) HasPrev() bool { return p.Page > 0 }

// HasNext reports whether rows follow this page.
func (p pager) HasNext() bool { return (p.Page+1)*p.Size < p.Total }

// Link returns the URL of page n.
func (p pager) Link(n int) string {
	u := p.Base
	q := u.Query()
	q.Set("page", strconv.Itoa(n))
	u.RawQuery = q.Encode()
	return u.String()
}

// From and To are the 1-based bounds of the rows shown.
func (p pager) From() int { return min(p.Page*p.Size+1, p.Total) }

// To is the last row shown.
func (p pager) To() int { return min((p.Page+1)*p.Size, p.Total) }

// Prev and Next are the neighbouring page numbers.
func (p pager) Prev() int { return p.Page - 1 }

// Next is the following page number.
func (p pager) Next() int { return p.Page + 1 }

// paginate cuts the rows of page out of n rows, returning the bounds.
func paginate(r *http.Request, n, size int) (pager, int, int) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page < 0 || page > 1_000_000 {
		page = 0
	}
	if page*size >= n && n > 0 {
		page = (n - 1) / size
	}
	u := *r.URL
	q := u.Query()
	q.Del("page")
	u.RawQuery = q.Encode()
	p := pager{Page: page, Size: size, Total: n, Base: u}
	lo := min(page*size, n)
	return p, lo, min(lo+size, n)
}

// relative says how long ago (or from now) t is, coarsely.
func relative(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	suffix := "ago"
	if d < 0 {
		d, suffix = -d, "from now"
	}
	switch {
	case d < 5*time.Second:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds %s", int(d.Seconds()), suffix)
	case d < time.Hour:
		return fmt.Sprintf("%dm %s", int(d.Minutes()), suffix)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %s", int(d.Hours()), suffix)
	}
	return fmt.Sprintf("%dd %s", int(d.Hours()/24), suffix)
}

// funcs are the helpers the templates use.
func funcs(now func() time.Time) template.FuncMap {
	return template.FuncMap{
		// when renders a timestamp both relative and absolute.
		"when": func(t time.Time) template.HTML {
			if t.IsZero() {
				return "—"
			}
			abs := t.UTC().Format("2006-01-02 15:04:05Z")
			return template.HTML(fmt.Sprintf(`<time datetime="%s" title="%s">%s</time> <small class="abs">%s</small>`,
				t.UTC().Format(time.RFC3339Nano), abs, template.HTMLEscapeString(relative(t, now())), abs))
		},
		"ms": func(d time.Duration) string {
			return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
		},
		"clip": func(s string, n int) string {
			if r := []rune(s); len(r) > n {
				return string(r[:n-1]) + "…"
			}
			return s
		},
		"join":   strings.Join,
		"add":    func(a, b int) int { return a + b },
		"list":   func(s ...string) []string { return s },
		"states": func() []string { return messageStates },
	}
}

// layout names the templates every page is parsed with.
const layout = "templates/layout.html"

// pageNames are the page templates, by file name without .html.
var pageNames = []string{"signin", "overview", "messages", "message", "compose", "reservations", "tasks",
	"memory", "sessions", "session", "guard", "traces", "trace", "error"}

// parsePages parses each page with the layout.
func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t := template.New("layout.html").Funcs(funcs(time.Now))
		t, err := t.ParseFS(templateFS, layout, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("console: parse the %s page: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// render executes a page into a buffer, then writes it: a template error
// never sends half a page.
func (c *Console) render(w http.ResponseWriter, status int, name string, d pageData) {
	t, ok := c.pages[name]
	if !ok {
		http.Error(w, "no page "+name, http.StatusInternalServerError)
		return
	}
	if d.Now.IsZero() {
		d.Now = c.clock.Now()
	}
	now := d.Now
	t, err := t.Clone()
	if err == nil {
		t = t.Funcs(funcs(func() time.Time { return now }))
	}
	var buf bytes.Buffer
	if err == nil {
		err = t.Execute(&buf, d)
	}
	if err != nil {
		c.log.Error("console: rendering a page failed", "page", name, "error", err.Error())
		http.Error(w, "the page could not be rendered: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// agentType maps a configured type name to the envelope's.
func agentType(s string) envelope.AgentType { return envelope.AgentType(s) }

var _ fs.FS = templateFS
