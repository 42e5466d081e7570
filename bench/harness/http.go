package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// This file measures a server over MCP's Streamable HTTP transport, the
// way an HTTP client uses it: a POST per JSON-RPC message to one endpoint,
// sessions named by the Mcp-Session-Id header, and each request's answer
// read from the POST's body, as one application/json document or as a
// text/event-stream whose data lines carry it. The client is net/http's,
// with keep-alive connections over loopback only, one per client at most.
//
// The phases mirror the stdio ones: sequential calls on one session, one
// at a time; then concurrent calls from a number of clients (32 by
// default), each its own goroutine making one call at a time, so that that
// many calls are in flight. By default every client has its own session
// (HTTPOptions.Sessions 0), as 32 clients of a shared server would; with
// Sessions 1 they all POST, concurrently, on one session.

// AddrPlaceholder, in HTTPCommand's Args and Env, is replaced by the
// loopback address (127.0.0.1:port) the harness picked for the server.
const AddrPlaceholder = "{addr}"

// HTTPCommand is a server to launch that serves MCP over Streamable HTTP.
//
// The harness picks a free port on 127.0.0.1 and tells the server through
// AddrPlaceholder in Args or Env (for mcprt,
// MCPRT_TRANSPORT_HTTP_ADDR={addr} with --http); it then waits until the
// port accepts connections. The server's standard input is /dev/null and
// its standard error goes to Command.Stderr (/dev/null when nil), as over
// stdio: the server pays for its log writes, the harness nothing. The
// server is stopped with SIGTERM.
type HTTPCommand struct {
	Command
	// Endpoint is the URL path of the MCP endpoint ("/mcp").
	Endpoint string
}

// HTTPOptions sizes a RunHTTP. A zero field means its default; a negative
// count skips that phase.
type HTTPOptions struct {
	// ProtocolVersion is the revision asked for in initialize and sent as
	// MCP-Protocol-Version afterwards (DefaultProtocolVersion).
	ProtocolVersion string
	// Tool is the tool measured ("noop").
	Tool string
	// Arguments is the JSON object sent as the call's arguments ("{}").
	Arguments string
	// Warmup is the number of sequential calls made, and not measured,
	// before the sequential phase (2,000).
	Warmup int
	// Sequential is the number of measured sequential calls (20,000).
	Sequential int
	// ConcurrentWarmup is the number of concurrent calls made, and not
	// measured, before the concurrent phase (5,000).
	ConcurrentWarmup int
	// Concurrent is the number of measured concurrent calls (50,000).
	Concurrent int
	// Clients is the number of concurrent clients (32), each making one
	// call at a time.
	Clients int
	// Sessions is the number of sessions the clients share, client i using
	// session i mod Sessions; 0 means one per client.
	Sessions int
	// Timeout bounds the whole run; the server is killed when it passes
	// (10 minutes).
	Timeout time.Duration
	// CloseGrace is how long the server may take to exit after SIGTERM
	// (5 seconds).
	CloseGrace time.Duration
}

func (o *HTTPOptions) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.Warmup, 2000)
	def(&o.Sequential, 20000)
	def(&o.ConcurrentWarmup, 5000)
	def(&o.Concurrent, 50000)
	def(&o.Clients, 32)
	if o.Sessions <= 0 || o.Sessions > o.Clients {
		o.Sessions = o.Clients
	}
	if o.Tool == "" {
		o.Tool = "noop"
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.CloseGrace <= 0 {
		o.CloseGrace = 5 * time.Second
	}
}

// HTTPResult is what RunHTTP measured on one server.
type HTTPResult struct {
	// Name is the server's label (Command.Name).
	Name string
	// Sequential is the sequential phase (zero when skipped).
	Sequential Phase
	// Concurrent is the concurrent phase (zero when skipped); its InFlight
	// is the number of clients.
	Concurrent Phase
	// Sessions is the number of sessions the concurrent clients used.
	Sessions int
	// PeakRSS is the server's peak resident set (VmHWM) after both phases,
	// in bytes.
	PeakRSS int64
	// ExitErr is the server's exit error after SIGTERM (nil for exit
	// status 0). It does not fail the run.
	ExitErr error
}

// RunHTTP launches cmd, opens opts.Sessions sessions (each with the
// handshake), measures opts.Tool with sequential calls on the first
// session and then with opts.Clients concurrent clients, samples the peak
// resident set, and stops the server (DELETE of each session, then
// SIGTERM).
func RunHTTP(ctx context.Context, cmd HTTPCommand, opts HTTPOptions) (*HTTPResult, error) {
	opts.defaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	s, err := StartHTTP(ctx, cmd)
	if err != nil {
		return nil, err
	}
	res := &HTTPResult{Name: s.name}
	err = s.Handshake(opts.ProtocolVersion, opts.Tool, opts.Arguments, opts.Sessions)
	if err == nil {
		err = measureHTTP(s, opts, res)
	}
	res.ExitErr = s.Close(opts.CloseGrace)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (the run's timeout of %v passed)", err, opts.Timeout)
		}
		return nil, err
	}
	return res, nil
}

