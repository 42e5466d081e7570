package mcp

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcprt/mcprt/jsonrpc"
)

// The method table: every method in it is routed, gated as its entry says,
// and initialize advertises the capabilities computed from it.

// methodParams are valid params for each method of the table.
var methodParams = map[string]string{
	MethodInitialize: `{"protocolVersion":"2025-11-25"}`,
	MethodPing:       ``,
	MethodShutdown:   ``,
	MethodToolsList:  `{}`,
	MethodToolsCall:  `{"name":"noop"}`,

	MethodLoggingSetLevel:        `{"level":"info"}`,
	MethodResourcesList:          `{}`,
	MethodResourcesTemplatesList: `{}`,
	MethodResourcesRead:          `{"uri":"mem:/a"}`,
	MethodResourcesSubscribe:     `{"uri":"mem:/a"}`,
	MethodResourcesUnsubscribe:   `{"uri":"mem:/a"}`,
	MethodPromptsList:            `{}`,
	MethodPromptsGet:             `{"name":"p"}`,
	MethodCompletionComplete:     `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}}`,
	// The stateless revision's own methods are routed statelessly in any
	// state (modern_test.go).
	MethodServerDiscover:      `{}`,
	MethodSubscriptionsListen: `{}`,
	// The tasks extension's methods (tasks_test.go).
	MethodTasksGet:    `{"taskId":"x"}`,
	MethodTasksUpdate: `{"taskId":"x","inputResponses":{}}`,
	MethodTasksCancel: `{"taskId":"x"}`,
}

func TestMethodTableRouted(t *testing.T) {
	for name := range methodTable {
		if _, ok := methodParams[name]; !ok {
			t.Fatalf("method %s of the table has no test params: add it to methodParams", name)
		}
	}
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		for name, spec := range methodTable {
			if spec.gate == gateStateless {
				continue
			}
			t.Run(name, func(t *testing.T) {
				c := newTestClient(t, tr, testConfig(), Options{}, func(s *Server) {
					if err := s.AddTool(Tool{Name: "noop", Handler: nopHandler}); err != nil {
						t.Fatal(err)
					}
				}, "")
				// Before the handshake: served only if the gate says so.
				m := c.request("1", name, methodParams[name])
				served := m["result"] != nil
				if want := spec.gate != gateRunning; served != want {
					t.Fatalf("STARTING: %s served %v, want %v: %v", name, served, want, m)
				}
				if !served {
					if e := rpcError(t, m); e["code"] != float64(CodeNotInitialized) {
						t.Fatalf("STARTING: %s: %v, want -32002", name, e)
					}
				}
				if spec.closeAfter {
					return // served or not, the rest is for methods that keep the session
				}
				if name != MethodInitialize {
					c.handshake(Version20251125, `{}`, `{"name":"t","version":"1"}`)
				}
				if name == MethodInitialize {
					c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
					c.quiet()
				}
				// RUNNING: every method is routed to its handler; none is
				// -32601 but those of a capability the server does not
				// serve (a bare server serves no resources, prompts or
				// completions: it did not advertise them).
				m = c.request("2", name, methodParams[name])
				e, _ := m["error"].(map[string]any)
				notFound := e != nil && e["code"] == float64(jsonrpc.CodeMethodNotFound)
				if serves := spec.capability == "" || c.srv.serves(spec.capability); notFound == serves {
					t.Fatalf("RUNNING: %s (capability %q, served %v) answered %v", name, spec.capability, serves, m)
				}
				if notFound {
					return
				}
				served = m["result"] != nil
				if want := spec.gate != gateHandshake; served != want {
					t.Fatalf("RUNNING: %s served %v, want %v: %v", name, served, want, m)
				}
			})
		}
		// A method outside the table is -32601 once running.
		c := newTestClient(t, tr, testConfig(), Options{}, nil, Version20251125)
		for i, name := range []string{"roots/list", "sampling/createMessage", "Ping", "tools/list/"} {
			if e := rpcError(t, c.request(itoa(i+1), name, "")); e["code"] != float64(jsonrpc.CodeMethodNotFound) {
				t.Errorf("%s: %v, want -32601", name, e)
			}
		}
	})
}

// TestShutdownMethod: shutdown answers {} and closes the session.
func TestShutdownMethod(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		c := newTestClient(t, tr, testConfig(), Options{}, nil, Version20251125)
		if m := c.request("9", MethodShutdown, ""); string(mustMarshal(t, m["result"])) != `{}` {
			t.Fatalf("shutdown: %v", m)
		}
		recv(t, c.done, "Serve to return after shutdown")
		if !c.sess.ShutdownRequested() || c.sess.State() != StateClosed {
			t.Fatalf("after shutdown: requested %v, state %v", c.sess.ShutdownRequested(), c.sess.State())
		}
	})
}

