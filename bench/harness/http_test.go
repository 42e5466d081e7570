package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// With HARNESS_FAKE_HTTP_SERVER set, the test binary serves Streamable
// HTTP at HARNESS_FAKE_HTTP_ADDR instead of running the tests: "json"
// answers noop with application/json bodies, "sse" with event streams
// that carry a notification first; "error", "toolerror" and "status"
// answer every tools/call after each session's first with a JSON-RPC
// error, a tool error or HTTP 500; "exit" exits at the fifth tools/call.
// It checks the headers a client must send and stops on SIGTERM.
func init() {
	if mode := os.Getenv("HARNESS_FAKE_HTTP_SERVER"); mode != "" {
		fakeHTTPServer(mode, os.Getenv("HARNESS_FAKE_HTTP_ADDR"))
		os.Exit(0)
	}
}

func fakeHTTPServer(mode, addr string) {
	var (
		mu       sync.Mutex
		sessions = map[string]int{} // tools/call answered per session
		calls    int
	)
	handler := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			http.Error(w, "not here", http.StatusNotFound)
			return
		}
		sid := r.Header.Get("Mcp-Session-Id")
		if r.Method == http.MethodDelete {
			mu.Lock()
			delete(sessions, sid)
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.Header.Get("Content-Type") != "application/json" ||
			!strings.Contains(r.Header.Get("Accept"), "application/json") ||
			!strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			http.Error(w, "bad content type or accept", http.StatusNotAcceptable)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &env) != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if env.Method == "initialize" {
			sid = fmt.Sprintf("s%d", len(sessions)+1)
			sessions[sid] = 0
			w.Header().Set("Mcp-Session-Id", sid)
		} else if _, ok := sessions[sid]; !ok || r.Header.Get("MCP-Protocol-Version") != "2025-06-18" {
			http.Error(w, "no session or protocol version", http.StatusBadRequest)
			return
		}
		if env.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		id := string(env.ID)
		var answer string
		switch env.Method {
		case "initialize":
			answer = `{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`
		case "tools/list":
			answer = `{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"noop","inputSchema":{"type":"object"}}]}}`
		case "tools/call":
			calls++
			sessions[sid]++
			later := sessions[sid] > 1
			switch {
			case mode == "exit" && calls == 5:
				os.Exit(3)
			case mode == "status" && later:
				http.Error(w, "boom", http.StatusInternalServerError)
				return
			case mode == "error" && later:
				answer = `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"boom"}}`
			case mode == "toolerror" && later:
				answer = `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[],"isError":true}}`
			default:
				// A nested "id" must not fool the scanner.
				answer = `{"jsonrpc":"2.0","result":{"content":[],"_meta":{"id":999}},"id":` + id + `}`
			}
		default:
			answer = `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"no"}}`
		}
		if mode == "sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: 1\r\nevent: message\r\ndata: %s\r\n\r\nid: 2\r\ndata: %s\r\n\r\n",
				`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi","id":`+id+`}}`, answer)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}
	hs := &http.Server{Addr: addr, Handler: http.HandlerFunc(handler)}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	go func() {
		<-sigs
		hs.Close()
	}()
	if err := hs.ListenAndServe(); err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func fakeHTTPCommand(t *testing.T, mode string) HTTPCommand {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return HTTPCommand{Command: Command{Name: "fake-http", Path: exe,
		Env: []string{"HARNESS_FAKE_HTTP_SERVER=" + mode, "HARNESS_FAKE_HTTP_ADDR=" + AddrPlaceholder}}}
}