func measureHTTP(s *HTTPServer, opts HTTPOptions, res *HTTPResult) error {
	var err error
	if opts.Sequential > 0 {
		if opts.Warmup > 0 {
			if _, err = s.Sequential(opts.Warmup); err != nil {
				return err
			}
		}
		if res.Sequential, err = s.Sequential(opts.Sequential); err != nil {
			return err
		}
	}
	if opts.Concurrent > 0 {
		if opts.ConcurrentWarmup > 0 {
			if _, err = s.Concurrent(opts.ConcurrentWarmup, opts.Clients); err != nil {
				return err
			}
		}
		if res.Concurrent, err = s.Concurrent(opts.Concurrent, opts.Clients); err != nil {
			return err
		}
	}
	res.Sessions = len(s.sessions)
	mem, err := ProcMemory(s.PID())
	if err != nil {
		return err
	}
	res.PeakRSS = mem.Peak
	return nil
}

// Figures returns the result's figures in a fixed order, skipping the
// phases that did not run; they are named like Result's, the pipelined
// ones being concurrent ones here:
//
//	seq_p50_us seq_p95_us seq_p99_us seq_mean_us
//	concurrent_calls_per_s concurrent_p50_us concurrent_p95_us concurrent_p99_us
//	server_cpu_us_per_call_seq server_cpu_us_per_call_concurrent
//	server_cpu_us_per_call_seq_stat server_cpu_us_per_call_concurrent_stat
//	peak_rss_mb
func (r *HTTPResult) Figures() []Figure {
	var out []Figure
	add := func(name string, v float64) { out = append(out, Figure{name, v}) }
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	s, c := r.Sequential, r.Concurrent
	if s.Calls > 0 {
		add("seq_p50_us", us(s.P50))
		add("seq_p95_us", us(s.P95))
		add("seq_p99_us", us(s.P99))
		add("seq_mean_us", us(s.Mean))
	}
	if c.Calls > 0 {
		add("concurrent_calls_per_s", c.CallsPerSecond())
		add("concurrent_p50_us", us(c.P50))
		add("concurrent_p95_us", us(c.P95))
		add("concurrent_p99_us", us(c.P99))
	}
	if s.Calls > 0 {
		add("server_cpu_us_per_call_seq", us(s.CPUPerCall()))
	}
	if c.Calls > 0 {
		add("server_cpu_us_per_call_concurrent", us(c.CPUPerCall()))
	}
	if s.Calls > 0 {
		add("server_cpu_us_per_call_seq_stat", us(s.StatCPUPerCall()))
	}
	if c.Calls > 0 {
		add("server_cpu_us_per_call_concurrent_stat", us(c.StatCPUPerCall()))
	}
	add("peak_rss_mb", float64(r.PeakRSS)/(1<<20))
	return out
}

// HTTPServer is a running server and the HTTP client that talks to it.
// Its methods are not safe for concurrent use.
type HTTPServer struct {
	name   string
	cmd    *exec.Cmd
	ctx    context.Context
	url    string
	client *http.Client
	waited chan struct{}
	werr   error

	sessions []*httpSession
	nextID   atomic.Int64
	calls    atomic.Int64
	reqHead  []byte // `{"jsonrpc":"2.0","id":`
	reqTail  []byte // `,"method":"tools/call","params":{...}}`
}

// httpSession is one MCP session: its id and the headers of its POSTs.
type httpSession struct {
	id     string
	header http.Header
}

