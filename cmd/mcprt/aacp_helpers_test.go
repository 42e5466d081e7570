package main

// Helpers of the agent messaging tests (aacp_*_test.go): a client that
// drives one mcprt process through the aacp_* tools, pipelining calls when
// asked, and the operator commands run as a subprocess.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcprt/mcprt/internal/wiretest"
)

// aproc is one mcprt process seen through its aacp_* tools.
type aproc struct {
	p     *wiretest.Proc
	agent string
	next  int
	stash map[string]string // responses read before they were awaited, by raw id
}

// aerr is a tool error.
type aerr struct {
	Code, Message string
	Retryable     bool
	Details       map[string]any
}

// aacpEnv is the environment of a messaging session: the shared data
// directory and the agent it acts for.
func aacpEnv(dir, agent, typ string, extra ...string) []string {
	return append([]string{"MCPRT_AACP_DATA_DIR=" + dir, "MCPRT_AACP_AGENT_ID=" + agent, "MCPRT_AACP_AGENT_TYPE=" + typ,
		"MCPRT_RESOURCES_MAX_CONCURRENT_EXECUTIONS=64"}, extra...)
}

// startAgent starts mcprt as agent (of typ) on dir and completes the
// handshake.
func startAgent(t testing.TB, dir, agent, typ string, extra ...string) *aproc {
	t.Helper()
	p := wiretest.Start(t, wiretest.Build(t), wiretest.Options{Env: aacpEnv(dir, agent, typ, extra...)})
	p.Handshake(t, latestRevision)
	return &aproc{p: p, agent: agent, stash: map[string]string{}}
}

// send sends a tools/call without waiting and returns its id.
func (a *aproc) send(name, args string) string {
	a.next++
	id := strconv.Itoa(a.next)
	a.p.Send(toolsCallLine(id, name, args, ""))
	return id
}

// await reads the response to id: its structured value, or its tool error.
func (a *aproc) await(t testing.TB, id string) (map[string]any, *aerr) {
	t.Helper()
	for {
		if line, ok := a.stash[id]; ok {
			delete(a.stash, id)
			return decodeCall(t, line)
		}
		line := a.p.Expect(t)
		var head struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &head); err != nil || head.ID == nil {
			continue // a notification
		}
		a.stash[string(head.ID)] = line
	}
}

// decodeCall decodes a tools/call response line.
func decodeCall(t testing.TB, line string) (map[string]any, *aerr) {
	t.Helper()
	var resp struct {
		Result *struct {
			Content []struct {
				Type, Text string
			} `json:"content"`
			Structured map[string]any `json:"structuredContent"`
			IsError    bool           `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result == nil || len(resp.Result.Content) == 0 {
		t.Fatalf("not a tools/call result: %s", clip(line))
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(resp.Result.Content[0].Text), &v); err != nil {
		t.Fatalf("the result text is not a JSON object: %s", clip(line))
	}
	if !resp.Result.IsError {
		return v, nil
	}
	e := &aerr{}
	e.Code, _ = v["code"].(string)
	e.Message, _ = v["message"].(string)
	e.Retryable, _ = v["retryable"].(bool)
	e.Details, _ = v["details"].(map[string]any)
	if e.Code == "" || e.Message == "" || v["correlationId"] == nil || v["runId"] == nil {
		t.Fatalf("incomplete tool error: %s", clip(line))
	}
	return nil, e
}

// ok calls a tool and fails t unless it succeeds.
func (a *aproc) ok(t testing.TB, name, args string) map[string]any {
	t.Helper()
	v, e := a.await(t, a.send(name, args))
	if e != nil {
		t.Fatalf("%s %s as %s: %s: %s", name, clip(args), a.agent, e.Code, e.Message)
	}
	return v
}

// fails calls a tool and fails t unless it fails with code.
func (a *aproc) fails(t testing.TB, name, args, code string) *aerr {
	t.Helper()
	v, e := a.await(t, a.send(name, args))
	if e == nil {
		t.Fatalf("%s %s: succeeded with %v, want %s", name, clip(args), v, code)
	}
	if e.Code != code {
		t.Fatalf("%s %s: %s (%s), want %s", name, clip(args), e.Code, e.Message, code)
	}
	return e
}

// receive returns the messages of one aacp_receive.
func (a *aproc) receive(t testing.TB, args string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range a.ok(t, "aacp_receive", args)["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// receiveOne waits for one message for the process's own agent (failing
// t after about 24 s).
func (a *aproc) receiveOne(t testing.TB, types ...string) map[string]any {
	t.Helper()
	return a.receiveAs(t, "", types...)
}

// receiveAs waits for one message for agent ("" for the own agent) of one
// of types (any when none). Each wait stays under wiretest's read limit.
func (a *aproc) receiveAs(t testing.TB, agent string, types ...string) map[string]any {
	t.Helper()
	args := `{"waitMs":8000,"max":1`
	if agent != "" {
		args += `,"agentId":` + jsonString(agent)
	}
	if len(types) > 0 {
		b, _ := json.Marshal(types)
		args += `,"messageTypes":` + string(b)
	}
	args += "}"
	for range 3 {
		if msgs := a.receive(t, args); len(msgs) == 1 {
			return msgs[0]
		}
	}
	t.Fatalf("%s received nothing in 24s, want a message", cmp.Or(agent, a.agent))
	return nil
}

// waitStatus polls aacp_status of requestId until cond holds (20 s at most).
func (a *aproc) waitStatus(t testing.TB, requestID string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := a.ok(t, "aacp_status", `{"requestId":`+jsonString(requestID)+`}`)
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status of %s stayed %v", requestID, st)
		}
		// Wait on the sender's inbox, where ACKs and NACKs arrive, rather
		// than sleep: a receive of a type that never comes returns at
		// waitMs, and sooner the broker reads the ACK meanwhile.
		a.receive(t, `{"waitMs":50,"messageTypes":["CUSTOM_NEVER_SENT"]}`)
	}
}

// str reads a string at a path of nested objects.
func astr(v any, path ...string) string {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// num reads a number at a path of nested objects.
func anum(v any, path ...string) float64 {
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	f, _ := v.(float64)
	return f
}

// operator runs `mcprt aacp ARGS` and returns its stdout, stderr and
// exit code.
func runOperator(t testing.TB, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(wiretest.Build(t), append([]string{"aacp"}, args...)...)
	cmd.Env = wiretest.CleanEnv(env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run mcprt aacp %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// assignment is a valid TASK_ASSIGNMENT payload.
func assignment(task string) string {
	return fmt.Sprintf(`{"taskId":%q,"taskRef":"Task %s","taskDescription":"implement %s","memoryLogPath":"memory/%s.md","executionType":"single-step"}`,
		task, task, task, task)
}

// sendArgsTo are aacp_send arguments.
func sendArgsTo(receiver, messageType, payload string, more ...string) string {
	s := `{"receiver":{"agentId":` + jsonString(receiver) + `},"messageType":` + jsonString(messageType) + `,"payload":` + payload
	for _, m := range more {
		s += "," + m
	}
	return s + "}"
}

// lines splits output into non-empty lines.
func outLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