func TestRunHTTPMeasuresEveryPhase(t *testing.T) {
	for _, mode := range []string{"json", "sse"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			res, err := RunHTTP(context.Background(), fakeHTTPCommand(t, mode), HTTPOptions{
				Warmup: 5, Sequential: 50, ConcurrentWarmup: 10, Concurrent: 300, Clients: 8, Timeout: time.Minute,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitErr != nil {
				t.Errorf("exit: %v", res.ExitErr)
			}
			if res.Sequential.Calls != 50 || len(res.Sequential.Latencies) != 50 || res.Sequential.InFlight != 1 {
				t.Errorf("sequential phase: %+v", res.Sequential)
			}
			if res.Concurrent.Calls != 300 || res.Concurrent.InFlight != 8 || res.Sessions != 8 {
				t.Errorf("concurrent phase: calls %d, clients %d, sessions %d",
					res.Concurrent.Calls, res.Concurrent.InFlight, res.Sessions)
			}
			for i, d := range res.Concurrent.Latencies {
				if d <= 0 {
					t.Fatalf("concurrent call %d has no latency", i)
				}
			}
			if res.PeakRSS <= 0 || res.Sequential.CPU <= 0 {
				t.Errorf("peak RSS %d, sequential CPU %v", res.PeakRSS, res.Sequential.CPU)
			}
			var names []string
			for _, f := range res.Figures() {
				names = append(names, f.Name)
			}
			want := "seq_p50_us seq_p95_us seq_p99_us seq_mean_us concurrent_calls_per_s concurrent_p50_us " +
				"concurrent_p95_us concurrent_p99_us server_cpu_us_per_call_seq server_cpu_us_per_call_concurrent " +
				"server_cpu_us_per_call_seq_stat server_cpu_us_per_call_concurrent_stat peak_rss_mb"
			if got := strings.Join(names, " "); got != want {
				t.Errorf("figures:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestRunHTTPOneSharedSession(t *testing.T) {
	res, err := RunHTTP(context.Background(), fakeHTTPCommand(t, "json"), HTTPOptions{
		Sequential: -1, ConcurrentWarmup: -1, Concurrent: 100, Clients: 4, Sessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sessions != 1 || res.Sequential.Calls != 0 || res.Concurrent.Calls != 100 {
		t.Errorf("sessions %d, %d sequential, %d concurrent calls", res.Sessions, res.Sequential.Calls, res.Concurrent.Calls)
	}
	if f := res.Figures(); f[0].Name != "concurrent_calls_per_s" {
		t.Errorf("first figure %q", f[0].Name)
	}
}

func TestRunHTTPReportsFailures(t *testing.T) {
	for mode, want := range map[string]string{
		"error":     "answered with an error",
		"toolerror": "answered with a tool error",
		"status":    "HTTP status 500",
		"exit":      "the server exited: exit status 3",
	} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			_, err := RunHTTP(context.Background(), fakeHTTPCommand(t, mode), HTTPOptions{
				Warmup: -1, Sequential: 10, Concurrent: -1, Clients: 1})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("sequential: err = %v, want %q", err, want)
			}
			if mode == "exit" {
				return
			}
			_, err = RunHTTP(context.Background(), fakeHTTPCommand(t, mode), HTTPOptions{
				Sequential: -1, ConcurrentWarmup: -1, Concurrent: 40, Clients: 4})
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("concurrent: err = %v, want %q", err, want)
			}
		})
	}
}

func TestStartHTTPReportsAServerThatNeverListens(t *testing.T) {
	_, err := StartHTTP(context.Background(), HTTPCommand{Command: Command{Name: "false", Path: "/bin/false"}})
	if err == nil || !strings.Contains(err.Error(), "exited before listening") {
		t.Fatalf("err = %v, want an exit before listening", err)
	}
}

func TestFindAnswer(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":7,"result":{}}`
	for _, c := range []struct {
		contentType, body string
		want              string
	}{
		{"application/json", answer, answer},
		{"application/json; charset=utf-8", answer, answer},
		{"application/json", `{"jsonrpc":"2.0","id":8,"result":{}}`, ""},
		{"text/event-stream", "event: message\ndata: " + answer + "\n\n", answer},
		{"text/event-stream", "id: 1\r\ndata:" + answer + "\r\n\r\n", answer},
		{"text/event-stream", `data: {"jsonrpc":"2.0","method":"x","params":{"id":7}}` + "\n\ndata: " + answer + "\n\n", answer},
		{"text/event-stream", "id: 1\ndata:\n\n", ""},
	} {
		if got := string(findAnswer(c.contentType, []byte(c.body), 7)); got != c.want {
			t.Errorf("findAnswer(%q, %q) = %q, want %q", c.contentType, c.body, got, c.want)
		}
	}
}