// StartHTTP launches cmd on a free loopback port (see HTTPCommand) and
// waits, up to 30 seconds, until the port accepts connections. The
// process is killed when ctx ends.
func StartHTTP(ctx context.Context, c HTTPCommand) (*HTTPServer, error) {
	if c.Name == "" {
		c.Name = c.Path
	}
	if c.Endpoint == "" {
		c.Endpoint = "/mcp"
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, fmt.Errorf("harness: %s: %w", c.Name, err)
	}
	subst := func(v []string) []string {
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = strings.ReplaceAll(s, AddrPlaceholder, addr)
		}
		return out
	}
	cmd := exec.CommandContext(ctx, c.Path, subst(c.Args)...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), subst(c.Env)...)
	cmd.WaitDelay = 5 * time.Second
	var devnull *os.File
	if c.Stderr == nil {
		if devnull, err = os.OpenFile(os.DevNull, os.O_WRONLY, 0); err != nil {
			return nil, err
		}
		cmd.Stderr = devnull
	} else {
		cmd.Stderr = c.Stderr
	}
	err = cmd.Start()
	if devnull != nil {
		devnull.Close()
	}
	if err != nil {
		return nil, fmt.Errorf("harness: start %s: %w", c.Name, err)
	}
	s := &HTTPServer{
		name:   c.Name,
		cmd:    cmd,
		ctx:    ctx,
		url:    "http://" + addr + c.Endpoint,
		client: newHTTPClient(),
		waited: make(chan struct{}),
	}
	s.nextID.Store(1)
	go func() {
		s.werr = cmd.Wait()
		close(s.waited)
	}()
	if err := s.awaitListening(addr, 30*time.Second); err != nil {
		_ = cmd.Process.Kill()
		<-s.waited
		return nil, err
	}
	return s, nil
}

// freeLoopbackAddr returns 127.0.0.1:port for a port that was free a
// moment ago.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// awaitListening dials addr every 10 ms until it accepts a connection.
func (s *HTTPServer) awaitListening(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return conn.Close()
		}
		select {
		case <-s.waited:
			return fmt.Errorf("harness: %s exited before listening on %s: %v", s.name, addr, s.werr)
		case <-s.ctx.Done():
			return fmt.Errorf("harness: %s: %w while waiting for it to listen on %s", s.name, s.ctx.Err(), addr)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("harness: %s did not listen on %s within %v", s.name, addr, limit)
		}
	}
}

// Name returns the server's label.
func (s *HTTPServer) Name() string { return s.name }

// PID returns the server's process id.
func (s *HTTPServer) PID() int { return s.cmd.Process.Pid }

// URL returns the endpoint's URL.
func (s *HTTPServer) URL() string { return s.url }

// Calls returns the number of tools/call requests the server has answered
// (warm-up, checks and measured calls alike).
func (s *HTTPServer) Calls() int64 { return s.calls.Load() }

// Handshake opens sessions sessions (at least one): initialize,
// notifications/initialized and one checked call of tool with arguments
// (a JSON object; "" means {}) on each, and tools/list on the first, to
// check that tool is there. It prepares the request that Sequential and
// Concurrent send.
func (s *HTTPServer) Handshake(protocolVersion, tool, arguments string, sessions int) error {
	if protocolVersion == "" {
		protocolVersion = DefaultProtocolVersion
	}
	if arguments == "" {
		arguments = "{}"
	}
	if !json.Valid([]byte(arguments)) {
		return fmt.Errorf("harness: the arguments %q are not valid JSON", arguments)
	}
	sessions = max(sessions, 1)
	name, _ := json.Marshal(tool)
	pv, _ := json.Marshal(protocolVersion)
	s.reqHead = []byte(`{"jsonrpc":"2.0","id":`)
	s.reqTail = []byte(`,"method":"tools/call","params":{"name":` + string(name) + `,"arguments":` + arguments + "}}")
	var c httpCaller
	for i := range sessions {
		sess := &httpSession{header: http.Header{
			"Content-Type": {"application/json"},
			"Accept":       {"application/json, text/event-stream"},
		}}
		id := s.nextID.Add(1) - 1
		init := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"initialize","params":{"protocolVersion":` +
			string(pv) + `,"capabilities":{},"clientInfo":{"name":"mcprt-bench-harness","version":"1"}}}`
		msg, resp, err := s.post(&c, sess, []byte(init), id)
		if err != nil {
			return fmt.Errorf("harness: %s: initialize (session %d): %w", s.name, i+1, err)
		}
		if !bytes.Contains(msg, []byte(`"protocolVersion"`)) {
			return fmt.Errorf("harness: %s: initialize: unexpected result %s", s.name, clip(msg))
		}
		sess.id = resp.Header.Get("Mcp-Session-Id")
		if sess.id != "" {
			sess.header.Set("Mcp-Session-Id", sess.id)
		}
		sess.header.Set("MCP-Protocol-Version", protocolVersion)
		s.sessions = append(s.sessions, sess)
		if err := s.notify(&c, sess, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
			return fmt.Errorf("harness: %s: notifications/initialized: %w", s.name, err)
		}
		if i == 0 {
			id = s.nextID.Add(1) - 1
			list := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/list","params":{}}`
			if msg, _, err = s.post(&c, sess, []byte(list), id); err != nil {
				return fmt.Errorf("harness: %s: tools/list: %w", s.name, err)
			}
			if !bytes.Contains(msg, []byte(`"name":`+string(name))) {
				return fmt.Errorf("harness: %s: tools/list does not list %s: %s", s.name, name, clip(msg))
			}
		}
		if err := s.call(&c, sess); err != nil {
			return fmt.Errorf("harness: %s: tools/call %s: %w", s.name, name, err)
		}
	}
	return nil
}