// TestSessionRouteByState checks Route directly against the table, state by
// state.
func TestSessionRouteByState(t *testing.T) {
	srv, _ := newTestServer(t, testConfig(), Options{}, nil)
	sess := srv.Connect(newNullStream(), nil)
	for _, st := range []State{StateStarting, StateInitializing, StateRunning, StateClosed} {
		sess.state.Store(int32(st))
		for name, spec := range methodTable {
			if spec.gate == gateStateless {
				continue
			}
			r := sess.route(context.Background(), &jsonrpc.Request{Method: name})
			var want bool // routed to the method's handler
			switch spec.gate {
			case gateAlways:
				want = st != StateClosed
			case gateHandshake:
				want = st == StateStarting
			case gateRunning:
				want = st == StateRunning
			}
			routed := r.Handler != nil && r.Err == nil && r.Inline == spec.inline && r.CloseAfter == spec.closeAfter
			if st == StateClosed {
				routed = false
				if r.Handler == nil {
					t.Errorf("CLOSED: %s answered %v; a closed session answers nothing", name, r.Err)
				}
			}
			if routed != want {
				t.Errorf("%v: %s routed %v, want %v (%+v)", st, name, routed, want, r)
			}
		}
	}
	if st := State(9).String(); st != "State(9)" {
		t.Errorf("State(9).String() = %q", st)
	}
}

// capabilityValues are the values initialize advertises, by capability.
var capabilityValues = map[string]string{
	"tools":   `{"listChanged":true}`,
	"logging": `{}`,
}

// TestCapabilitiesFromTable: initialize advertises exactly the
// capabilities the table's methods imply, of those the server serves; a
// bare server {"logging":{},"tools":{"listChanged":true}}.
func TestCapabilitiesFromTable(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		for _, v := range SupportedVersions() {
			c := newTestClient(t, tr, testConfig(), Options{Name: "capsrv", Version: "9.9"}, nil, "")
			var implied []string
			for _, spec := range methodTable {
				if cp := spec.capability; cp != "" && c.srv.serves(cp) && !slices.Contains(implied, cp) {
					implied = append(implied, cp)
				}
			}
			slices.Sort(implied)
			res := c.handshake(v, `{}`, `{"name":"t","version":"1"}`)
			caps := res["capabilities"].(map[string]any)
			var advertised []string
			for k := range caps {
				advertised = append(advertised, k)
			}
			slices.Sort(advertised)
			if !slices.Equal(advertised, implied) {
				t.Errorf("%s: advertised %v, the table implies %v", v, advertised, implied)
			}
			for k, val := range caps {
				if want, ok := capabilityValues[k]; !ok || string(mustMarshal(t, val)) != want {
					t.Errorf("%s: capability %s: %s, want %s", v, k, mustMarshal(t, val), want)
				}
			}
			info := res["serverInfo"].(map[string]any)
			if res["protocolVersion"] != v || info["name"] != "capsrv" || info["version"] != "9.9" {
				t.Errorf("%s: initialize result %v", v, res)
			}
		}
	})
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// nullStream is a Stream that is never read or written: for sessions the
// tests only route on.
type nullStream struct{ done chan struct{} }

func newNullStream() *nullStream { return &nullStream{done: make(chan struct{})} }

func (n *nullStream) Read() ([]byte, error)                         { <-n.done; return nil, jsonrpc.ErrClosed }
func (n *nullStream) Write(context.Context, jsonrpc.Outgoing) error { return jsonrpc.ErrClosed }
func (n *nullStream) Close() error                                  { return nil }

// TestVersionNegotiation: a supported revision is echoed, any other is
// answered with the latest; SupportedVersions returns a copy.
func TestVersionNegotiation(t *testing.T) {
	vs := SupportedVersions()
	vs[0] = "changed"
	if SupportedVersions()[0] != Version20241105 || len(SupportedVersions()) != 4 {
		t.Fatalf("SupportedVersions() = %v: a caller changed it", SupportedVersions())
	}
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		for _, tc := range [][2]string{{Version20241105, Version20241105}, {Version20250326, Version20250326},
			{Version20250618, Version20250618}, {Version20251125, Version20251125},
			{"1999-01-01", LatestVersion}, {"2099-12-31", LatestVersion}, {"", LatestVersion}} {
			c := newTestClient(t, tr, testConfig(), Options{}, nil, "")
			if got := c.handshake(tc[0], `{}`, `{"name":"t","version":"1"}`)["protocolVersion"]; got != tc[1] {
				t.Errorf("requested %q: negotiated %v, want %s", tc[0], got, tc[1])
			}
			if got := c.sess.ProtocolVersion(); got != tc[1] {
				t.Errorf("requested %q: ProtocolVersion() = %q", tc[0], got)
			}
		}
	})
}

// TestBatchesOnlyIn20250326: a JSON-RPC batch is processed under the one
// revision that has it and refused under the others and before
// initialize.
func TestBatchesOnlyIn20250326(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transportKind) {
		batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`
		c := newTestClient(t, tr, testConfig(), Options{}, nil, "")
		c.send(batch)
		if e := rpcError(t, c.expect()); e["code"] != float64(jsonrpc.CodeInvalidRequest) {
			t.Errorf("batch before initialize: %v", e)
		}
		for _, v := range SupportedVersions() {
			c := newTestClient(t, tr, testConfig(), Options{}, nil, v)
			c.send(batch)
			var got any
			if err := json.Unmarshal(mustMarshal(t, c.expectRaw()), &got); err != nil {
				t.Fatal(err)
			}
			arr, isArray := got.([]any)
			if v == Version20250326 {
				if !isArray || len(arr) != 2 {
					t.Errorf("%s: batch answered %v, want an array of two", v, got)
				}
				continue
			}
			if m, ok := got.(map[string]any); !ok || rpcError(t, m)["code"] != float64(jsonrpc.CodeInvalidRequest) {
				t.Errorf("%s: batch answered %v, want -32600", v, got)
			}
		}
	})
}
