package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a tiny MCP server: with HARNESS_FAKE_SERVER
// set it serves stdio instead of running the tests ("ok" answers noop,
// "error" answers every tools/call with a JSON-RPC error, "exit" exits
// after the handshake).
func TestMain(m *testing.M) {
	if mode := os.Getenv("HARNESS_FAKE_SERVER"); mode != "" {
		fakeServer(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fakeServer(mode string) {
	r := bufio.NewReader(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	// A notification first: the harness must skip messages without an id.
	w.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}` + "\n")
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var env struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &env) != nil || env.ID == nil {
			continue
		}
		id := string(env.ID)
		switch env.Method {
		case "initialize":
			w.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}` + "\n")
		case "tools/list":
			w.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[{"name":"noop","inputSchema":{"type":"object"}}]}}` + "\n")
		case "tools/call":
			switch mode {
			case "exit":
				w.Flush()
				os.Exit(0)
			case "error":
				if id != "3" { // the handshake's checked call succeeds
					w.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"boom"}}` + "\n")
					break
				}
				fallthrough
			case "toolerror":
				if id != "3" {
					w.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"busy"}],"isError":true}}` + "\n")
					break
				}
				fallthrough
			default:
				// A nested "id" must not fool the scanner.
				w.WriteString(`{"jsonrpc":"2.0","result":{"content":[],"_meta":{"id":999}},"id":` + id + `}` + "\n")
			}
		default:
			w.WriteString(`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32601,"message":"no"}}` + "\n")
		}
		if r.Buffered() == 0 {
			w.Flush()
		}
	}
}

func fakeCommand(t *testing.T, mode string) Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Command{Name: "fake", Path: exe, Env: []string{"HARNESS_FAKE_SERVER=" + mode}}
}

func TestRunMeasuresEveryPhase(t *testing.T) {
	res, err := Run(context.Background(), fakeCommand(t, "ok"), Options{
		Warmup: 5, Sequential: 50, PipelinedWarmup: 10, Pipelined: 300, InFlight: 8,
		RSSAfter: []int64{100, 700}, Timeout: time.Minute,
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
	if res.Pipelined.Calls != 300 || res.Pipelined.InFlight != 8 {
		t.Errorf("pipelined phase: calls %d, in flight %d", res.Pipelined.Calls, res.Pipelined.InFlight)
	}
	for i, d := range res.Pipelined.Latencies {
		if d <= 0 {
			t.Fatalf("pipelined call %d has no latency", i)
		}
	}
	if res.PeakRSS <= 0 {
		t.Errorf("peak RSS %d", res.PeakRSS)
	}
	if len(res.RSSAfter) != 2 || res.RSSAfter[0].Calls != 100 || res.RSSAfter[1].Calls != 700 {
		t.Errorf("RSS samples: %+v", res.RSSAfter)
	}
	var names []string
	for _, f := range res.Figures() {
		names = append(names, f.Name)
	}
	want := "seq_p50_us seq_p95_us seq_p99_us seq_mean_us pipelined_calls_per_s pipelined_p50_us " +
		"pipelined_p95_us pipelined_p99_us server_cpu_us_per_call_seq server_cpu_us_per_call_pipelined " +
		"server_cpu_us_per_call_seq_stat server_cpu_us_per_call_pipelined_stat " +
		"peak_rss_mb rss_mb_after_100_calls peak_rss_mb_after_100_calls rss_mb_after_700_calls " +
		"peak_rss_mb_after_700_calls rss_growth_mb_100_to_700"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("figures:\n got %s\nwant %s", got, want)
	}
}

func TestRunSkipsPhases(t *testing.T) {
	res, err := Run(context.Background(), fakeCommand(t, "ok"), Options{Sequential: -1, Pipelined: 20})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sequential.Calls != 0 || res.Pipelined.Calls != 20 {
		t.Errorf("phases: %d sequential, %d pipelined", res.Sequential.Calls, res.Pipelined.Calls)
	}
	if f := res.Figures(); f[0].Name != "pipelined_calls_per_s" {
		t.Errorf("first figure %q", f[0].Name)
	}
}

func TestRunReportsErrorAnswers(t *testing.T) {
	for _, mode := range []string{"error", "toolerror"} {
		_, err := Run(context.Background(), fakeCommand(t, mode), Options{Warmup: -1, Sequential: 3, Pipelined: -1})
		if err == nil || !strings.Contains(err.Error(), "answered with an error") {
			t.Fatalf("%s: err = %v, want an error answer", mode, err)
		}
		_, err = Run(context.Background(), fakeCommand(t, mode), Options{Sequential: -1, PipelinedWarmup: -1, Pipelined: 40})
		if err == nil || !strings.Contains(err.Error(), "answered with an error") {
			t.Fatalf("%s, pipelined: err = %v, want an error answer", mode, err)
		}
	}
}

func TestRunReportsAServerThatExits(t *testing.T) {
	_, err := Run(context.Background(), fakeCommand(t, "exit"), Options{Sequential: 3})
	if err == nil || !strings.Contains(err.Error(), "closed its output") {
		t.Fatalf("err = %v, want the closed output", err)
	}
}

func TestScanEnvelope(t *testing.T) {
	for _, tc := range []struct {
		msg                 string
		id                  int64
		ok, isErr, isMethod bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, 7, true, false, false},
		{`{"result":{"id":3,"s":"}\"{","a":[1,{"id":4}]},"id":12}`, 12, true, false, false},
		{` { "id" : -2 , "error" : {"code":-1} } `, -2, true, true, false},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{}}`, 0, false, false, true},
		{`{"jsonrpc":"2.0","id":"abc","method":"ping"}`, 0, false, false, true},
		{`{"id":1.5,"result":null}`, 0, false, false, false},
		{`{"id":null,"error":{}}`, 0, false, true, false},
		{`[]`, 0, false, false, false},
		{``, 0, false, false, false},
	} {
		id, ok, isErr, isMethod := scanEnvelope([]byte(tc.msg))
		if id != tc.id || ok != tc.ok || isErr != tc.isErr || isMethod != tc.isMethod {
			t.Errorf("scanEnvelope(%s) = %d %v %v %v, want %d %v %v %v", tc.msg,
				id, ok, isErr, isMethod, tc.id, tc.ok, tc.isErr, tc.isMethod)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for q, want := range map[float64]time.Duration{0.5: 50, 0.95: 95, 0.99: 99, 1: 100, 0.001: 1} {
		if got := Percentile(d, q); got != want {
			t.Errorf("Percentile(%v) = %d, want %d", q, got, want)
		}
	}
	if Percentile(nil, 0.5) != 0 || Percentile(d[:1], 0.99) != 1 {
		t.Error("edge cases")
	}
}

func TestProcReaders(t *testing.T) {
	if tick := ClockTick(); tick <= 0 || tick > time.Second {
		t.Fatalf("ClockTick = %v", tick)
	}
	if _, err := ProcCPUTime(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	m, err := ProcMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.Peak < m.RSS {
		t.Fatalf("memory %+v", m)
	}
	if d, err := ProcRunTime(os.Getpid()); err != nil || d < 0 {
		t.Fatalf("ProcRunTime = %v, %v", d, err)
	}
	if la := LoadAverage(); len(strings.Fields(la)) != 3 {
		t.Fatalf("LoadAverage = %q", la)
	}
}

func TestFigureFormat(t *testing.T) {
	for v, want := range map[float64]string{38.24: "38.2", 51234.4: "51234", 0.05: "0.1", 999.94: "999.9"} {
		if got := (Figure{"x", v}).Format(); got != want {
			t.Errorf("Format(%v) = %q, want %q", v, got, want)
		}
	}
}