// newHTTPClient returns the harness's HTTP client: keep-alive connections
// to loopback addresses only, all kept when idle (each client goroutine
// holds one connection at a time, so there are as many as there were
// clients at once), no compression, no proxy, HTTP/1.1.
func newHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return nil, fmt.Errorf("harness: refusing to dial %s: loopback only", addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        maxHTTPClients,
		MaxIdleConnsPerHost: maxHTTPClients,
		IdleConnTimeout:     5 * time.Minute,
		DisableCompression:  true,
	}}
}

// httpCaller is one client's scratch space.
type httpCaller struct {
	req  []byte
	body bytes.Buffer
}

// call makes one tools/call on sess and checks that it succeeded.
func (s *HTTPServer) call(c *httpCaller, sess *httpSession) error {
	id := s.nextID.Add(1) - 1
	c.req = append(c.req[:0], s.reqHead...)
	c.req = strconv.AppendInt(c.req, id, 10)
	c.req = append(c.req, s.reqTail...)
	msg, _, err := s.post(c, sess, c.req, id)
	if err != nil {
		return err
	}
	if isToolError(msg) {
		return fmt.Errorf("id %d was answered with a tool error: %s", id, clip(msg))
	}
	s.calls.Add(1)
	return nil
}

// post sends the request body (whose id is id) on sess and returns the
// answer with that id, valid until c's next use, and the HTTP response
// (its body already read and closed). An error answer is an error.
func (s *HTTPServer) post(c *httpCaller, sess *httpSession, body []byte, id int64) ([]byte, *http.Response, error) {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header = sess.header
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, s.exited(err)
	}
	c.body.Reset()
	_, err = c.body.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer to id %d: %w", id, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, nil, fmt.Errorf("id %d: HTTP status %s: %s", id, resp.Status, clip(c.body.Bytes()))
	}
	msg := findAnswer(resp.Header.Get("Content-Type"), c.body.Bytes(), id)
	if msg == nil {
		return nil, nil, fmt.Errorf("no answer to id %d in the %s body: %s", id, resp.Header.Get("Content-Type"),
			clip(c.body.Bytes()))
	}
	if _, _, isErr, _ := scanEnvelope(msg); isErr {
		return nil, nil, fmt.Errorf("id %d was answered with an error: %s", id, clip(msg))
	}
	return msg, resp, nil
}

// exited adds to a request's error that the server has exited, when it
// has (within 5 s: on a loaded machine the exit of a server that just
// closed its connections may take a while to be reaped; a request that
// failed is the slow path, so waiting costs nothing on the fast one).
func (s *HTTPServer) exited(err error) error {
	select {
	case <-s.waited:
	case <-time.After(5 * time.Second):
		return err
	}
	status := "exit status 0"
	if s.werr != nil {
		status = s.werr.Error()
	}
	return fmt.Errorf("%w (the server exited: %s)", err, status)
}

// notify POSTs a notification on sess; the answer must be 202 Accepted
// (200 and 204 pass too).
func (s *HTTPServer) notify(c *httpCaller, sess *httpSession, body string) error {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = sess.header
	resp, err := s.client.Do(req)
	if err != nil {
		return s.exited(err)
	}
	c.body.Reset()
	_, _ = c.body.ReadFrom(resp.Body)
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusAccepted, http.StatusOK, http.StatusNoContent:
		return nil
	}
	return fmt.Errorf("HTTP status %s: %s", resp.Status, clip(c.body.Bytes()))
}

// findAnswer returns the message with the given id in a POST's answer: the
// body itself when it is JSON, or one of the data lines of an event
// stream. It returns nil when there is none.
func findAnswer(contentType string, body []byte, id int64) []byte {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		if got, ok, _, isCall := scanEnvelope(body); ok && !isCall && got == id {
			return body
		}
		return nil
	}
	for len(body) > 0 {
		line, rest, _ := bytes.Cut(body, []byte("\n"))
		body = rest
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if got, ok, _, isCall := scanEnvelope(data); ok && !isCall && got == id {
			return data
		}
	}
	return nil
}

// cpuSample reads the server's CPU time by both measures (see
// Process.CPUTime and Process.StatCPUTime).
func (s *HTTPServer) cpuSample() (cpuSample, error) {
	stat, err := ProcCPUTime(s.PID())
	if err != nil {
		return cpuSample{}, err
	}
	run, err := ProcRunTime(s.PID())
	if err != nil || run <= 0 {
		run = stat
	}
	return cpuSample{run, stat}, nil
}
